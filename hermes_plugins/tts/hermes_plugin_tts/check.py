"""The tool's availability check (run by every listing, so it imports nothing of the call path)."""

from __future__ import annotations

from .providers import SpeechError, chosen
from .settings import SettingsError, load_settings

__all__ = ["tts_available"]


def tts_available() -> bool:
    """The ``check_fn`` of text_to_speech: the configured engine (or the default one) can speak."""
    try:
        chosen(load_settings())
    except SettingsError as exc:
        raise SpeechError(str(exc)) from None
    return True
