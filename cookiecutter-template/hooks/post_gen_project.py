"""Tidy the new project (cookiecutter runs this in it): drop what was not asked for, and byte-code caches."""

from __future__ import annotations

import shutil
from pathlib import Path

WITH_HOOK = "{{ cookiecutter.with_hook }}" == "True"
HOOK_FILES = ("{{ cookiecutter.package_name }}/hooks.py", "tests/test_hooks.py")
WITH_SKILL = "{{ cookiecutter.with_skill }}" == "True"
SKILL_FILES = ("{{ cookiecutter.package_name }}/skills", "tests/test_skills.py")
# pip compiles the .py files of the template it installs inside hermes-tools; their caches are copied along
CACHES = ("{{ cookiecutter.package_name }}/__pycache__", "tests/__pycache__")

if not WITH_HOOK:
    for name in HOOK_FILES:
        Path(name).unlink(missing_ok=True)
if not WITH_SKILL:
    shutil.rmtree(SKILL_FILES[0], ignore_errors=True)
    Path(SKILL_FILES[1]).unlink(missing_ok=True)
for name in CACHES:
    shutil.rmtree(name, ignore_errors=True)
