"""Plugins: find candidates in the three sources (discovery), choose which load (selection), read manifests,
load them (declared tools behind lazy handlers, or ``register(ctx)``), and record what each contributed.

May import ``config``, ``tools`` and ``calls`` (to contribute tools and hooks), ``workers`` (plugin code runs
under a deadline), ``backends`` (backends are a contribution) and ``errors``; never ``runtime``, ``mcp`` or
``cli``.
"""
