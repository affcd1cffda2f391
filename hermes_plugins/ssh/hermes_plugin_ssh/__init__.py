"""Hermes ssh pack: the ``ssh`` execution backend (declared in plugin.yaml; imported when a task first uses it)."""
