"""What ``hermes plugins doctor`` says of the installation itself: other owners of the ``hermes`` command, and
Hermes' own dependencies that another install (a plugin that depends on Hermes Agent) moved below its range."""

from __future__ import annotations

from importlib.metadata import Distribution, PackageNotFoundError, distribution, distributions

__all__ = ["downgraded_dependencies", "other_hermes_scripts"]

_OURS = "hermes-tools"


def _name(dist: Distribution) -> str:
    return (dist.metadata["Name"] or "").lower().replace("_", "-")


def other_hermes_scripts() -> list[str]:
    """Each other installed distribution that declares a ``hermes`` console script, as ``name version``."""
    return sorted({f"{_name(dist)} {dist.version}" for dist in distributions() if _name(dist) != _OURS
                   and any(ep.group == "console_scripts" and ep.name == "hermes" for ep in dist.entry_points)})


def downgraded_dependencies() -> list[str]:
    """Each installed requirement of hermes-tools and its packs (extras included, where installed) whose
    installed version is outside the range they require, as a sentence naming both."""
    from packaging.requirements import InvalidRequirement, Requirement

    problems: set[str] = set()
    ours = [dist for dist in distributions() if _name(dist) == _OURS or _name(dist).startswith(f"{_OURS}-")]
    for dist in ours:
        for line in dist.requires or ():
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue
            if not requirement.specifier:
                continue
            try:
                installed = distribution(requirement.name).version
            except PackageNotFoundError:
                continue  # an extra not installed (a missing core dependency is pip's to report)
            if not requirement.specifier.contains(installed, prereleases=True):
                problems.add(f"{requirement.name} {installed} is installed, but {_name(dist)} requires "
                             f"{requirement.name}{requirement.specifier}: another install changed it; "
                             f"pip install '{requirement.name}{requirement.specifier}'")
    return sorted(problems)
