"""The home and its configuration: ``HermesHome``, ``config.yaml`` (models, typed loading, comment-preserving
edits, the cached plain data of start-up paths), YAML documents and the home's cache files.

Owns everything a runtime reads from or writes to its home folder. Imports nothing of Hermes but
``hermes_core.errors``.
"""
