"""The generated ``hermes_tools`` module through which a script calls Hermes tools."""

from __future__ import annotations

import keyword
from collections.abc import Iterable
from string import Template
from typing import Final

from hermes_core import INTERACTIVE_TOOLS

#: Tools a script may never call: itself, and those that ask the user or a model mid-call.
EXCLUDED_TOOLS: Final = INTERACTIVE_TOOLS | {"execute_code"}

_MODULE: Final = Template('''\
"""Hermes tools for this execute_code run (generated; each call is answered by the parent process)."""

import json as _json
import os as _os
import socket as _socket
import threading as _threading

__all__ = $names

# the tool-call server listens on a socket next to this module
_SOCKET_PATH = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), $socket_name)
_local = _threading.local()


def _call(tool, args):
    conn = getattr(_local, "conn", None)
    if conn is None:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        sock.connect(_SOCKET_PATH)
        conn = _local.conn = sock.makefile("rwb")
    conn.write(_json.dumps({"tool": tool, "args": args}).encode() + b"\\n")
    conn.flush()
    line = conn.readline()
    if not line:
        raise RuntimeError(f"lost the connection to Hermes while calling {tool}")
    reply = _json.loads(line)
    if "error" in reply:
        raise RuntimeError(reply["error"])
    try:
        return _json.loads(reply["result"])
    except ValueError:
        return reply["result"]
$functions''')

_FUNCTION: Final = Template('''

def $name(**kwargs):
    """Call the Hermes tool $name; returns its JSON result parsed, or its text."""
    return _call("$name", kwargs)
''')


def callable_tool_names(available: Iterable[str]) -> list[str]:
    """Names a script may call: the available tools that are valid Python names, less the excluded ones."""
    return sorted(
        name
        for name in set(available) - EXCLUDED_TOOLS
        if name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")
    )


def render_tools_module(tool_names: Iterable[str], socket_name: str) -> str:
    """Source of ``hermes_tools.py``: one keyword-argument function per tool, calling through ``socket_name``
    (a socket in the module's own folder)."""
    names = list(tool_names)
    return _MODULE.substitute(
        names=repr(names),
        socket_name=repr(socket_name),
        functions="".join(_FUNCTION.substitute(name=name) for name in names),
    )
