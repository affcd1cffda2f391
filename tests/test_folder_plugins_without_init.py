"""A folder plugin of a ``plugin.yaml`` and a ``tools.py``, without ``__init__.py``, works with the relative
handlers plugins.md shows: ``.tools:echo`` loads ``tools.py`` from the plugin's folder under its mount name."""

from __future__ import annotations

import json
import sys

from hermes_core import Runtime

MANIFEST = """\
name: {id}
version: 1.0
tools:
  - name: {tool}
    toolset: {id}
    description: Echo the text
    parameters: {{type: object, properties: {{text: {{type: string}}}}}}
    handler: .tools:echo
"""
TOOLS_PY = "import json\nfrom .helpers import shout\n\ndef echo(args, **kwargs):\n" \
           "    return json.dumps({'echo': shout(args.get('text'))})\n"
HELPERS_PY = "def shout(text):\n    return (text or '').upper()\n"


def test_a_declared_folder_plugin_without_init_is_called_through_its_relative_handler(plugins):
    folder = plugins.folder("bare", manifest=MANIFEST.format(id="bare", tool="bare_echo"),
                            files={"tools.py": TOOLS_PY, "helpers.py": HELPERS_PY})
    assert not (folder / "__init__.py").exists()
    runtime = Runtime()
    runtime.load_plugins()

    assert runtime.plugin("bare").state == "declared"
    assert json.loads(runtime.handle_function_call("bare_echo", {"text": "hi"})) == {"echo": "HI"}
    [loaded] = [name for name, module in list(sys.modules.items())
                if getattr(module, "__file__", None) == str(folder / "tools.py")]
    assert loaded.startswith("hermes_plugins.") and loaded.endswith(".tools")  # under the plugin's mount name
    assert not (folder / "__init__.py").exists()  # nothing was written into the plugin's folder
