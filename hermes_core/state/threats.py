"""What Hermes Agent refuses to put in memory (its ``tools/threat_patterns.py``, the strict scope of memory writes):
prompt injection, exfiltration, persistence, hidden instructions and invisible Unicode. Memory is injected into
every future system prompt, so an entry that reads like one of these is refused, and a file that holds one shows
a placeholder in the prompt instead."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["first_threat_message", "scan_for_threats"]

#: Text scanned per entry (the patterns are guards, not archival search).
MAX_SCAN_CHARS: Final = 65_536
_W = r"(?:\w+\s+){0,8}"  # a few filler words between the key words, bounded (no catastrophic backtracking)

_PATTERNS: Final = (
    (rf"ignore\s+{_W}(previous|all|above|prior)\s+{_W}instructions", "prompt_injection"),
    (r"system\s+prompt\s+override", "sys_prompt_override"),
    (rf"disregard\s+{_W}(your|all|any)\s+{_W}(instructions|rules|guidelines)", "disregard_rules"),
    (rf"act\s+as\s+(if|though)\s+{_W}you\s+{_W}(have\s+no|don't\s+have)\s+{_W}(restrictions|limits|rules)",
     "bypass_restrictions"),
    (r"<!--[^>]{0,512}(?:ignore|override|system|secret|hidden)[^>]{0,512}-->", "html_comment_injection"),
    (r"<\s*div\s+style\s*=\s*[\"'][^>]{0,2048}display\s*:\s*none", "hidden_div"),
    (r"translate\s+[^\n]{0,512}\s+into\s+[^\n]{0,512}\s+and\s+(execute|run|eval)", "translate_execute"),
    (rf"do\s+not\s+{_W}tell\s+{_W}the\s+user", "deception_hide"),
    (rf"you\s+are\s+{_W}now\s+(?:a|an|the)\s+", "role_hijack"),
    (rf"pretend\s+{_W}(you\s+are|to\s+be)\s+", "role_pretend"),
    (rf"output\s+{_W}(system|initial)\s+prompt", "leak_system_prompt"),
    (rf"(respond|answer|reply)\s+without\s+{_W}(restrictions|limitations|filters|safety)", "remove_filters"),
    (rf"you\s+have\s+been\s+{_W}(updated|upgraded|patched)\s+to", "fake_update"),
    (r"\bname\s+yourself\s+\w+", "identity_override"),
    (r"register\s+(as\s+)?a?\s*node", "c2_node_registration"),
    (r"(heartbeat|beacon|check[\s\-]?in)\s+(to|with)\s+", "c2_heartbeat"),
    (r"pull\s+(down\s+)?(?:new\s+)?task(?:ing|s)?\b", "c2_task_pull"),
    (r"connect\s+to\s+the\s+network\b", "c2_network_connect"),
    (r"you\s+must\s+(?:\w+\s+){0,3}(register|connect|report|beacon)\b", "forced_action"),
    (r"only\s+use\s+one[\s\-]?liners?\b", "anti_forensic_oneliner"),
    (rf"never\s+{_W}(?:create|write)\s+{_W}(?:script|file)\s+{_W}disk", "anti_forensic_disk"),
    (r"unset\s+\w*(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)\w*", "env_var_unset_agent"),
    (r"\b(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)\b", "known_c2_framework"),
    (r"\bc2\s+(?:server|channel|infrastructure|beacon)\b", "c2_explicit"),
    (r"\bcommand\s+and\s+control\b", "c2_explicit_long"),
    (r"curl\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)", "exfil_curl"),
    (r"wget\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)", "exfil_wget"),
    (r"cat\s+[^\n]{0,2048}(\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)", "read_secrets"),
    (r"(send|post|upload|transmit)\s+[^\n]{0,2048}\s+(to|at)\s+https?://", "send_to_url"),
    (rf"(include|output|print|share)\s+{_W}(conversation|chat\s+history|previous\s+messages|full\s+context|"
     r"entire\s+context)", "context_exfil"),
    (r"authorized_keys", "ssh_backdoor"),
    (r"\$HOME/\.ssh|\~/\.ssh", "ssh_access"),
    (r"\$HOME/\.hermes/\.env|\~/\.hermes/\.env", "hermes_env"),
    (r"(update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|"
     r"\.clinerules)", "agent_config_mod"),
    (r"(update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}\.hermes/(config\.yaml|SOUL\.md)",
     "hermes_config_mod"),
    (r"(?:api[_-]?key|token|secret|password)\s*[=:]\s*[\"'][A-Za-z0-9+/=_-]{20,}", "hardcoded_secret"),
)
_COMPILED: Final = tuple((re.compile(pattern, re.IGNORECASE), name) for pattern, name in _PATTERNS)
#: Zero-width and bidirectional characters used to hide instructions.
INVISIBLE_CHARS: Final = frozenset("\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff"
                                   "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def scan_for_threats(content: str) -> list[str]:
    """The ids of the patterns ``content`` matches (``invisible_unicode_U+XXXX`` for a hidden character)."""
    if not content:
        return []
    content = content[:MAX_SCAN_CHARS]
    found = [f"invisible_unicode_U+{ord(ch):04X}" for ch in sorted(set(content) & INVISIBLE_CHARS)]
    normalised = unicodedata.normalize("NFKC", content)  # full-width letters fold to ASCII before matching
    return found + [name for pattern, name in _COMPILED if pattern.search(normalised)]


def first_threat_message(content: str) -> str | None:
    """Hermes Agent's refusal for the first threat in ``content``, or None when it holds none."""
    findings = scan_for_threats(content)
    if not findings:
        return None
    first = findings[0]
    if first.startswith("invisible_unicode_"):
        return (f"Blocked: content contains invisible unicode character {first.removeprefix('invisible_unicode_')} "
                "(possible injection).")
    return (f"Blocked: content matches threat pattern '{first}'. Content is injected into the system prompt and "
            "must not contain injection or exfiltration payloads.")
