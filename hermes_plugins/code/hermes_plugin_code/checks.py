"""The availability check of ``execute_code``, apart from the runner: listing tools runs it, and importing the
runner (sockets, the RPC server) would cost every listing what only a run needs."""

from __future__ import annotations

import os


def platform_supported() -> bool:
    """The runner needs POSIX shells and Unix domain sockets."""
    return os.name == "posix"
