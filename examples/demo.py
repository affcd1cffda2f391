"""End-to-end demo: list the installed tools, then let a scripted "model" call them."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import hermes_core


def show(title: str, value: object) -> None:
    print(f"\n== {title}")
    print(value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)[:1500])


def main() -> None:
    runtime = hermes_core.default_runtime()
    show("plugins", [f"{p.id} {p.version} ({p.source}): {p.state}" for p in runtime.plugins])
    definitions = hermes_core.get_tool_definitions()
    show("tools the model sees", [d["function"]["name"] for d in definitions])
    show("legacy toolset file_tools", hermes_core.resolve_toolset("file_tools"))

    workspace = Path(tempfile.mkdtemp(prefix="hermes-demo-"))
    import os

    os.environ["HERMES_WORKSPACE"] = str(workspace)
    calls = [
        {"id": "1", "type": "function",
         "function": {"name": "write_file", "arguments": json.dumps({"path": "notes/hello.txt",
                                                                      "content": "hello\nfrom hermes\n"})}},
        {"id": "2", "type": "function",
         "function": {"name": "read_file", "arguments": json.dumps({"path": "notes/hello.txt"})}},
        {"id": "3", "type": "function",
         "function": {"name": "search_files", "arguments": json.dumps({"pattern": "hermes", "path": "."})}},
        {"id": "4", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "../../etc/passwd"}'}},
        {"id": "5", "type": "function", "function": {"name": "todo", "arguments": "{}"}},
        {"id": "6", "type": "function", "function": {"name": "web_serch", "arguments": "{}"}},
    ]
    for call, result in zip(calls, hermes_core.run_tool_calls(calls), strict=True):
        show(f"call {call['function']['name']} {call['function']['arguments']}", result)


if __name__ == "__main__":
    main()
