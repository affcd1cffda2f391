"""The ten tools on the system's Chromium, against pages served on 127.0.0.1 (``browser.allow_private: true``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

FORM = """<html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<form method="post" action="/done">
  <label>Name <input name="name"></label>
  <label>Email <input name="email" type="email"></label>
  <button type="submit">Send</button>
</form></body></html>"""


def test_navigate_returns_a_snapshot_with_refs_for_the_form_fields(browser, pages) -> None:
    url = pages.add("/form", FORM)

    opened = browser("browser_navigate", url=url)
    snapshot = browser("browser_snapshot")

    assert opened["success"] and opened["title"] == "Sign up"
    for result in (opened, snapshot):
        assert 'textbox "Name" [ref=@e1]' in result["snapshot"]
        assert 'textbox "Email" [ref=@e2]' in result["snapshot"]
        assert 'button "Send" [ref=@e3]' in result["snapshot"]
        assert result["element_count"] == 3


def test_type_and_click_submit_the_form_with_the_typed_value(browser, pages) -> None:
    pages.add("/done", "<title>Thanks</title><p>Thanks</p>")
    browser("browser_navigate", url=pages.add("/form", FORM))

    assert browser("browser_type", ref="@e1", text="first try")["success"]
    assert browser("browser_type", ref="e1", text="Ada Lovelace")["success"]  # cleared first; "@" optional
    clicked = browser("browser_click", ref="@e3")

    assert clicked["success"] and clicked["url"] == pages.url("/done")
    posted = [request for request in pages.received if request.method == "POST"]
    assert [request.body for request in posted] == [b"name=Ada+Lovelace&email="]


def test_back_returns_to_the_previous_page(browser, pages) -> None:
    first = pages.add("/one", "<title>One</title><a href='/two'>next</a>")
    pages.add("/two", "<title>Two</title><p>second</p>")
    browser("browser_navigate", url=first)
    browser("browser_click", ref="@e1")

    back = browser("browser_back")

    assert back == {"success": True, "url": first}


def test_press_enter_submits_the_form(browser, pages) -> None:
    pages.add("/done", "<title>Thanks</title>")
    browser("browser_navigate", url=pages.add("/form", FORM))
    browser("browser_type", ref="@e2", text="ada@example.com")

    pressed = browser("browser_press", key="Enter")

    assert pressed["success"] and pressed["url"] == pages.url("/done")
    assert [r.body for r in pages.received if r.method == "POST"] == [b"name=&email=ada%40example.com"]


def test_get_images_lists_an_image_with_its_alt_text_and_size(browser, pages) -> None:
    png = (Path(__file__).parent / "pixel.png").read_bytes()
    pages.add("/pixel.png", png, content_type="image/png")
    browser("browser_navigate", url=pages.add("/gallery", "<img src='/pixel.png' alt='a red pixel'>"))

    images = browser("browser_get_images")

    assert images["images"] == [{"src": pages.url("/pixel.png"), "alt": "a red pixel", "width": 1, "height": 1}]


def test_console_shows_console_errors_and_uncaught_exceptions(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/noisy", """<script>
        console.error('the widget failed');
        setTimeout(() => { throw new Error('boom at load'); }, 0);
    </script>"""))
    browser("browser_snapshot")  # a round trip: the timer has fired

    console = browser("browser_console", clear=True)

    assert {"type": "error", "text": "the widget failed", "source": "console"} in console["console_messages"]
    assert any("boom at load" in error["message"] for error in console["js_errors"])
    assert browser("browser_console")["total_errors"] == 0  # cleared


def test_console_counts_console_errors_in_total_errors(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/two-errors", """<script>
        console.error('first failure');
        console.error('second failure');
        console.log('not an error');
    </script>"""))

    console = browser("browser_console")

    assert console["js_errors"] == [] and console["total_messages"] == 3
    assert console["total_errors"] == 2  # the two console.error lines, though nothing was thrown


def test_console_expression_evaluates_in_the_page(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/title", "<title>Evaluated</title>"))

    assert browser("browser_console", expression="document.title + '!'")["result"] == "Evaluated!"
    assert "ReferenceError" in browser("browser_console", expression="missing_name")["error"]


def test_scroll_moves_the_page(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/long", "<div style='height:5000px'>tall</div>"))

    assert browser("browser_scroll", direction="down")["success"]
    assert browser("browser_console", expression="window.scrollY")["result"] > 0
    assert "sideways" in browser("browser_scroll", direction="sideways")["error"]  # the schema's enum


def test_vision_saves_a_png_in_the_results_folder(browser, pages, hermes_home) -> None:
    browser("browser_navigate", url=pages.add("/form", FORM))

    seen = browser("browser_vision", question="Is there a form?", annotate=True)

    path = Path(seen["screenshot_path"])
    assert path.parent == hermes_home / "results"
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) == seen["size_bytes"] > 1000
    assert "no vision model is configured" in seen["note"] and "Sign up" in seen["page_text"]
    assert browser("browser_console", expression="document.getElementById('__hermes_labels')")["result"] is None


def test_a_long_snapshot_is_cut_and_says_so(browser, pages, browser_config) -> None:
    browser_config(allow_private=True, max_snapshot_chars=300)
    links = "".join(f"<a href='/p{i}'>link number {i}</a>" for i in range(100))
    browser("browser_navigate", url=pages.add("/links", links))

    snapshot = browser("browser_snapshot")

    assert snapshot["truncated"] is True
    assert len(snapshot["snapshot"]) < 400 and "[snapshot truncated:" in snapshot["snapshot"]


def test_an_unknown_ref_says_to_take_a_snapshot(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/form", FORM))

    clicked = browser("browser_click", ref="@e99")

    assert clicked["success"] is False and "take a browser_snapshot" in clicked["error"]


def test_vision_asks_the_configured_model_about_the_screenshot(browser, pages, hermes_home) -> None:
    # A stand-in for a vision model (none runs here): an OpenAI-compatible endpoint on 127.0.0.1 that records
    # the request and answers one message.
    reply = {"choices": [{"message": {"role": "assistant", "content": "Yes: a sign-up form."}}]}
    pages.add("/v1/chat/completions", json.dumps(reply), content_type="application/json")
    (hermes_home / "config.yaml").write_text(json.dumps({
        "browser": {"allow_private": True},
        "auxiliary": {"vision": {"base_url": pages.url("/v1"), "model": "local-vision", "api_key": "k"}}}))
    browser("browser_navigate", url=pages.add("/form", FORM))

    seen = browser("browser_vision", question="Is there a form?")

    assert seen["analysis"] == "Yes: a sign-up form." and "note" not in seen
    asked = json.loads(next(r.body for r in pages.received if r.path == "/v1/chat/completions"))
    content = asked["messages"][0]["content"]
    assert asked["model"] == "local-vision" and content[0] == {"type": "text", "text": "Is there a form?"}
    image = base64.b64decode(content[1]["image_url"]["url"].removeprefix("data:image/png;base64,"))
    assert image == Path(seen["screenshot_path"]).read_bytes()


def test_back_without_history_says_so(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/only", "<title>only</title>"))

    back = browser("browser_back")

    assert back == {"success": False, "error": "there is no previous page"}


def test_a_script_that_never_returns_is_stopped_at_the_command_timeout(browser, pages, browser_config) -> None:
    browser_config(allow_private=True, command_timeout=2)
    browser("browser_navigate", url=pages.add("/page", "<title>busy</title>"))

    hung = browser("browser_console", expression="while (true) {}")
    after = browser("browser_console", expression="1 + 1")

    assert hung["success"] is False and "did not answer within" in hung["error"]
    assert after["result"] == 2  # the script was terminated: the page answers again
