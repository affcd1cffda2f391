"""The plugin index and installs: reading and building the index, wheel metadata, pip installs and freezes.

May import ``config``, ``plugins`` (manifests) and ``errors``; never ``tools``, ``calls``, ``runtime`` or ``cli``.
"""
