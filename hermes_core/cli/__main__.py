"""``python -m hermes_core.cli``: the same as the ``hermes`` command."""

from . import main

main()
