"""README, Makefile and the docs never state a number of packs or distributions that is not the number there is:
packs are added over time, so the pages say "the first-party packs" (a number only where it is right)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
           "ten": 10, "eleven": 11, "twelve": 12}
CLAIM = re.compile(r"\b(" + "|".join(NUMBERS) + r"|\d+) (?:first-party )?(?:tool )?(packs|distributions)\b", re.I)


def test_every_stated_count_of_packs_is_the_number_of_packs():
    packs = len([folder for folder in (ROOT / "hermes_plugins").iterdir() if (folder / "pyproject.toml").is_file()])
    pages = [ROOT / "README.md", ROOT / "Makefile", *sorted((ROOT / "docs").glob("*.md"))]
    wrong = []
    for page in pages:
        for number, noun in CLAIM.findall(page.read_text()):
            stated = int(number) if number.isdigit() else NUMBERS[number.lower()]
            if noun.lower() == "packs" and stated != packs:
                wrong.append(f"{page.name}: {number} {noun} (there are {packs})")
    assert wrong == []


def test_the_readme_does_not_say_both_after_three_commands():
    readme = (ROOT / "README.md").read_text()
    commands = readme.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()

    assert len(commands) > 2 and "Both need" not in readme
