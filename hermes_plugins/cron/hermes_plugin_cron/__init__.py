"""Hermes scheduled jobs: Hermes Agent's ``cronjob`` tool, its ``jobs.json`` store, and a scheduler that runs each
due job exactly once (``hermes cron tick|serve``, ``Runtime.cron``).

A declared-only plugin: the tool lives in ``plugin.yaml`` and this package is imported on first call.
"""
