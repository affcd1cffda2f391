"""Render the plugin template (``cookiecutter-template/``) into a new plugin project, with cookiecutter."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from packaging.version import Version

from .._version import __version__
from ..errors import ScaffoldError
from ..origin import ci_requirement

__all__ = ["ScaffoldError", "naming_problems", "render", "requires_hermes", "template_dir"]


def template_dir() -> Path:
    """The template: inside the installed package (``hermes_core/_template``), else next to it in a checkout."""
    package = Path(__file__).resolve().parent.parent  # hermes_core: the template sits beside (or in) it
    for candidate in (package / "_template", package.parent / "cookiecutter-template"):
        if (candidate / "cookiecutter.json").is_file():
            return candidate
    raise ScaffoldError("the plugin template is missing from this hermes-tools installation; reinstall hermes-tools")


def naming_problems(answers: Mapping[str, Any], template: Path | None = None) -> list[str]:
    """What is wrong with some template answers, one sentence each (empty when nothing is)."""
    return _rules(template or template_dir()).problems(answers)


@cache
def _rules(template: Path) -> ModuleType:
    # The rules live in the template's pre-generation hook, so that `cookiecutter` run on the template
    # directly refuses exactly what `hermes plugins new` refuses. Importing it runs only definitions.
    path = template / "hooks" / "pre_gen_project.py"
    spec = importlib.util.spec_from_file_location("_hermes_template_naming_rules", path)
    if spec is None or spec.loader is None:
        raise ScaffoldError(f"{path}: cannot load the template's naming rules")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def requires_hermes() -> str:
    """The hermes-tools requirement of a new plugin: this release's minor version or newer."""
    major, minor, *_ = (*Version(__version__).release, 0)
    return f">={major}.{minor}"


def render(name: str, output_dir: Path | str = ".", *, no_input: bool = False, toolset: str | None = None,
           with_hook: bool = False, with_skill: bool = False, overwrite: bool = False,
           context: Mapping[str, Any] | None = None,
           template: Path | None = None) -> Path:
    """Render the plugin project ``name`` into ``output_dir`` and return its directory.

    ``toolset``, ``with_hook``, ``with_skill`` and ``context`` (any other template variable) answer questions up
    front; the others are asked, unless ``no_input`` takes their defaults. Every answer is checked,
    and an existing project directory refused unless ``overwrite``, before anything is written.
    """
    from cookiecutter.config import get_user_config
    from cookiecutter.exceptions import CookiecutterException
    from cookiecutter.generate import generate_context, generate_files

    template = Path(template) if template else template_dir()
    given: dict[str, Any] = {"plugin_name": name, **(context or {})}
    if toolset is not None:
        given["toolset"] = toolset
    if with_hook:
        given["with_hook"] = True
    if with_skill:
        given["with_skill"] = True
    _check(given, template)  # a bad name fails before any question is asked
    try:
        user_config = get_user_config()
        cookiecutter_context = generate_context(context_file=str(template / "cookiecutter.json"),
                                                default_context=user_config["default_context"],
                                                extra_context=given)
    except (CookiecutterException, ValueError) as exc:  # ValueError: an answer outside a choice's options
        raise ScaffoldError(str(exc)) from None
    unknown = sorted(set(given) - set(cookiecutter_context["cookiecutter"]))
    if unknown:
        raise ScaffoldError(f"unknown template variable{'s' * (len(unknown) > 1)} {', '.join(unknown)}")
    cookiecutter_context["cookiecutter"]["_requires_hermes"] = requires_hermes()
    if "_hermes_from_git" not in given:
        cookiecutter_context["cookiecutter"]["_hermes_from_git"] = ci_requirement() or ""
    answers = _answers(cookiecutter_context, set(given), no_input)
    _check(answers, template)

    project = Path(output_dir) / answers["project_slug"]
    if project.exists() and not overwrite:
        raise ScaffoldError(f"{project} already exists; choose another output directory, or pass --overwrite "
                            "to render over it")
    answers.update(_template=str(template), _output_dir=str(Path(output_dir).resolve()), _repo_dir=str(template),
                   _checkout=None)
    cookiecutter_context["cookiecutter"] = answers
    try:
        generated = generate_files(repo_dir=str(template), context=cookiecutter_context, output_dir=str(output_dir),
                                   overwrite_if_exists=overwrite)
    except CookiecutterException as exc:
        raise ScaffoldError(f"cannot render the template: {exc}") from None
    return Path(generated)


def _check(answers: Mapping[str, Any], template: Path) -> None:
    problems = naming_problems(answers, template)
    if problems:
        raise ScaffoldError("; ".join(problems))


def _answers(context: dict[str, Any], given: set[str], no_input: bool) -> dict[str, Any]:
    """The template's variables in order: given ones as given, the others asked for (or defaulted)."""
    from cookiecutter.prompt import read_user_choice, read_user_variable, read_user_yes_no, render_variable
    from cookiecutter.utils import create_env_with_context
    from jinja2 import UndefinedError

    variables = context["cookiecutter"]
    prompts = variables.pop("__prompts__", {})
    env = create_env_with_context(context)
    answers: dict[str, Any] = {}
    for key, raw in variables.items():
        try:
            if key.startswith("_"):
                # cookiecutter keeps `_private` values as written and renders `__private` ones
                answers[key] = render_variable(env, raw, answers) if key.startswith("__") else raw
            elif key in given:
                # generate_context has applied it: a choice's answer comes first among its options
                answers[key] = raw[0] if isinstance(raw, list) else raw
            elif isinstance(raw, bool):
                answers[key] = raw if no_input else read_user_yes_no(key, raw, prompts)
            elif isinstance(raw, list):
                options = render_variable(env, raw, answers)
                answers[key] = options[0] if no_input else read_user_choice(key, options, prompts)
            else:
                default = render_variable(env, raw, answers)
                answers[key] = default if no_input else read_user_variable(key, default, prompts)
        except UndefinedError as exc:
            raise ScaffoldError(f"cannot render the template variable {key!r}: {exc}") from None
    return answers
