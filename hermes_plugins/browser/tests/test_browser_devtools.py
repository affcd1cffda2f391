"""browser_dialog and browser_cdp on the system's Chromium, against pages served on 127.0.0.1."""

from __future__ import annotations

import time

import pytest

from .conftest import scaled

DIALOGS = """<html><head><title>Dialogs</title></head><body>
<button onclick="alert('saved')">Alert</button>
<button onclick="document.title = confirm('sure?') ? 'yes' : 'no'">Confirm</button>
<button onclick="document.title = 'name:' + prompt('your name?', 'nobody')">Prompt</button>
</body></html>"""


def test_an_alert_is_dismissed_and_a_later_snapshot_works(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/dialogs", DIALOGS))

    clicked = browser("browser_click", ref="@e1")
    [pending] = clicked["pending_dialogs"]
    assert (pending["type"], pending["message"]) == ("alert", "saved")
    blocked = browser("browser_snapshot")
    assert blocked["pending_dialogs"] == [pending] and blocked["snapshot"] == ""

    answered = browser("browser_dialog", action="dismiss")

    assert answered == {"success": True, "action": "dismiss", "dialog": pending}
    snapshot = browser("browser_snapshot")
    assert 'button "Alert" [ref=@e1]' in snapshot["snapshot"] and "pending_dialogs" not in snapshot


@pytest.mark.parametrize(("ref", "action", "text", "title"), [
    ("@e2", "accept", None, "yes"),
    ("@e2", "dismiss", None, "no"),
    ("@e3", "accept", "Ada", "name:Ada"),
    ("@e3", "dismiss", None, "name:null"),
])
def test_confirm_and_prompt_get_the_answer_given(browser, pages, ref, action, text, title) -> None:
    browser("browser_navigate", url=pages.add("/dialogs", DIALOGS))
    browser("browser_click", ref=ref)

    answer = {"prompt_text": text} if text else {}
    assert browser("browser_dialog", action=action, **answer)["success"]

    evaluated = browser("browser_cdp", method="Runtime.evaluate",
                        params={"expression": "document.title", "returnByValue": True})
    assert evaluated["result"]["result"]["value"] == title


def test_an_open_dialog_refuses_other_calls_at_once_instead_of_hanging(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/dialogs", DIALOGS))
    browser("browser_click", ref="@e1")

    refused = browser("browser_click", ref="@e2")

    assert not refused["success"]
    assert "an alert dialog (dialog-1: 'saved') blocks the page: answer it with browser_dialog" in refused["error"]


def test_an_unanswered_dialog_is_dismissed_after_the_timeout_and_reported(browser, browser_config, pages) -> None:
    browser_config(allow_private=True, dialog_timeout=0.5)
    browser("browser_navigate", url=pages.add("/dialogs", DIALOGS))
    browser("browser_click", ref="@e2")
    time.sleep(scaled(1.5))

    snapshot = browser("browser_snapshot")

    assert [(d["type"], d["message"], d["dismissed_after_seconds"]) for d in snapshot["dialogs_dismissed"]] == [
        ("confirm", "sure?", 0.5)]
    assert "pending_dialogs" not in snapshot and snapshot["element_count"] == 3
    assert browser("browser_dialog", action="accept") == {"success": False, "error": "no dialog is open on the page"}


def test_runtime_evaluate_over_cdp_returns_the_value(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/dialogs", DIALOGS))

    result = browser("browser_cdp", method="Runtime.evaluate", params={"expression": "6 * 7", "returnByValue": True})

    assert result == {"success": True, "method": "Runtime.evaluate", "result": {"result": {
        "type": "number", "value": 42, "description": "42"}}}


def test_page_navigate_to_the_metadata_address_is_refused(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/dialogs", DIALOGS))

    refused = browser("browser_cdp", method="Page.navigate", params={"url": "http://169.254.169.254/latest/meta-data/"})

    assert not refused["success"]
    assert "169.254.169.254" in refused["error"] and "never reachable" in refused["error"]
    assert browser("browser_cdp", method="Runtime.evaluate", params={
        "expression": "location.pathname", "returnByValue": True})["result"]["result"]["value"] == "/dialogs"


@pytest.mark.parametrize(("method", "reason"), [
    ("Fetch.disable", "request interception"),
    ("Browser.close", "the whole browser"),
    ("Target.createTarget", "other pages"),
    ("Page.setDownloadBehavior", "write files"),
    ("DOM.setFileInputFiles", "files of this machine"),
])
def test_commands_that_would_undo_the_guards_are_refused_before_the_browser_starts(browser, method, reason) -> None:
    refused = browser("browser_cdp", method=method, params={})

    assert refused == {"success": False, "error": refused["error"]} and reason in refused["error"]
    assert refused["error"].startswith(f"{method} is refused: ")


def test_another_pages_target_id_and_frame_id_are_refused(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/dialogs", DIALOGS))
    own = browser("browser_cdp", method="Target.getTargetInfo")["result"]["targetInfo"]["targetId"]

    assert browser("browser_cdp", method="Runtime.evaluate", params={"expression": "1"}, target_id=own)["success"]
    assert "is not this session's page" in browser("browser_cdp", method="Runtime.evaluate",
                                                   params={"expression": "1"}, target_id="other")["error"]
    assert "frame_id" in browser("browser_cdp", method="Runtime.evaluate", frame_id="f1")["error"]


def test_a_script_that_opens_a_dialog_over_cdp_returns_with_the_dialog(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/dialogs", DIALOGS))

    result = browser("browser_cdp", method="Runtime.evaluate", params={"expression": "prompt('code?')"})

    assert [d["message"] for d in result["pending_dialogs"]] == ["code?"]
    assert browser("browser_dialog", action="accept", prompt_text="1234")["dialog"]["type"] == "prompt"
