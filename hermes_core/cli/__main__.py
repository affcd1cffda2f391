"""``python -m hermes_core.cli``: the same as the ``hermes`` command.

``python -m`` puts the working directory first on ``sys.path``; a repository holding a folder named like a
plugin's package would then shadow the installed plugin. The command never imports from there.
"""

import os
import sys

if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from . import main

main()
