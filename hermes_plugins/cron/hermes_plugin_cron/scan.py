"""The refusals Hermes Agent makes of a job's prompt when it is created or changed: injection and exfiltration
phrasings, and invisible Unicode (a zero-width joiner inside an emoji is allowed)."""

from __future__ import annotations

import re

__all__ = ["prompt_refusal"]

_SECRET = r"\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)\w*\}?"
_THREATS = [(re.compile(pattern, re.IGNORECASE), key) for pattern, key in (
    (r"ignore\s+(?:\w+\s+)*(?:previous|all|above|prior)\s+(?:\w+\s+)*instructions", "prompt_injection"),
    (r"do\s+not\s+tell\s+the\s+user", "deception_hide"),
    (r"system\s+prompt\s+override", "sys_prompt_override"),
    (r"disregard\s+(your|all|any)\s+(instructions|rules|guidelines)", "disregard_rules"),
    (r"cat\s+[^\n]*(\.env|credentials|\.netrc|\.pgpass)", "read_secrets"),
    (r"authorized_keys", "ssh_backdoor"),
    (r"/etc/sudoers|visudo", "sudoers_mod"),
    (r"rm\s+-rf\s+/", "destructive_root_rm"),
    (rf"curl\s+[^\n]*https?://[^\s\"'`]*{_SECRET}", "exfil_curl_url"),
    (rf"wget\s+[^\n]*https?://[^\s\"'`]*{_SECRET}", "exfil_wget_url"),
    (rf"curl\s+[^\n]*(?:--data(?:-raw|-binary|-urlencode)?|-d|--form|-F)\s+[^\n]*{_SECRET}", "exfil_curl_data"),
    (rf"wget\s+[^\n]*--post-(?:data|file)=[^\n]*{_SECRET}", "exfil_wget_post"),
    (rf"curl\s+[^\n]*(?:-H|--header)\s+[\"']Authorization:\s*(?:Bearer|token)\s+{_SECRET}[\"']",
     "exfil_curl_auth_header"),
)]
#: The GitHub skill's own call, which the authorization-header rule would otherwise refuse.
_GITHUB_AUTH = re.compile(rf"curl\s+[^\n]*(?:-H|--header)\s+[\"']Authorization:\s*token\s+{_SECRET}[\"']"
                          r"\s+[\"']?https://api\.github\.com(?:/|\b)", re.IGNORECASE)
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff\u202a\u202b\u202c\u202d\u202e"
                       "\u2066\u2067\u2068\u2069")
_EMOJI_RANGES = ((0x1F000, 0x1FFFF), (0x2600, 0x27BF), (0x2300, 0x23FF), (0x1F1E6, 0x1F1FF), (0x20E3, 0x20E3))


def prompt_refusal(prompt: str) -> str | None:
    """Why ``prompt`` may not be a job's prompt (Hermes Agent's message), or None."""
    match = _GITHUB_AUTH.search(prompt)
    if match:
        prompt = prompt.replace(match.group(0), "curl https://api.github.com/user")
    for index, char in enumerate(prompt):
        if char in _INVISIBLE and not (char == "\u200d" and _inside_emoji(prompt, index)):
            return f"Blocked: prompt contains invisible unicode U+{ord(char):04X} (possible injection)."
    for pattern, key in _THREATS:
        if pattern.search(prompt):
            return (f"Blocked: prompt matches threat pattern '{key}'. Cron prompts must not contain injection or "
                    "exfiltration payloads.")
    return None


def _inside_emoji(text: str, index: int) -> bool:
    left, right = index - 1, index + 1
    while left >= 0 and text[left] == "\ufe0f":
        left -= 1
    while right < len(text) and text[right] == "\ufe0f":
        right += 1
    return left >= 0 and right < len(text) and _emoji(text[left]) and _emoji(text[right])


def _emoji(char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in _EMOJI_RANGES)
