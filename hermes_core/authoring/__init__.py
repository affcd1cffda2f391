"""Writing plugins: the ``@tool`` decorator, ``plugin.yaml`` compiled from code, the plugin template and the
pytest plugin for plugin authors (re-exported for them by ``hermes_core.plugin``).

May import ``config``, ``plugins``, ``calls`` and ``errors``; the pytest plugin (``testing``) may also import
``runtime``.
"""
