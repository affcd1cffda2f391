"""Hermes: a declarative, entry-point based plugin ecosystem for the tools of AI agents.

This is the host API, the agent loop's side: runtimes, tool definitions, tool calls, formats, views and
policies. Plugin authors import from :mod:`hermes_core.plugin`, execution backend authors from
:mod:`hermes_core.backends`; every error is in :mod:`hermes_core.errors`. The names are listed once, in
``__init__.pyi``, and each is imported on first use.
"""

from . import _public

_public.install()
__getattr__, __dir__, __all__ = _public.attach(__name__, __file__ + "i", _public.MOVED_NAMES)
