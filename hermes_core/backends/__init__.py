"""Execution backends: where ``terminal``, ``process`` and ``execute_code`` run commands (the built-in local
shell, and whatever plugins register with ``ctx.register_execution_backend``).

This is the face for backend authors: its names are listed once, in ``__init__.pyi``. The modules may import
``config``, ``checks`` and ``errors``; never ``tools``, ``calls``, ``plugins`` or ``runtime``.
"""

from .._public import attach

__getattr__, __dir__, __all__ = attach(__name__, __file__ + "i")
