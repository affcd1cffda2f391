"""The availability check of ``execute_code``, apart from the runner: listing tools runs it, and importing the
runner (sockets, the RPC server) would cost every listing what only a run needs."""

from __future__ import annotations

import os


def platform_supported() -> bool | str:
    """The runner needs POSIX shells and Unix domain sockets; when it has them, the note ``hermes plugins doctor``
    shows: how scripts are kept away from the agent on the selected backend."""
    if os.name != "posix":
        return False
    from hermes_core.plugin import tool_context

    from .isolation import describe

    try:
        backend = tool_context().backend_name()
    except RuntimeError:  # checked outside a runtime's tool context
        backend = "local"
    return describe(backend)
