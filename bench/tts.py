"""TTS pack: ``text_to_speech`` of 1 000 characters through Hermes against espeak-ng run directly on the same text.

Run: python bench/tts.py [--rounds N]   (prints figures; asserts nothing; needs espeak-ng, and ffmpeg for Ogg/Opus)

Two comparisons, each path alternating round by round, the medians compared:

- WAV (``format: wav``): ``Runtime.handle_function_call("text_to_speech", ...)`` against ``espeak-ng -w out.wav``
  with the text on stdin (target ≤ 1.2 ×). What Hermes adds: the call path, reading the speech from espeak-ng's
  stdout, rewriting the WAV header with its true length and saving the file in the results folder.
- Ogg/Opus (the default when ffmpeg is installed): the same call against espeak-ng piped into ffmpeg's libopus
  encoder at the same settings. The encoding costs several times what espeak-ng does, so this floor includes it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hermes_plugins" / "tts"))

SOURCE = ("the quick brown fox jumps over a lazy dog while the agent reads its notes aloud clearly and slowly to "
          "everyone listening in the room")
WORDS = SOURCE.split(" ")


def text_of(length: int) -> str:
    sentences, n = [], 0
    while sum(map(len, sentences)) < length:
        sentences.append(" ".join(WORDS[(n + i) % len(WORDS)] for i in range(12)).capitalize() + ". ")
        n += 5
    return "".join(sentences)[:length]


def timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    if not shutil.which("espeak-ng"):
        sys.exit("espeak-ng is not installed")
    from hermes_core import Runtime
    from hermes_core.plugins.discovery import candidate_from_module

    text = text_of(1000)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "home").mkdir()
        runtime = Runtime(home=folder / "home", workspace=folder, entry_points=[])
        runtime.load_candidate(candidate_from_module("hermes_plugin_tts"))

        def hermes(format: str) -> Callable[[], object]:
            def call() -> None:
                (folder / "home" / "config.yaml").write_text(
                    json.dumps({"plugins": {"entries": {"tts": {"settings": {"format": format}}}}}))
                answer = json.loads(runtime.handle_function_call("text_to_speech", {"text": text}).split("\n")[0])
                assert answer["success"], answer

            return call

        def espeak_wav() -> None:
            subprocess.run(["espeak-ng", "-s", "175", "-w", str(folder / "direct.wav"), "--stdin"], input=text.encode(),
                           check=True)

        def espeak_opus() -> None:
            speech = subprocess.run(["espeak-ng", "-s", "175", "--stdout", "--stdin"], input=text.encode(),
                                    capture_output=True, check=True).stdout
            subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", "pipe:0", "-c:a", "libopus", "-b:a",
                            "32k", "-ac", "1", "-f", "ogg", str(folder / "direct.ogg")], input=speech, check=True)

        pairs = [("WAV", hermes("wav"), espeak_wav, "espeak-ng -w")]
        if shutil.which("ffmpeg"):
            pairs.append(("Ogg/Opus", hermes("auto"), espeak_opus, "espeak-ng | ffmpeg libopus"))
        hermes("wav")()  # the first call imports the pack: not measured
        print(f"text_to_speech of {len(text)} characters, median of {rounds} rounds each, paths alternating")
        for name, through_hermes, direct, floor in pairs:
            ours, theirs = [], []
            for _ in range(rounds):
                ours.append(timed(through_hermes))
                theirs.append(timed(direct))
            mine, floor_time = statistics.median(ours), statistics.median(theirs)
            target = "  (target ≤ 1.2 ×)" if name == "WAV" else ""
            print(f"{name:9} Hermes {mine * 1000:8.1f} ms   {floor:27} {floor_time * 1000:8.1f} ms   "
                  f"{mine / floor_time:5.2f} ×{target}")
        runtime.close()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
