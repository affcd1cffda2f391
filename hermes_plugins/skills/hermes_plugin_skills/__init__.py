"""Hermes skills tools: ``skills_list``, ``skill_view`` and ``skill_manage`` (Hermes Agent's names and arguments).

A declared-only plugin: nothing here is imported until one of its tools is called.
"""
