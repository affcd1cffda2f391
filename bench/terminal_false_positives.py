"""False positives of the terminal pack's danger classifier, on its own safe corpora.

The safe commands are the pack's everyday corpus, the safe look-alikes of its danger corpus, and inline
interpreter one-liners an agent runs to compute or inspect something. Prints how many of them would ask
(dangerous) or be refused (hardline), and which.

Run: python bench/terminal_false_positives.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from hermes_plugin_terminal.danger import Level, classify

TESTS = Path(__file__).resolve().parent.parent / "hermes_plugins" / "terminal" / "tests"

#: Inline interpreter one-liners that only compute or print (inline code in other languages still asks).
INLINE: list[str] = [
    "python -c 'print(1)'", "python3 -c 'print(2 ** 64)'", "python3 -c 'import math; print(math.pi)'",
    "python3 -c 'import json; print(json.dumps({\"a\": 1}, indent=2))'",
    "python3 -c 'import datetime; print(datetime.date.today().isoformat())'",
    "python3 -c 'import uuid; print(uuid.uuid4())'", "python3 -c 'import secrets; print(secrets.token_hex(16))'",
    "python3 -c 'import hashlib; print(hashlib.sha256(b\"x\").hexdigest())'",
    "python3 -c 'print(sum(range(100)))'", "python3 -c 'import base64; print(base64.b64encode(b\"hi\"))'",
    "python3 -c 'import sys; print(sys.version)'", "python -c 'import platform; print(platform.system())'",
    "node -e 'console.log(1)'", "perl -e 'print 1'", "ruby -e 'puts 1'",
]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TESTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    everyday = _load("test_terminal_everyday").EVERYDAY
    look_alikes = [command for command, level, _ in _load("test_terminal_danger").CORPUS if level is Level.SAFE]
    total = flagged = 0
    for label, corpus in (("everyday", everyday), ("safe look-alikes", look_alikes), ("inline one-liners", INLINE)):
        asks = [(command, classify(command)) for command in corpus]
        asks = [(command, verdict) for command, verdict in asks if verdict.level is not Level.SAFE]
        total, flagged = total + len(corpus), flagged + len(asks)
        print(f"{label:18} {len(asks):3} of {len(corpus):3} not safe ({100 * len(asks) / len(corpus):.1f} %)")
        for command, verdict in asks:
            print(f"    {verdict.level.value:9} {verdict.rule_key:18} {command}")
    print(f"{'all':18} {flagged:3} of {total:3} not safe ({100 * flagged / total:.1f} %)")


if __name__ == "__main__":
    sys.exit(main())
