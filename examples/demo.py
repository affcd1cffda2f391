"""End-to-end demo: list the installed tools, then let a scripted "model" call them."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import hermes_core


def show(title: str, value: object) -> None:
    print(f"\n== {title}")
    print(value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)[:1500])


def main() -> None:
    workspace = Path(tempfile.mkdtemp(prefix="hermes-demo-"))
    os.chdir(workspace)  # the runtime's workspace: file tools work inside it, the terminal starts there
    runtime = hermes_core.default_runtime()
    show("plugins", [f"{p.id} {p.version} ({p.source}): {p.state}" for p in runtime.plugins])
    definitions = hermes_core.get_tool_definitions()
    show("tools the model sees", [d["function"]["name"] for d in definitions])
    show("legacy toolset file_tools", hermes_core.resolve_toolset("file_tools"))

    script = ("from hermes_tools import read_file, terminal\n"
              "text = read_file(path='notes/hello.txt')['content']\n"
              "print('script saw:', text.splitlines()[0])\n"
              "print('wc says:', terminal(command='wc -l notes/hello.txt')['output'].strip())\n")
    plan = [
        ("write_file", {"path": "notes/hello.txt", "content": "hello\nfrom hermes\n"}),
        ("read_file", {"path": "notes/hello.txt"}),
        ("search_files", {"pattern": "hermes", "path": "."}),
        ("terminal", {"command": "ls -R notes"}),
        ("execute_code", {"code": script}),
        ("read_file", {"path": "../../etc/passwd"}),          # refused: outside the workspace
        ("terminal", {"command": "rm -rf /"}),                # refused: hardline
        ("todo", {}),                                         # the agent loop's job
        ("web_serch", {}),                                    # a typo: closest names suggested
    ]
    calls = [{"id": str(i), "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
             for i, (name, args) in enumerate(plan)]
    for call, result in zip(calls, hermes_core.run_tool_calls(calls), strict=True):
        show(f"call {call['function']['name']} {call['function']['arguments']}", result)


if __name__ == "__main__":
    main()
