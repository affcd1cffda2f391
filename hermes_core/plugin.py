"""What a plugin's code imports: ``PluginContext`` (handed to ``register(ctx)``), ``@tool``, the handler's
``tool_context()`` and ``tool_error()``, annotations, hook markers and the answers a ``pre_tool_call`` hook may
give (``block``, ``approve``, ``modify``). The names are listed once, in ``plugin.pyi``.

Real Hermes Agent plugins need none of this: they use only the ``ctx`` handed to ``register``.
"""

from ._public import attach

__getattr__, __dir__, __all__ = attach(__name__, __file__ + "i")
