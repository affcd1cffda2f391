"""Listing skills: 500 user skills (20 KiB bodies, in 10 category folders) scanned without the cache, then listed
from the home's cache; the ratio is the cache's gain in the same run.

Run: python bench/skills.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from hermes_core.skills.catalog import SkillCatalog

SKILLS = 500


def catalogue_seconds(root: Path, cache: Path | None) -> float:
    started = time.perf_counter()
    SkillCatalog([], [(root, "user")], cache)
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        root = home / "skills"
        for index in range(SKILLS):
            skill = root / f"category-{index % 10}" / f"skill-{index}"
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text(f"---\nname: skill-{index}\ndescription: Skill number {index}\n---\n"
                                            + "A line of the body.\n" * 1000)
        scan = min(catalogue_seconds(root, None) for _ in range(3))
        catalogue_seconds(root, home / "cache")  # writes the cache
        cached = min(catalogue_seconds(root, home / "cache") for _ in range(5))
    print(f"{SKILLS} skills: scan {scan * 1000:.1f} ms, from the cache {cached * 1000:.1f} ms "
          f"({scan / cached:.1f}x)")


if __name__ == "__main__":
    main()
