"""Tool search quality: how often ``tool_search`` ranks the tool a model wants in its first five hits.

The tools: every tool of the plugin index (``hermes_core/data/index.json``: the first-party packs and the published
third-party plugins) with the parameters of the packs' manifests, and the tools of Hermes Agent 0.19's toolsets
that this project does not ship (names only, as the index holds third-party tools): 200 and more. The queries: 50
requests written as a model writes a ``tool_search`` query, each with the tool it wants.

Run: python bench/search_quality.py [-v]   (prints the top-5 and top-1 rates and the mean reciprocal rank)
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hermes_core.tools.presets import NOT_SHIPPED
from hermes_core.tools.search import ToolIndex

ROOT = Path(__file__).resolve().parent.parent
#: A query a model would write, and the tool it wants.
QUERIES: list[tuple[str, str]] = [
    ("search the web for recent news about a topic", "web_search"),
    ("fetch a web page and convert it to markdown", "web_extract"),
    ("read the contents of a file", "read_file"),
    ("write text to a file on disk", "write_file"),
    ("replace a snippet inside an existing file", "patch"),
    ("find files containing a string", "search_files"),
    ("run a shell command", "terminal"),
    ("check the output of a background process", "process"),
    ("open a URL in the browser", "browser_navigate"),
    ("click a button on the page", "browser_click"),
    ("take a screenshot of the page and describe it", "browser_vision"),
    ("type into a form field", "browser_type"),
    ("answer a javascript alert dialog", "browser_dialog"),
    ("describe what is in this image", "vision_analyze"),
    ("analyze a video clip", "video_analyze"),
    ("generate a picture from a prompt", "image_generate"),
    ("convert text to spoken audio", "text_to_speech"),
    ("keep a todo list for the task", "todo"),
    ("remember a fact for future sessions", "memory"),
    ("search previous conversations", "session_search"),
    ("ask the user a clarifying question", "clarify"),
    ("hand a subtask to a subagent", "delegate_task"),
    ("run a python script", "execute_code"),
    ("schedule a recurring job", "cronjob"),
    ("list available skills", "skills_list"),
    ("run a command on a remote server over ssh", "ssh_terminal"),
    ("copy a file to a remote machine", "ssh_transfer"),
    ("send a text message to a phone number", "send_sms"),
    ("place a phone call", "make_call"),
    ("send a push notification to my phone", "pushary_notify"),
    ("open a pull request on github", "github_app_create_pr"),
    ("comment on a github issue", "github_app_comment_issue"),
    ("search google maps for restaurants nearby", "serpapi_maps_search"),
    ("find cheap flights to tokyo", "serpapi_flights_search"),
    ("look up hotel prices in Lisbon", "serpapi_hotels_search"),
    ("get the current stock quote for AAPL", "get_quote"),
    ("backtest a trading strategy", "run_backtest"),
    ("show the dividend history of a stock", "get_dividends"),
    ("insider trades at a company", "get_insider_trades"),
    ("screen stocks by criteria", "screen_stocks"),
    ("create a new ryzome document", "create_ryzome_document"),
    ("extract structured data from a web page", "extract_structured_data"),
    ("find tweets about a topic", "tweet_explore"),
    ("call a home assistant service to turn on the lights", "ha_call_service"),
    ("create a kanban task", "kanban_create"),
    ("control spotify playback", "spotify_playback"),
    ("react to a whatsapp message", "whatsapp_plusplus"),
    ("control the desktop with mouse and keyboard", "computer_use"),
    ("add a fact to the knowledge graph", "aidememo_fact_add"),
    ("send a direct message on yuanbao", "yb_send_dm"),
]


@dataclass
class Tool:
    """One tool as the index reads it."""

    name: str
    toolset: str
    plugin: str | None
    description: str
    schema: dict[str, Any] = field(default_factory=dict)


def corpus() -> list[Tool]:
    """The plugin index's tools (parameters from the packs' manifests) and Hermes Agent's unshipped ones."""
    parameters: dict[str, dict[str, Any]] = {}
    for manifest in sorted(ROOT.glob("hermes_plugins/*/hermes_plugin_*/plugin.yaml")):
        for tool in yaml.safe_load(manifest.read_text()).get("tools") or ():
            parameters[tool["name"]] = tool.get("parameters") or {}
    tools: dict[str, Tool] = {}
    for plugin in json.loads((ROOT / "hermes_core" / "data" / "index.json").read_text())["plugins"]:
        toolsets = plugin.get("toolsets") or [plugin["id"]]
        for tool in plugin.get("tools") or ():
            tools[tool["name"]] = Tool(tool["name"], toolsets[0], plugin["id"], tool.get("description") or "",
                                       {"parameters": parameters.get(tool["name"], {})})
    for name in sorted(NOT_SHIPPED):
        tools.setdefault(name, Tool(name, name.split("_")[0], None, ""))
    return list(tools.values())


def measure(verbose: bool = False) -> dict[str, float]:
    """Top-5 and top-1 rates and the mean reciprocal rank (of the first 10) over :data:`QUERIES`."""
    tools = corpus()
    index = ToolIndex(tools)
    top5 = top1 = 0
    reciprocal = 0.0
    for query, wanted in QUERIES:
        ranked = [tool.name for tool in index.search(query, 10)]
        rank = ranked.index(wanted) + 1 if wanted in ranked else None
        top5 += rank is not None and rank <= 5
        top1 += rank == 1
        reciprocal += 1 / rank if rank else 0.0
        if verbose and rank != 1:
            print(f"  {query!r}: {wanted} at {rank}; first {ranked[:5]}")
    count = len(QUERIES)
    return {"tools": len(tools), "queries": count, "top5": top5 / count, "top1": top1 / count,
            "mrr": reciprocal / count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="show each query not ranked first")
    figures = measure(parser.parse_args().verbose)
    print(f"{figures['tools']:.0f} tools, {figures['queries']:.0f} queries: expected tool in the top 5 for "
          f"{figures['top5']:.0%} (target ≥ 90 %), first for {figures['top1']:.0%}, MRR {figures['mrr']:.2f}")


if __name__ == "__main__":
    main()
