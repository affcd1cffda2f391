# What execution backend authors import, each name once. `hermes_core/backends/__init__.py` reads this file.
from ..errors import (
    BackendError as BackendError,
)
from ..errors import (
    BackendUnavailable as BackendUnavailable,
)
from ..errors import (
    MissingDirectory as MissingDirectory,
)
from .base import (
    BackendSetup as BackendSetup,
)
from .base import (
    CommandResult as CommandResult,
)
from .base import (
    ExecutionBackend as ExecutionBackend,
)
from .base import (
    InteractiveProcess as InteractiveProcess,
)
from .base import (
    Process as Process,
)
from .base import (
    Staged as Staged,
)
from .output import OutputBuffer as OutputBuffer
from .shell import LocalBackend as LocalBackend
from .shell import ShellBackend as ShellBackend
from .shell import ShellProcess as ShellProcess
