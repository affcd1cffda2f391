# What plugin authors import, each name once. `hermes_core/plugin.py` reads this file.
from .calls.answers import approve as approve
from .calls.answers import block as block
from .calls.answers import modify as modify
from .calls.dispatch import tool_error as tool_error
from .calls.hooks import hookimpl as hookimpl
from .calls.hooks import hookspec as hookspec
from .calls.registry import UNLIMITED as UNLIMITED
from .calls.registry import ToolAnnotations as ToolAnnotations
from .calls.registry import tool_entry as tool_entry
from .calls.toolcontext import ToolContext as ToolContext
from .calls.toolcontext import tool_context as tool_context
from .calls.websearch import WebSearchProvider as WebSearchProvider
from .errors import ToolError as ToolError
from .plugins.context import PluginContext as PluginContext
from .plugins.tool import ToolSpec as ToolSpec
from .plugins.tool import tool as tool
from .plugins.tool import tool_spec as tool_spec
