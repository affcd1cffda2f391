"""Media in tool results: the pictures and sounds a handler returns beside its text.

A tool call always answers with a string. A handler with a picture or a sound returns a :class:`ToolResult` (text
parts and :class:`Media` parts); dispatch saves each medium in the results folder (``<results>/media/``, within a
size cap) and writes a reference line in its place::

    [image: /home/me/.hermes/results/media/20260101-120000-0123456789abcdef.png (image/png, 4321 bytes)]

The line tells a model that cannot see where the file is (OpenAI Chat Completions tool messages are text only);
the reply formats that carry media (Anthropic, OpenAI Responses, Gemini, MCP) find such lines and attach the file:
only a file of this runtime's media folder, with the name Hermes gave it, whose bytes are the type and size the
line says. Media are never inlined in the text.

This module reads the headers of the common image and audio formats (type, and the size of an image) without
decoding anything, for the media folder and for packs that must refuse an image before anything decodes it.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import stat
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from .errors import MediaError

__all__ = [
    "ATTACH_MAX_BYTES",
    "ATTACH_MAX_SIDE",
    "IMAGE_TYPES_ANY_MODEL_READS",
    "MAX_MEDIA_BYTES",
    "Attachment",
    "Media",
    "MediaError",
    "MediaInfo",
    "MediaStore",
    "SavedMedia",
    "ToolResult",
    "current_store",
    "find_stores_with",
    "has_references",
    "media_info",
    "reference_lines",
]

MediaKind = Literal["image", "audio"]

#: The default cap on one medium kept from a tool result (``tool_output.max_media_bytes``).
MAX_MEDIA_BYTES: Final = 20_000_000
#: How long saved media are kept (hours), and how many bytes of them (the oldest go first), unless
#: ``tool_output.media_keep_hours`` / ``media_keep_bytes`` say otherwise (0: no limit).
KEEP_HOURS: Final = 168.0
KEEP_BYTES: Final = 1_000_000_000
#: Seconds between two sweeps of one media folder by one process.
SWEEP_EVERY: Final = 600.0
_last_sweep: dict[str, float] = {}
#: The image types every provider that takes images in tool results accepts (Anthropic's list).
IMAGE_TYPES_ANY_MODEL_READS: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: Larger images are not attached (the path stays in the text): Anthropic refuses an image over 5 MB of base64
#: or 8000 pixels a side, and the whole request with it.
ATTACH_MAX_BYTES: Final = 3_750_000
ATTACH_MAX_SIDE: Final = 8000

_EXTENSIONS: Final = {
    "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/bmp": "bmp",
    "audio/wav": "wav", "audio/ogg": "ogg", "audio/mpeg": "mp3", "audio/flac": "flac",
}
_SUBTYPE = r"[A-Za-z0-9][A-Za-z0-9.+-]{0,63}"
_REFERENCE = re.compile(rf"^\[(image|audio): (.+) \(((?:image|audio)/{_SUBTYPE}), (\d{{1,12}}) bytes\)\]$",
                        re.MULTILINE)
_SAVED_NAME = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{16}\.[a-z0-9]{1,8}$")


# -- reading headers ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MediaInfo:
    """What the first bytes of an image or a sound say: its type and, for an image, its size in pixels."""

    mime_type: str
    width: int | None = None
    height: int | None = None

    @property
    def kind(self) -> MediaKind:
        return "image" if self.mime_type.startswith("image/") else "audio"


def media_info(head: bytes) -> MediaInfo | None:
    """The type (and pixel size) of the image or sound whose file starts with ``head`` (its first 64 KiB are
    plenty), read from its header without decoding it: PNG, JPEG, GIF, WebP, BMP, WAV, Ogg, MP3, FLAC; else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        if len(head) >= 24 and head[12:16] == b"IHDR":
            width, height = struct.unpack(">II", head[16:24])
            return MediaInfo("image/png", width, height)
        return MediaInfo("image/png")
    if head.startswith(b"\xff\xd8\xff"):
        return MediaInfo("image/jpeg", *_jpeg_size(head))
    if head[:6] in (b"GIF87a", b"GIF89a"):
        width, height = struct.unpack("<HH", head[6:10]) if len(head) >= 10 else (None, None)
        return MediaInfo("image/gif", width, height)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return MediaInfo("image/webp", *_webp_size(head))
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return MediaInfo("audio/wav")
    if head[:2] == b"BM" and len(head) >= 26:
        width, height = struct.unpack("<ii", head[18:26])
        return MediaInfo("image/bmp", abs(width), abs(height))
    if head.startswith(b"OggS"):
        return MediaInfo("audio/ogg")
    if head.startswith(b"fLaC"):
        return MediaInfo("audio/flac")
    if head.startswith(b"ID3") or (len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return MediaInfo("audio/mpeg")
    return None


def _jpeg_size(head: bytes) -> tuple[int | None, int | None]:
    """The size in a JPEG's start-of-frame marker, walking the segments from the start."""
    at = 2
    while at + 9 <= len(head):
        if head[at] != 0xFF:
            return None, None
        marker = head[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        (length,) = struct.unpack(">H", head[at + 2:at + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[at + 5:at + 9])
            return width, height
        if length < 2:
            return None, None
        at += 2 + length
    return None, None


def _webp_size(head: bytes) -> tuple[int | None, int | None]:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None, None


# -- what a handler returns --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Media:
    """An image or a sound for a tool result: bytes, base64 text (from an MCP server) or a file, and its MIME type
    (read from the bytes when not given). Build one with :meth:`from_bytes`, :meth:`from_file` or
    :meth:`from_base64`."""

    mime_type: str | None = None
    data: bytes | None = None
    path: Path | None = None
    encoded: str | None = None

    @classmethod
    def from_bytes(cls, data: bytes, mime_type: str | None = None) -> Media:
        info = media_info(data[:65536]) if mime_type is None else None
        return cls(info.mime_type if info is not None else mime_type, data=bytes(data))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], mime_type: str | None = None) -> Media:
        """The file at ``path`` (read when the result is saved)."""
        return cls(mime_type, path=Path(path))

    @classmethod
    def from_base64(cls, text: str, mime_type: str) -> Media:
        """Base64 text (decoded when saved, and only if it fits the cap)."""
        return cls(mime_type, encoded=text)


@dataclass(frozen=True)
class SavedMedia:
    """A medium in the results folder: its file, type and size; :attr:`reference` is its line in a result."""

    path: Path
    mime_type: str
    size: int

    @property
    def kind(self) -> MediaKind:
        return "image" if self.mime_type.startswith("image/") else "audio"

    @property
    def reference(self) -> str:
        return f"[{self.kind}: {self.path} ({self.mime_type}, {self.size} bytes)]"


class ToolResult:
    """What a handler may return instead of a string: text parts (a dict or list is written as JSON) and media,
    in order. The call answers with the text, each medium saved and named by its reference line."""

    __slots__ = ("parts",)

    def __init__(self, *parts: str | dict[str, object] | list[object] | Media | SavedMedia) -> None:
        self.parts = parts

    def __repr__(self) -> str:
        return f"ToolResult{self.parts!r}"

    @property
    def media(self) -> list[Media | SavedMedia]:
        return [part for part in self.parts if isinstance(part, Media | SavedMedia)]

    def render(self, store: MediaStore | None) -> str:
        """The result's text: media saved in ``store`` (described, unsaved, without one)."""
        import json

        lines = []
        for part in self.parts:
            if isinstance(part, str):
                lines.append(part)
            elif isinstance(part, SavedMedia):
                lines.append(part.reference)
            elif isinstance(part, Media):
                lines.append(_kept(store, part))
            else:
                lines.append(json.dumps(part, ensure_ascii=False))
        return "\n".join(lines)


def _no_store() -> MediaStore | None:
    return None


#: Finds the media folder of the tool call running now. A call's context lives above this module: the call path
#: (``hermes_core.calls.media``) fills this slot when it is imported; unfilled, a ToolResult's media are described.
current_store: Callable[[], MediaStore | None] = _no_store


def find_stores_with(finder: Callable[[], MediaStore | None]) -> None:
    """Fill the :data:`current_store` slot (the call path does, once)."""
    global current_store
    current_store = finder


def _kept(store: MediaStore | None, media: Media) -> str:
    if store is None:
        return f"[{media.mime_type or 'a medium'} not saved: no Hermes runtime is running this tool]"
    try:
        return store.save(media).reference
    except MediaError as exc:
        return f"[{exc}]"


# -- the media folder --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attachment:
    """A saved medium a reply may carry: what its reference line says, and its bytes."""

    saved: SavedMedia
    data: bytes
    info: MediaInfo

    @property
    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def attachable_image(self) -> bool:
        """Whether every provider that takes images can be given this one (type, bytes and pixels within their
        limits)."""
        info = self.info
        return (info.mime_type in IMAGE_TYPES_ANY_MODEL_READS and len(self.data) <= ATTACH_MAX_BYTES
                and (info.width or 0) <= ATTACH_MAX_SIDE and (info.height or 0) <= ATTACH_MAX_SIDE)


class MediaStore:
    """``<results>/media/``: where media of tool results are saved, and the only place replies attach from."""

    def __init__(self, results_dir: Path, max_bytes: int = MAX_MEDIA_BYTES, keep_hours: float = KEEP_HOURS,
                 keep_bytes: int = KEEP_BYTES) -> None:
        self.folder = results_dir / "media"
        self.max_bytes = max_bytes
        self.keep_hours, self.keep_bytes = keep_hours, keep_bytes

    def save(self, media: Media) -> SavedMedia:
        """Write ``media`` into the folder; raises :class:`MediaError` when it is too large, not an image or a
        sound, or cannot be read or written."""
        data = self._bytes(media)
        info = media_info(data[:65536])
        mime_type = info.mime_type if info is not None else (media.mime_type or "").lower()
        if not mime_type.startswith(("image/", "audio/")) or not re.fullmatch(rf"(image|audio)/{_SUBTYPE}", mime_type):
            raise MediaError(f"{media.mime_type or 'a medium of unknown type'} not kept: only images and sounds "
                             "are media")
        if self._is_saved(media.path, mime_type, len(data)):
            assert media.path is not None
            return SavedMedia(media.path, mime_type, len(data))
        import uuid  # off the start-up path

        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:16]}.{_EXTENSIONS.get(mime_type, 'bin')}"
        path = self.folder / name
        try:
            with open(path, "xb") as handle:
                handle.write(data)
        except OSError as exc:
            raise MediaError(f"{mime_type} not kept: could not write it in {self.folder} ({exc.strerror or exc})") \
                from None
        key, now = str(self.folder), time.monotonic()
        if now - _last_sweep.get(key, -SWEEP_EVERY) >= SWEEP_EVERY:  # a sweep now and then, not on every save
            _last_sweep[key] = now
            self.sweep(keep=path)
        return SavedMedia(path, mime_type, len(data))

    def sweep(self, keep: Path | None = None) -> int:
        """Delete the media saved more than ``keep_hours`` ago, then the oldest until the rest hold at most
        ``keep_bytes`` (never ``keep``, never a file whose name Hermes did not give); how many were deleted."""
        try:
            found = [(entry.stat(follow_symlinks=False), Path(entry.path)) for entry in os.scandir(self.folder)
                     if _SAVED_NAME.match(entry.name) and entry.is_file(follow_symlinks=False)]
        except OSError:
            return 0
        found.sort(key=lambda item: item[0].st_mtime, reverse=True)  # newest first: they are the ones kept
        oldest = time.time() - self.keep_hours * 3600 if self.keep_hours else None
        kept_bytes, deleted = 0, 0
        for info, path in found:
            kept_bytes += info.st_size
            if path == keep or not ((oldest is not None and info.st_mtime < oldest)
                                    or (self.keep_bytes and kept_bytes > self.keep_bytes)):
                continue
            kept_bytes -= info.st_size
            try:
                path.unlink()
            except OSError:  # another process swept it first, or it cannot be deleted
                continue
            deleted += 1
        return deleted

    def _bytes(self, media: Media) -> bytes:
        what = media.mime_type or "a medium"
        too_large = f"{what} not kept: {{}} bytes is more than the {self.max_bytes} byte limit " \
                    "(tool_output.max_media_bytes)"
        if media.data is not None:
            if len(media.data) > self.max_bytes:
                raise MediaError(too_large.format(len(media.data)))
            return media.data
        if media.encoded is not None:
            if len(media.encoded) * 3 // 4 > self.max_bytes + 2:
                raise MediaError(too_large.format(f"about {len(media.encoded) * 3 // 4}"))
            try:
                return base64.b64decode(media.encoded, validate=True)
            except (binascii.Error, ValueError):
                raise MediaError(f"{what} not kept: its base64 data is not valid") from None
        if media.path is not None:
            try:
                with open(media.path, "rb") as handle:
                    data = handle.read(self.max_bytes + 1)
            except OSError as exc:
                raise MediaError(f"{what} not kept: cannot read {media.path} ({exc.strerror or exc})") from None
            if len(data) > self.max_bytes:
                raise MediaError(too_large.format(f"{media.path} has more than {self.max_bytes}"))
            return data
        raise MediaError(f"{what} not kept: the Media has no data, no base64 text and no file")

    def _is_saved(self, path: Path | None, mime_type: str, size: int) -> bool:
        """Whether ``path`` is already a medium of this folder (saved earlier in the call)."""
        return path is not None and self._checked_path(str(path)) is not None and \
            _EXTENSIONS.get(mime_type, "bin") == path.suffix[1:]

    def _checked_path(self, shown: str) -> Path | None:
        """The file ``shown`` names when it is a medium Hermes saved in this folder (its name, directly in the
        folder, a regular file and not a link), else None."""
        path = Path(shown)
        if not _SAVED_NAME.match(path.name):
            return None
        try:
            if os.path.realpath(path.parent) != os.path.realpath(self.folder):
                return None
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return None
        except (OSError, ValueError):
            return None
        return path

    def attachments(self, text: str, kinds: Iterable[str] = ("image", "audio"),
                    max_bytes: int | None = None) -> list[Attachment]:
        """The media ``text``'s reference lines name that replies may carry, in order: files of this folder
        whose bytes are the type and size their line says (a line that does not check out stays text only). Only
        media of ``kinds`` and at most ``max_bytes`` (else the folder's cap) are read."""
        found = []
        kinds, limit = frozenset(kinds), min(max_bytes or self.max_bytes, self.max_bytes)
        for match in _REFERENCE.finditer(text):
            kind, shown, mime_type, size = match.group(1, 2, 3, 4)
            if kind not in kinds or int(size) > limit or not mime_type.startswith(kind):
                continue
            path = self._checked_path(shown)
            if path is None:
                continue
            data = _read_exactly(path, int(size))
            info = media_info(data[:65536]) if data is not None else None
            if data is None or info is None or info.mime_type != mime_type:
                continue
            found.append(Attachment(SavedMedia(path, mime_type, len(data)), data, info))
        return found


def _read_exactly(path: Path, size: int) -> bytes | None:
    """The file's bytes when it has exactly ``size`` of them (never following a link where the system can tell)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    with open(fd, "rb") as handle:
        data = handle.read(size + 1)
    return data if len(data) == size else None


def has_references(text: str) -> bool:
    """Whether ``text`` may hold a medium's reference line (a cheap test before :meth:`MediaStore.attachments`)."""
    return "[image: " in text or "[audio: " in text


def reference_lines(text: str) -> Iterable[str]:
    """The reference lines in ``text`` (kept when a result too long for its budget is cut)."""
    return (match.group(0) for match in _REFERENCE.finditer(text)) if has_references(text) else ()
