"""Media of the tool call running now: the calling runtime's media folder, and saving into it.

Importing this module fills the slot :data:`hermes_core.media.current_store`, so the results of handlers have
somewhere to put their media (the dispatch imports it)."""

from __future__ import annotations

from ..media import KEEP_BYTES, KEEP_HOURS, MAX_MEDIA_BYTES, Media, MediaStore, SavedMedia, find_stores_with
from .toolcontext import current_tool_context

__all__ = ["media_store", "save_media"]


def media_store() -> MediaStore | None:
    """The media folder of the runtime whose tool handler is running, or None outside a tool call."""
    context = current_tool_context()
    if context is None:
        return None
    section = context.section("tool_output")
    return MediaStore(context.home.results_dir, int(section.get("max_media_bytes") or MAX_MEDIA_BYTES),
                      float(section.get("media_keep_hours", KEEP_HOURS)),
                      int(section.get("media_keep_bytes", KEEP_BYTES)))


def save_media(media: Media) -> SavedMedia:
    """Save ``media`` in the calling runtime's results folder now (a handler that needs the path in its text);
    put the returned :class:`SavedMedia` in the :class:`~hermes_core.plugin.ToolResult` to attach it. Raises
    :class:`~hermes_core.errors.MediaError` when it cannot be kept, ``RuntimeError`` outside a tool call."""
    store = media_store()
    if store is None:
        raise RuntimeError("save_media() is only available while a Hermes runtime is calling a tool handler")
    return store.save(media)


find_stores_with(media_store)
