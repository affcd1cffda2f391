# The host API, each name once: the agent loop's side of Hermes. `hermes_core/__init__.py` reads this file.
from ._version import __version__ as __version__
from .calls.approval import (
    ApprovalRequest as ApprovalRequest,
)
from .calls.approval import (
    Approvals as Approvals,
)
from .calls.approval import (
    request_approval as request_approval,
)
from .calls.approval import (
    set_approval_callback as set_approval_callback,
)
from .calls.asking import ModelCallback as ModelCallback
from .calls.asking import ModelReply as ModelReply
from .calls.asking import ModelRequest as ModelRequest
from .calls.asking import ModelToolCall as ModelToolCall
from .calls.asking import UserAnswer as UserAnswer
from .calls.asking import UserCallback as UserCallback
from .calls.asking import UserQuestion as UserQuestion
from .calls.asking import caller_callbacks as caller_callbacks
from .calls.dispatch import AGENT_LOOP_TOOLS as AGENT_LOOP_TOOLS
from .calls.dispatch import INTERACTIVE_TOOLS as INTERACTIVE_TOOLS
from .calls.endpoint import OpenAIEndpoint as OpenAIEndpoint
from .calls.progress import Progress as Progress
from .calls.progress import ProgressCallback as ProgressCallback
from .calls.subagents import DELEGATE_BLOCKED_TOOLS as DELEGATE_BLOCKED_TOOLS
from .calls.subagents import SubAgentResult as SubAgentResult
from .calls.subagents import SubAgentTask as SubAgentTask
from .calls.subagents import routed_models as routed_models
from .calls.turns import turn as turn
from .checks import Availability as Availability
from .config.home import HermesHome as HermesHome
from .config.home import hermes_home as hermes_home
from .config.model import HermesConfig as HermesConfig
from .config.model import load_config as load_config
from .cron import CronScheduler as CronScheduler
from .errors import ConfigError as ConfigError
from .errors import DelegationError as DelegationError
from .errors import HermesError as HermesError
from .errors import NoAnswer as NoAnswer
from .host.views import ToolView as ToolView
from .plugins.manifest import PluginManifest as PluginManifest
from .plugins.records import PluginRecord as PluginRecord
from .runtime import (
    Runtime as Runtime,
)
from .runtime import (
    aanswer_tool_calls as aanswer_tool_calls,
)
from .runtime import (
    ahandle_function_call as ahandle_function_call,
)
from .runtime import (
    answer_tool_calls as answer_tool_calls,
)
from .runtime import (
    arun_tool_calls as arun_tool_calls,
)
from .runtime import (
    default_runtime as default_runtime,
)
from .runtime import (
    enforce_turn_budget as enforce_turn_budget,
)
from .runtime import (
    get_tool_definitions as get_tool_definitions,
)
from .runtime import (
    handle_function_call as handle_function_call,
)
from .runtime import (
    reset_default_runtime as reset_default_runtime,
)
from .runtime import (
    resolve_toolset as resolve_toolset,
)
from .runtime import (
    run_tool_calls as run_tool_calls,
)
from .state.memory import MemoryFiles as MemoryFiles
from .state.providers import MemoryProviders as MemoryProviders
from .state.store import SessionStore as SessionStore
from .state.turns import Turn as Turn
from .tools.formats import FORMATS as FORMATS
from .tools.policies import POLICIES as POLICIES
from .tools.policies import Policy as Policy
from .tools.registry import ToolEntry as ToolEntry
from .tools.registry import ToolRegistry as ToolRegistry
from .tools.toolcalls import ToolCallLike as ToolCallLike
from .tools.toolcalls import ToolReply as ToolReply
from .tools.toolsets import LEGACY_TOOLSETS as LEGACY_TOOLSETS
from .tools.toolsets import PRESETS as PRESETS
from .tools.toolsets import Toolset as Toolset
