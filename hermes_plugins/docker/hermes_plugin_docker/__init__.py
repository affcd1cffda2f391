"""Hermes docker pack: the ``docker`` execution backend (declared in plugin.yaml; imported when a task first uses
it)."""
