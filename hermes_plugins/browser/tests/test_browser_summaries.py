"""``browser_snapshot`` condensed by a model when asked, as Hermes Agent asks: the host passes the user's task
(``user_task``) and ``web.summarize`` is on; the model is the host's (``Runtime.set_model_callback``), the
snapshot taken by the system's Chromium from a page on 127.0.0.1, its full text saved with its path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core import ModelRequest, Runtime

ROWS = "".join(f"<li>Item {n}: a fox figurine in colour number {n}, price {n} euros</li>" for n in range(300))
LONG_PAGE = f"<html><head><title>Shop</title></head><body><h1>Shop</h1><ul>{ROWS}</ul>" \
            "<button>Buy the fox</button></body></html>"


class Model:
    def __init__(self, answer: str | Exception = "FOX SNAPSHOT SUMMARY: button Buy the fox [ref=@e1]") -> None:
        self.answer, self.requests = answer, []  # type: list[ModelRequest]

    def __call__(self, request: ModelRequest) -> str:
        self.requests.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.fixture
def snapshot(browser: Callable[..., dict[str, Any]], hermes_runtime: Runtime, hermes_home: Path,
             pages: Any) -> Callable[..., dict[str, Any]]:
    """``snapshot(user_task=None, **web)``: a full snapshot of the long page under ``web:`` settings ``web``
    (``browser`` skips without Chromium and loads the pack)."""
    url = pages.add("/shop", LONG_PAGE)

    def take(user_task: str | None = None, **web: Any) -> dict[str, Any]:
        (hermes_home / "config.yaml").write_text(json.dumps({"browser": {"allow_private": True}, "web": web}))
        opened = json.loads(hermes_runtime.handle_function_call("browser_navigate", {"url": url}))
        assert opened["success"], opened
        result: dict[str, Any] = json.loads(hermes_runtime.handle_function_call(
            "browser_snapshot", {"full": True}, user_task=user_task))
        assert result["success"], result
        return result

    return take


def test_a_long_snapshot_is_condensed_for_the_users_task(snapshot, hermes_runtime: Runtime) -> None:
    model = Model()
    hermes_runtime.set_model_callback(model)

    result = snapshot("buy the fox figurine", summarize=True, summarize_threshold=1000)

    assert result["summarized"] is True
    assert result["snapshot"].startswith("FOX SNAPSHOT SUMMARY: button Buy the fox [ref=@e1]\n\n[Summary by a model")
    saved = Path(result["full_text_path"])
    assert saved.parent == hermes_runtime.home.results_dir and str(saved) in result["snapshot"]
    whole = saved.read_text(encoding="utf-8")
    assert "Item 299: a fox figurine" in whole and 'button "Buy the fox" [ref=@e1]' in whole
    assert len(whole) > 15_000 and "snapshot truncated" not in whole  # the whole tree, past browser's own cut
    [request] = model.requests
    assert request.purpose == "web_extract"
    assert "The user's task: buy the fox figurine" in request.messages[1]["content"]
    assert "<page>\n" in request.messages[1]["content"] and "Item 150:" in request.messages[1]["content"]
    # the refs are the whole snapshot's: the summary's @e1 clicks the button
    clicked = json.loads(hermes_runtime.handle_function_call("browser_click", {"ref": "@e1"}))
    assert clicked["success"], clicked


def test_not_asked_without_the_users_task_or_with_summaries_off(snapshot, hermes_runtime: Runtime) -> None:
    model = Model()
    hermes_runtime.set_model_callback(model)

    for result in (snapshot(None, summarize=True, summarize_threshold=1000),
                   snapshot("buy the fox figurine", summarize_threshold=1000)):
        assert "summarized" not in result and result["truncated"] is True
        assert "[snapshot truncated:" in result["snapshot"] and len(result["snapshot"]) <= 15_100
    assert model.requests == []


def test_a_snapshot_under_the_threshold_is_only_cut(snapshot, hermes_runtime: Runtime) -> None:
    model = Model()
    hermes_runtime.set_model_callback(model)
    result = snapshot("buy the fox figurine", summarize=True, summarize_threshold=10_000_000)
    assert "summarized" not in result and result["truncated"] is True and "note" not in result
    assert model.requests == []


def test_a_failed_summary_falls_back_to_the_cut_snapshot(snapshot, hermes_runtime: Runtime) -> None:
    hermes_runtime.set_model_callback(Model(RuntimeError("the model is down")))
    result = snapshot("buy the fox figurine", summarize=True, summarize_threshold=1000)
    assert "summarized" not in result and result["truncated"] is True
    assert "[snapshot truncated:" in result["snapshot"]
    assert "the summary failed" in result["note"] and "the snapshot is cut instead" in result["note"]
