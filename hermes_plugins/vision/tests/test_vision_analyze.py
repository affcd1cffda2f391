"""vision_analyze: an image from the workspace, the results folder, an http(s) URL or a data: URL reaches the vision
model as an image part with the question; addresses, paths, sizes and pixel counts the user did not allow are
refused before anything is connected to, read or decoded."""

from __future__ import annotations

import base64
import socket
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import LocalHttp, png_image

RED = png_image(4, 3, (255, 0, 0))


def pixels(png: bytes) -> tuple[int, int, bytes]:
    """Width, height and raw RGB rows of an 8-bit RGB PNG without filters (what png_image writes), decoded."""
    at, idat, size = 8, b"", (0, 0)
    while at < len(png):
        (length,), kind = struct.unpack(">I", png[at:at + 4]), png[at + 4:at + 8]
        data = png[at + 8:at + 8 + length]
        if kind == b"IHDR":
            size = struct.unpack(">II", data[:8])
        elif kind == b"IDAT":
            idat += data
        at += 12 + length
    return size[0], size[1], zlib.decompress(idat)


def test_a_workspace_png_reaches_the_model_as_an_image_part_with_the_question(vision, vision_model,
                                                                             hermes_workspace: Path):
    (hermes_workspace / "chart.png").write_bytes(RED)

    answer = vision("vision_analyze", image_url="chart.png", question="What colour is it?")

    assert answer == {"success": True, "analysis": "I see 1 image(s): a red square."}
    [(mime, sent)] = vision_model.images()
    assert mime == "image/png" and pixels(sent) == pixels(RED) == (4, 3, (b"\0" + b"\xff\0\0" * 4) * 3)
    assert vision_model.question().endswith("What colour is it?")
    assert vision_model.asked[0]["model"] == "local-vision"
    assert vision_model.server.requests[0].headers["Authorization"] == "Bearer test-key"


def test_an_absolute_path_in_the_results_folder_is_read(vision, vision_model, hermes_home: Path):
    saved = hermes_home / "results" / "media" / "20260101-120000-0123456789abcdef.png"
    saved.parent.mkdir(parents=True)
    saved.write_bytes(RED)

    assert vision("vision_analyze", image_url=str(saved), question="?")["success"] is True
    assert vision_model.images() == [("image/png", RED)]


def test_a_data_url_is_read(vision, vision_model):
    url = "data:image/png;base64," + base64.b64encode(RED).decode()

    assert vision("vision_analyze", image_url=url, question="?")["success"] is True
    assert vision_model.images() == [("image/png", RED)]


def test_an_image_url_on_the_local_network_is_fetched_only_when_allowed(vision, vision_model, vision_config,
                                                                       local_http: LocalHttp):
    url = local_http.route("GET", "/red.png", (200, {"Content-Type": "image/png"}, RED))

    refused = vision("vision_analyze", image_url=url, question="?")
    vision_config(allow_private=True)
    allowed = vision("vision_analyze", image_url=url, question="?")

    assert refused["success"] is False and "loopback" in refused["error"]
    assert "web.allow_private_networks: true" in refused["error"]
    assert allowed["success"] is True and vision_model.images() == [("image/png", RED)]
    assert [request.path for request in local_http.requests if request.method == "GET"] == ["/red.png"]


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every address a socket connection is opened to (httpx opens them with socket.create_connection)."""
    opened: list[Any] = []
    real = socket.create_connection

    def record(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        opened.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", record)
    return opened


def test_the_metadata_address_is_refused_before_any_connection(vision, vision_config, vision_model, connections):
    vision_config(allow_private=True)  # even so

    answer = vision("vision_analyze", image_url="http://169.254.169.254/latest/meta-data/", question="?")

    assert answer["success"] is False and "metadata" in answer["error"] and "never reachable" in answer["error"]
    assert connections == [] and vision_model.asked == []


def test_a_redirect_to_the_metadata_address_is_refused_before_following_it(vision, vision_config, vision_model,
                                                                          local_http: LocalHttp, connections):
    vision_config(allow_private=True)
    url = local_http.route("GET", "/moved.png", (302, {"Location": "http://169.254.169.254/latest/meta-data/"}, b""))

    answer = vision("vision_analyze", image_url=url, question="?")

    assert answer["success"] is False and "169.254.169.254" in answer["error"] and "metadata" in answer["error"]
    assert all(address[0] == "127.0.0.1" for address in connections) and vision_model.asked == []


def test_a_20000_by_20000_png_is_refused_from_its_header_without_decoding(vision, vision_model,
                                                                         hermes_workspace: Path):
    bomb = png_image(20000, 20000)
    assert len(bomb) < 2_000_000  # a megabyte on disk, 1.2 GB once decoded
    (hermes_workspace / "bomb.png").write_bytes(bomb)

    answer = vision("vision_analyze", image_url="bomb.png", question="?")

    assert answer["success"] is False and "20000 × 20000 pixels" in answer["error"]
    assert "40,000,000 pixel limit" in answer["error"] and "not decoded" in answer["error"]
    assert vision_model.asked == []


def test_the_pixel_and_byte_limits_are_settings(vision, vision_config, hermes_workspace: Path):
    (hermes_workspace / "chart.png").write_bytes(png_image(100, 100))

    vision_config(max_pixels=9_999)
    by_pixels = vision("vision_analyze", image_url="chart.png", question="?")
    vision_config(max_bytes=10)
    by_bytes = vision("vision_analyze", image_url="chart.png", question="?")

    assert "100 × 100 pixels, more than the 9,999 pixel limit" in by_pixels["error"]
    assert "more than the 10 byte limit" in by_bytes["error"]


def test_a_fetched_image_over_the_byte_limit_is_cut_off(vision, vision_config, local_http: LocalHttp):
    vision_config(allow_private=True, max_bytes=1000)
    url = local_http.route("GET", "/big.png", (200, {"Content-Type": "image/png"}, png_image(300, 300, (1, 2, 3))
                                               + bytes(5000)))

    answer = vision("vision_analyze", image_url=url, question="?")

    assert answer["success"] is False and "larger than the 1000 byte limit" in answer["error"]


@pytest.mark.parametrize("where", ["/etc/hostname", "../outside.png", "link.png", "file:///etc/hostname"])
def test_files_outside_the_workspace_and_results_folder_are_refused(vision, vision_model, hermes_workspace: Path,
                                                                   where: str):
    (hermes_workspace.parent / "outside.png").write_bytes(RED)
    (hermes_workspace / "link.png").symlink_to(hermes_workspace.parent / "outside.png")

    answer = vision("vision_analyze", image_url=where, question="?")

    assert answer["success"] is False and "files are read from the workspace" in answer["error"]
    assert vision_model.asked == []


@pytest.mark.parametrize(("content", "why"), [
    (b"just text", "is not an image Hermes can read (PNG, JPEG, GIF or WebP)"),
    (b"BM" + bytes(16) + struct.pack("<ii", 2, 2) + bytes(40),
     "is image/bmp; vision models read PNG, JPEG, GIF and WebP"),
    (b"\xff\xd8\xff\xe0\0\x10JFIF", "cannot read the image's size from its header"),
])
def test_what_is_not_a_readable_image_is_refused_saying_why(vision, hermes_workspace: Path, content: bytes, why: str):
    (hermes_workspace / "thing.png").write_bytes(content)

    answer = vision("vision_analyze", image_url="thing.png", question="?")

    assert answer["success"] is False and why in answer["error"]


@pytest.mark.parametrize(("url", "why"), [
    ("ftp://example.com/a.png", "ftp: URLs are not allowed"),
    ("data:image/png,plain", "must be base64"),
    ("data:image/png;base64,%%%", "base64 is not valid"),
    ("", "no image or video was named"),
    ("missing.png", "missing.png: no such file"),
])
def test_bad_sources_are_refused_saying_why(vision, url: str, why: str):
    answer = vision("vision_analyze", image_url=url, question="?")

    assert answer["success"] is False and why in answer["error"]


def test_a_failing_model_is_an_error_naming_its_url(vision, vision_model, hermes_workspace: Path):
    vision_model.server.route("POST", "/v1/chat/completions", (503, {}, {"error": {"message": "overloaded"}}))
    (hermes_workspace / "chart.png").write_bytes(RED)

    answer = vision("vision_analyze", image_url="chart.png", question="?")

    assert answer["success"] is False and "HTTP 503" in answer["error"] and vision_model.base_url in answer["error"]


def test_without_a_vision_model_the_tool_is_unavailable_naming_the_settings(hermes_runtime: Runtime, vision,
                                                                           vision_config):
    vision_config(model=False)

    names = {d["function"]["name"] for d in hermes_runtime.get_tool_definitions(quiet_mode=True)}
    answer = hermes_runtime.handle_function_call("vision_analyze", {"image_url": "a.png", "question": "?"})

    assert "vision_analyze" not in names
    assert "unavailable" in answer and "auxiliary.vision.base_url" in answer and "auxiliary.vision.model" in answer


def test_the_toolsets_select_the_tool(hermes_runtime: Runtime, vision):
    for toolset in ("vision", "vision_tools"):
        definitions = hermes_runtime.get_tool_definitions(enabled_toolsets=[toolset], quiet_mode=True)
        assert {d["function"]["name"] for d in definitions} == {"vision_analyze"}
