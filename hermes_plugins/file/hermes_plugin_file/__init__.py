"""Hermes file tools (toolset ``file``): read_file, write_file, patch and search_files, kept in a workspace.

A declared-only plugin: its tools are listed from ``plugin.yaml``, and a module is imported only
when one of its tools is first called.
"""
