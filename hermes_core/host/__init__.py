"""The host API over one tool scope: ``ToolApi`` (definitions and every call path, which a ``Runtime`` and its
filtered views share), ``ToolView`` itself, and the rewriting of definitions that mention tools a scope left out.

May import ``calls`` (a scope's calls run through the pipeline), ``tools`` and ``errors``.
"""
