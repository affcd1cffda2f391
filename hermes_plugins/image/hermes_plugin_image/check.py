"""The tool's availability check (run by every listing, so it imports nothing of the call path)."""

from __future__ import annotations

from .settings import SettingsError, load_settings

__all__ = ["ImageUnavailable", "image_available"]


class ImageUnavailable(Exception):
    """The configured backend cannot draw now; the message names what is missing."""


def image_available() -> bool:
    """The ``check_fn`` of image_generate: the configured provider has its key (and FAL its client)."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        raise ImageUnavailable(str(exc)) from None
    if settings.provider == "openai":
        if not settings.openai_api_key:
            raise ImageUnavailable("image_gen.provider is openai but no key is set: set OPENAI_API_KEY or "
                                   "image_gen.openai.api_key (and image_gen.openai.base_url for another server)")
        return True
    from .fal import fal_unavailable

    why = fal_unavailable()
    if why is not None:
        raise ImageUnavailable(why)
    return True
