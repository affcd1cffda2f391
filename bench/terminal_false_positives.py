"""False positives of the terminal pack's danger classifier, on its own safe corpora.

The safe commands are the pack's everyday corpus, the safe look-alikes of its danger corpus, and inline
interpreter one-liners an agent runs to compute or inspect something. Prints how many of them would ask
(dangerous) or be refused (hardline), and which.

Run: python bench/terminal_false_positives.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PACK = Path(__file__).resolve().parent.parent / "hermes_plugins" / "terminal"
TESTS = PACK / "tests"
sys.path.insert(0, str(PACK))

from hermes_plugin_terminal.danger import Level, classify  # noqa: E402  (the pack is not installed in every venv)


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TESTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    everyday_module = _load("test_terminal_everyday")
    everyday, inline = everyday_module.EVERYDAY, everyday_module.INLINE_ONE_LINERS
    look_alikes = [command for command, level, _ in _load("test_terminal_danger").CORPUS if level is Level.SAFE]
    total = flagged = 0
    for label, corpus in (("everyday", everyday), ("safe look-alikes", look_alikes), ("inline one-liners", inline)):
        asks = [(command, classify(command)) for command in corpus]
        asks = [(command, verdict) for command, verdict in asks if verdict.level is not Level.SAFE]
        total, flagged = total + len(corpus), flagged + len(asks)
        print(f"{label:18} {len(asks):3} of {len(corpus):3} not safe ({100 * len(asks) / len(corpus):.1f} %)")
        for command, verdict in asks:
            print(f"    {verdict.level.value:9} {verdict.rule_key:18} {command}")
    print(f"{'all':18} {flagged:3} of {total:3} not safe ({100 * flagged / total:.1f} %)")


if __name__ == "__main__":
    sys.exit(main())
