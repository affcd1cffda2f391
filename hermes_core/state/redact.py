"""Secrets masked before anything is stored: API keys by their vendors' prefixes, tokens in ``KEY=value``
assignments, JSON fields and authorisation headers, passwords in connection URLs, JWTs and private keys (the
classes Hermes Agent's ``agent/redact.py`` masks in tool output, ``security.redact_secrets``)."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MASK", "redact_secrets"]

MASK: Final = "«redacted»"

_PREFIXES = (
    r"sk-[A-Za-z0-9_-]{10,}", r"sk_(?:live|test)_[A-Za-z0-9]{10,}", r"rk_live_[A-Za-z0-9]{10,}",
    r"gh[pousr]_[A-Za-z0-9]{10,}", r"github_pat_[A-Za-z0-9_]{10,}", r"glpat-[A-Za-z0-9_-]{10,}",
    r"xox[baprs]-[A-Za-z0-9-]{10,}", r"xapp-\d+-[A-Za-z0-9-]{10,}", r"AIza[A-Za-z0-9_-]{30,}",
    r"AKIA[A-Z0-9]{16}", r"SG\.[A-Za-z0-9_-]{10,}", r"hf_[A-Za-z0-9]{10,}", r"r8_[A-Za-z0-9]{10,}",
    r"npm_[A-Za-z0-9]{10,}", r"pypi-[A-Za-z0-9_-]{10,}", r"dop_v1_[A-Za-z0-9]{10,}", r"pplx-[A-Za-z0-9]{10,}",
    r"tvly-[A-Za-z0-9]{10,}", r"gsk_[A-Za-z0-9]{10,}", r"xai-[A-Za-z0-9]{30,}", r"fal_[A-Za-z0-9_-]{10,}",
    r"mem0_[A-Za-z0-9]{10,}", r"ntn_[A-Za-z0-9]{10,}",
)
_PREFIX_RE = re.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(_PREFIXES) + r")(?![A-Za-z0-9_-])")
_PRIVATE_KEY_RE = re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----")
_JWT_RE = re.compile(r"\beyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}")
_ENV_RE = re.compile(r"\b([A-Z0-9_]{0,50}(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)[A-Z0-9_]{0,50})"
                     r"(\s*=\s*)(['\"]?)([^\s'\"]+)\3")
_JSON_RE = re.compile(r'("(?:api_?key|apiKey|token|secret|password|access_token|refresh_token|auth_token|'
                      r'client_secret|private_key)")(\s*:\s*)"([^"]+)"', re.IGNORECASE)
_HEADER_RE = re.compile(r"((?:Proxy-)?Authorization:\s*(?:[A-Za-z][\w.+-]*\s+)?)([^\s\"']+)", re.IGNORECASE)
_KEY_HEADER_RE = re.compile(r"((?:x-api-key|x-goog-api-key|api-key|x-auth-token|x-access-token)\s*:\s*)"
                            r"([^\s\"']+)", re.IGNORECASE)
_URL_PASSWORD_RE = re.compile(r"\b([a-z][a-z0-9+.-]*://[^\s:@/]+:)([^\s@/]+)(@)", re.IGNORECASE)


def redact_secrets(text: str) -> str:
    """``text`` with every secret it recognises replaced by a mask (a vendor token keeps its prefix)."""
    if not text:
        return text
    text = _PRIVATE_KEY_RE.sub(MASK, text)
    text = _PREFIX_RE.sub(lambda m: f"«redacted:{_label(m.group(1))}…»", text)
    text = _JWT_RE.sub(MASK, text)
    text = _ENV_RE.sub(lambda m: m.group(1) + m.group(2) + m.group(3) + _masked(m.group(4)) + m.group(3), text)
    text = _JSON_RE.sub(lambda m: f'{m.group(1)}{m.group(2)}"{_masked(m.group(3))}"', text)
    text = _HEADER_RE.sub(lambda m: m.group(1) + _masked(m.group(2)), text)
    text = _KEY_HEADER_RE.sub(lambda m: m.group(1) + _masked(m.group(2)), text)
    return _URL_PASSWORD_RE.sub(lambda m: m.group(1) + MASK + m.group(3), text)


def _label(token: str) -> str:
    """What of a vendor token is kept to say what it was: its prefix up to the first separator, or four letters."""
    head = re.match(r"[A-Za-z0-9]{1,8}[-_.]", token)
    return head.group(0) if head else token[:4]


def _masked(value: str) -> str:
    """A value already masked (or a variable it names) stays as it is."""
    return value if value.startswith(("«redacted", "$", "os.environ", "os.getenv", "process.env")) else MASK
