"""The agent's own state, kept in the home as Hermes Agent keeps it: the session store (``state.db``: sessions,
messages and their full-text index), the persistent memory (``memories/MEMORY.md`` and ``USER.md``), each
session's todo list, and the memory providers plugins register.

May import ``config`` and ``errors`` only: the call path, the plugins and the hosts build on it.
"""
