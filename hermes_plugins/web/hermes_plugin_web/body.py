"""Reading a response body within a byte limit that also holds while it is decompressed.

httpx decodes a compressed chunk whole, so one 64 KiB chunk of a gzip bomb becomes some 64 MB before
any limit can look at it. Here the raw bytes go through zlib with ``max_length``: no more than the limit
(plus one byte, to tell "exactly the limit" from "over it") is ever produced.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

#: What we accept (sent as Accept-Encoding) and the zlib window bits that decode it.
ENCODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
ACCEPT_ENCODING = "gzip, deflate"


class BodyTooLarge(Exception):
    """The decoded body is larger than the limit."""


class UnsupportedEncoding(Exception):
    """A Content-Encoding we did not ask for and cannot decode within a limit."""


def read_limited(raw: Iterable[bytes], content_encoding: str, limit: int) -> bytes:
    """The decoded body of ``raw`` chunks, never holding more than ``limit + 1`` decoded bytes."""
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip().lower() not in ("", "identity")]
    if len(codings) > 1 or (codings and codings[0] not in ENCODINGS):
        raise UnsupportedEncoding(content_encoding)
    decoder = _Decoder(ENCODINGS[codings[0]]) if codings else None
    body = bytearray()
    for chunk in raw:
        body += decoder.decode(chunk, limit + 1 - len(body)) if decoder else chunk
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)


class _Decoder:
    """gzip or deflate, with a bound on what one call may produce."""

    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._zlib = zlib.decompressobj(wbits)
        self._started = False

    def decode(self, data: bytes, max_length: int) -> bytes:
        try:
            out = self._zlib.decompress(data, max_length)
        except zlib.error:
            if self._started or self._wbits != zlib.MAX_WBITS:
                raise
            # "deflate" is often sent raw, without the zlib header (as browsers and httpx tolerate).
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._zlib.decompress(data, max_length)
        self._started = True
        if self._zlib.unconsumed_tail:  # stopped at max_length with input left: over the limit
            raise BodyTooLarge
        return out
