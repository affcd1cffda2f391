"""``web.summarize``: long pages condensed by a model (the host's model callback, or ``auxiliary.web_extract`` on a
stand-in endpoint on 127.0.0.1), the full text saved with its path; off by default, and a failure falls back to
the cut page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_plugin_web.extract import web_extract

from hermes_core import ModelRequest, Runtime
from hermes_core.authoring.testing import HttpRequest, LocalHttp

LONG = "\n".join(f"Line {n}: the fox report continues with fact number {n}." for n in range(400))  # ~21 000


def configure(home: Path, **web: Any) -> None:
    (home / "config.yaml").write_text(json.dumps({"web": {"allow_private_networks": True, **web}}))


class Model:
    def __init__(self, answer: Any = "FOX SUMMARY") -> None:
        self.answer, self.requests = answer, []

    def __call__(self, request: ModelRequest) -> Any:
        self.requests.append(request)
        return self.answer() if callable(self.answer) else self.answer


def extract(url: str) -> dict[str, Any]:
    return json.loads(web_extract({"url": url}))


def test_off_by_default(local_server, hermes_home: Path, hermes_runtime: Runtime):
    configure(hermes_home)
    model = Model()
    hermes_runtime.set_model_callback(model)
    page = extract(local_server.add("/long.txt", LONG, content_type="text/plain"))
    assert "summarized" not in page and "[Cut:" in page["content"] and model.requests == []


def test_a_long_page_is_summarised_and_its_full_text_kept(local_server, hermes_home: Path, hermes_runtime: Runtime):
    configure(hermes_home, summarize=True, summarize_threshold=10_000)
    model = Model()
    hermes_runtime.set_model_callback(model)
    page = extract(local_server.add("/long.txt", LONG, content_type="text/plain"))
    assert page["summarized"] is True and page["content"].startswith("FOX SUMMARY\n\n[Summary by a model")
    saved = Path(page["full_text_path"])
    assert saved.read_text(encoding="utf-8") == LONG and str(saved) in page["content"]
    assert saved.parent == hermes_runtime.home.results_dir
    [request] = model.requests
    assert request.purpose == "web_extract" and "<page>\nLine 0:" in request.messages[1]["content"]
    short = extract(local_server.add("/short.txt", "a short page", content_type="text/plain"))
    assert short["content"] == "a short page" and len(model.requests) == 1  # under the threshold: as it is


def test_the_auxiliary_web_extract_model_comes_first(local_server, local_http: LocalHttp, hermes_home: Path,
                                                     hermes_runtime: Runtime):
    sent: list[dict[str, Any]] = []

    def answer(request: HttpRequest) -> tuple[int, dict[str, str], bytes]:
        sent.append(request.json())
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "AUX SUMMARY"}}]}
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    local_http.route("POST", "/v1/chat/completions", answer)
    (hermes_home / "config.yaml").write_text(json.dumps({
        "web": {"allow_private_networks": True, "summarize": True, "summarize_threshold": 10_000},
        "auxiliary": {"web_extract": {"base_url": local_http.url("/v1"), "model": "condenser", "api_key": "k"}}}))
    model = Model()
    hermes_runtime.set_model_callback(model)
    page = extract(local_server.add("/long.txt", LONG, content_type="text/plain"))
    assert page["content"].startswith("AUX SUMMARY") and model.requests == []
    assert [body["model"] for body in sent] == ["condenser"]


def test_a_failed_summary_falls_back_to_the_cut_page(local_server, hermes_home: Path, hermes_runtime: Runtime):
    configure(hermes_home, summarize=True, summarize_threshold=10_000)
    hermes_runtime.set_model_callback(Model(lambda: 1 / 0))
    page = extract(local_server.add("/long.txt", LONG, content_type="text/plain"))
    assert "summarized" not in page and "[Cut:" in page["content"]
    assert "the summary failed" in page["note"]
