"""web_extract is bounded whatever the server sends: one deadline for the whole fetch, a byte limit that
holds while decompressing, and a bounded HTML to Markdown conversion.

Tests that would hang on unbounded code run web_extract in a child process with a timeout of its own.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zlib
from typing import Any

from hermes_plugin_web.extract import web_extract

from hermes_core.authoring.testing import scaled_timeout

EXTRACT_IN_CHILD = """
import json, sys, tracemalloc
from hermes_core import Runtime
from hermes_plugin_web.extract import web_extract
tracemalloc.start()
with Runtime(entry_points=()).tool_context("web").activate():  # the runtime of the test's HERMES_HOME
    result = json.loads(web_extract({"url": sys.argv[1]}))
print(json.dumps({"result": result, "peak_bytes": tracemalloc.get_traced_memory()[1]}))
"""


def extract_in_child(url: str, timeout: float = 60) -> dict[str, Any]:
    """``web_extract(url)`` in a child process (the same HERMES_HOME): its result and its peak allocation."""
    child = subprocess.run([sys.executable, "-c", EXTRACT_IN_CHILD, url], capture_output=True, text=True,
                           timeout=scaled_timeout(timeout), env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == 0, child.stderr
    return json.loads(child.stdout)


def extract(url: str) -> dict[str, Any]:
    return json.loads(web_extract({"url": url}))


def big_table(rows: int) -> str:
    cells = "".join(f"<tr><td>cell {i} a</td><td>cell {i} b</td><td>value {i}</td></tr>" for i in range(rows))
    return f"<html><head><title>T</title></head><body><article><h1>Big</h1><table>{cells}</table></article></body>"


def test_headers_sent_one_byte_at_a_time_cannot_outlast_the_deadline(local_server, web_config) -> None:
    web_config(allow_private_networks=True, timeout=1)
    padding = {"X-Padding": "p" * 400}  # 40 s of headers at one byte every 0.1 s
    url = local_server.add("/drip", "never finished", content_type="text/plain", headers=padding, drip=0.1)

    assert extract_in_child(url, timeout=20)["result"] == {"error": f"timed out after 1 s fetching {url}"}


def test_a_gzip_bomb_is_refused_without_being_decompressed_whole(local_server, web_config) -> None:
    web_config(allow_private_networks=True, max_bytes=1_000_000)
    bomb = gzip.compress(bytes(200_000_000), compresslevel=9)  # 200 MB of zeros in some 200 kB
    url = local_server.add("/bomb.txt", bomb, content_type="text/plain", headers={"Content-Encoding": "gzip"})

    child = extract_in_child(url)

    assert "larger than the 1000000 byte limit" in child["result"]["error"]
    assert child["peak_bytes"] < 20_000_000


def test_gzip_and_deflate_bodies_within_the_limit_are_decoded(local_server, web_config) -> None:
    web_config(allow_private_networks=True, max_bytes=1000)
    text = "z" * 1000
    raw_deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    bodies = {"gzip": gzip.compress(text.encode()), "deflate": zlib.compress(text.encode()),
              "raw-deflate": raw_deflate.compress(text.encode()) + raw_deflate.flush()}
    for name, body in bodies.items():
        coding = "gzip" if name == "gzip" else "deflate"
        url = local_server.add(f"/{name}.txt", body, content_type="text/plain", headers={"Content-Encoding": coding})
        assert extract(url)["content"] == text, name


def test_a_decoded_body_one_byte_over_the_limit_is_refused(local_server, web_config) -> None:
    web_config(allow_private_networks=True, max_bytes=1000)
    url = local_server.add("/over.txt", gzip.compress(b"z" * 1001), content_type="text/plain",
                           headers={"Content-Encoding": "gzip"})

    assert "larger than the 1000 byte limit" in extract(url)["error"]


def test_an_encoding_that_was_not_asked_for_is_refused(local_server, web_config) -> None:
    web_config(allow_private_networks=True)
    url = local_server.add("/br.txt", b"\x0b\x02\x80hello\x03", content_type="text/plain",
                           headers={"Content-Encoding": "br"})

    assert extract(url)["error"] == (f"{url} sent Content-Encoding 'br', which web_extract did not ask for and "
                                     "does not decode (it accepts gzip and deflate)")
    assert local_server.requests[0].headers["Accept-Encoding"] == "gzip, deflate"


def test_a_conversion_that_runs_out_of_time_is_stopped(local_server, web_config) -> None:
    web_config(allow_private_networks=True, convert_timeout=0.5)
    url = local_server.add("/table", big_table(30_000))

    result = extract_in_child(url)["result"]

    assert result == {"error": f"converting {url} to Markdown took longer than 0.5 s (plugin setting "
                               "convert_timeout), and was stopped"}


def test_a_page_over_the_conversion_cap_is_cut_and_the_result_says_so(local_server, web_config) -> None:
    web_config(allow_private_networks=True, max_convert_bytes=20_000)
    page = big_table(2_000)
    url = local_server.add("/table", page)

    result = extract(url)

    assert "cell 10 a" in result["content"] and "cell 1999 a" not in result["content"]
    assert result["note"] == (f"the page has {len(page)} bytes; only its first 20000 were converted "
                              "(plugin setting max_convert_bytes)")
