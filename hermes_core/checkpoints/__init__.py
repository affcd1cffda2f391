"""Checkpoints: snapshots of the workspace in a shadow git store under ``$HERMES_HOME/checkpoints/``, taken before
the first file-changing tool call of a turn, and listed, compared and restored (``runtime.checkpoints``,
``hermes checkpoints``).

May import ``config``, ``checks`` and ``errors``; the dispatch pipeline (``calls``) reaches it through the runtime.
"""
