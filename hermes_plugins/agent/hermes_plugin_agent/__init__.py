"""Hermes agent-loop tools: the schemas of todo, memory, session_search, delegate_task and clarify.

The agent loop intercepts these calls because they need its state or its user; the core never
dispatches them. A declared-only plugin: nothing here is imported unless a call slips through.
"""
