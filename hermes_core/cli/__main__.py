"""``python -m hermes_core.cli``: the same as the ``hermes`` command.

The package's ``__init__`` has already taken the working directory off ``sys.path`` (it runs first), so a
repository holding ``click.py`` or a folder named like a plugin's package shadows nothing.
"""

from . import main

main()
