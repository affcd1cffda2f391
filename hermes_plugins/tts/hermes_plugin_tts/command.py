"""Command providers (Hermes Agent's ``tts.providers.<name>: {type: command, command: ...}``): any local program
that speaks, run through the shell. The text goes in a UTF-8 file; the command writes the audio to a file; both are
in a fresh temporary folder. Placeholders ``{input_path}`` (``{text_path}``), ``{output_path}``, ``{format}``,
``{voice}``, ``{model}`` and ``{speed}`` are quoted for where they stand (bare, in single or in double quotes);
``{{`` and ``}}`` are literal braces. The command is the user's own configuration; the model chooses only the text,
which never reaches the command line."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

__all__ = ["FORMATS", "command_config", "render", "run_command"]

#: The formats a command may write, and their MIME types.
FORMATS: Final = {"mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "flac": "audio/flac"}
#: Largest audio file read back, in bytes.
MAX_AUDIO_BYTES: Final = 200 * 1024 * 1024
_PLACEHOLDER: Final = re.compile(r"\{\{|\}\}|\{([a-z_]+)\}")


class CommandError(Exception):
    """The command is misconfigured or failed; the message says why."""


def command_config(name: str, tts: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The command provider ``name`` declares (``tts.providers.<name>``, else ``tts.<name>``), or None."""
    providers = tts.get("providers")
    section = providers.get(name) if isinstance(providers, dict) else None
    if not isinstance(section, dict):
        section = tts.get(name)
    if not isinstance(section, dict) or str(section.get("type") or "command").strip().lower() != "command":
        return None
    return section if isinstance(section.get("command"), str) and section["command"].strip() else None


def render(template: str, values: dict[str, str]) -> str:
    """``template`` with its placeholders replaced, each value quoted for the quotes it stands in."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0) in ("{{", "}}"):
            return match.group(0)[0]
        key = match.group(1)
        if key not in values:
            raise CommandError(f"unknown placeholder {{{key}}} in the command; the placeholders are "
                               + ", ".join(f"{{{name}}}" for name in values))
        return _quoted(values[key], _context(template, match.start()))

    return _PLACEHOLDER.sub(replace, template)


def _context(template: str, position: int) -> str:
    """The quote (``'``, ``"``) open at ``position`` of a POSIX shell command, or ``""``."""
    quote, escaped = "", False
    for char in template[:position]:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote and char == quote:
            quote = ""
        elif not quote and char in "'\"":
            quote = char
    return quote


def _quoted(value: str, context: str) -> str:
    if context == "'":
        return value.replace("'", "'\\''")
    if context == '"':
        return re.sub(r'([\\"$`])', r"\\\1", value)
    return shlex.quote(value)


def run_command(name: str, config: dict[str, Any], text: str, speed: float, timeout: float) -> tuple[bytes, str]:
    """Speak ``text`` with the command provider ``name``: the audio it wrote, and its MIME type."""
    output_format = str(config.get("output_format") or "mp3").strip().lower()
    if output_format not in FORMATS:
        raise CommandError(f"tts.providers.{name}.output_format must be one of {', '.join(FORMATS)}, not "
                           f"{output_format!r}")
    timeout = float(config.get("timeout") or timeout)
    with tempfile.TemporaryDirectory(prefix="hermes-tts-") as folder:
        text_path, output = Path(folder) / "input.txt", Path(folder) / f"speech.{output_format}"
        text_path.write_text(text, encoding="utf-8")
        command = render(str(config["command"]), {
            "input_path": str(text_path), "text_path": str(text_path), "output_path": str(output),
            "format": output_format, "voice": str(config.get("voice") or ""), "model": str(config.get("model") or ""),
            "speed": str(config.get("speed") or speed)})
        process = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, cwd=folder, start_new_session=sys.platform != "win32")
        try:
            _, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            raise CommandError(f"TTS provider '{name}' timed out after {timeout:g}s") from None
        if process.returncode != 0:
            detail = stderr.decode("utf-8", "replace").strip()[-300:] or f"exit status {process.returncode}"
            raise CommandError(f"TTS provider '{name}' failed: {detail}")
        if not output.is_file() or output.stat().st_size == 0:
            raise CommandError(f"TTS provider '{name}' wrote no audio to {{output_path}}")
        if output.stat().st_size > MAX_AUDIO_BYTES:
            raise CommandError(f"TTS provider '{name}' wrote more than {MAX_AUDIO_BYTES:,} bytes of audio")
        return output.read_bytes(), FORMATS[output_format]


def _kill(process: subprocess.Popen[bytes]) -> None:
    """End the shell and everything it started."""
    try:
        if sys.platform != "win32":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except OSError:
        pass
    process.wait()
