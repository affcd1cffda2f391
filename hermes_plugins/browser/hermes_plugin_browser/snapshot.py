"""The page as text: Chromium's accessibility tree, one line per node, interactive ones with a ref (``@e1``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["INTERACTIVE_ROLES", "Snapshot", "render"]

INTERACTIVE_ROLES: Final = frozenset({
    "button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox", "option", "menuitem",
    "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider", "spinbutton", "treeitem",
})
#: Roles shown in the compact view besides the interactive ones, so the model knows where it is.
LANDMARK_ROLES: Final = frozenset({"heading", "dialog", "alertdialog", "alert", "form", "img"})
#: Roles that only wrap others: their children are shown one level up.
TRANSPARENT_ROLES: Final = frozenset({"none", "generic", "InlineTextBox", "LineBreak", "presentation"})
#: Properties worth showing beside a node.
SHOWN_PROPERTIES: Final = ("level", "checked", "pressed", "expanded", "selected", "disabled", "required")


@dataclass
class Snapshot:
    """A rendered snapshot: its text, and which DOM node each ref names."""

    text: str
    refs: dict[str, int] = field(default_factory=dict)  #: ``e1`` -> backend DOM node id
    truncated: bool = False
    title: str = ""  #: the document's title (the root's accessible name)


def render(nodes: list[dict[str, Any]], *, full: bool, max_chars: int) -> Snapshot:
    """Render ``Accessibility.getFullAXTree``'s nodes; interactive nodes are numbered in document order."""
    by_id = {node["nodeId"]: node for node in nodes}
    roots = [node for node in nodes if not node.get("parentId") or node["parentId"] not in by_id]
    lines: list[str] = []
    refs: dict[str, int] = {}
    title = next((_value(root, "name") for root in roots if _value(root, "role") == "RootWebArea"), "")
    stack: list[tuple[dict[str, Any], int]] = [(root, 0) for root in reversed(roots)]
    while stack:
        node, depth = stack.pop()
        role = _value(node, "role")
        name = _value(node, "name").strip()
        shown = not node.get("ignored") and role not in TRANSPARENT_ROLES and role != "RootWebArea"
        if shown and role == "StaticText":
            shown = full and bool(name)
        if shown and not full:
            shown = role in INTERACTIVE_ROLES or role in LANDMARK_ROLES
        child_depth = depth
        if shown:
            line = f"{'  ' * depth}- {role}" + (f' "{_clip(name)}"' if name else "")
            details = [f"{key}={value}" for key, value in _properties(node)]
            if role in INTERACTIVE_ROLES and node.get("backendDOMNodeId"):
                ref = f"e{len(refs) + 1}"
                refs[ref] = node["backendDOMNodeId"]
                details.insert(0, f"ref=@{ref}")
            value = _value(node, "value")
            if value and role in INTERACTIVE_ROLES:
                details.append(f'value="{_clip(value)}"')
            lines.append(line + (f" [{', '.join(details)}]" if details else ""))
            child_depth = depth + 1 if full else depth
        for child_id in reversed(node.get("childIds", [])):
            child = by_id.get(child_id)
            if child is not None:
                stack.append((child, child_depth))
    text = "\n".join(lines) or "(the page shows no accessible content)"
    if len(text) <= max_chars:
        return Snapshot(text, refs, title=title)
    return Snapshot(cut(text, max_chars), refs, truncated=True, title=title)


def cut(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` at a line's end, saying how much was left out."""
    kept = text[:max_chars].rsplit("\n", 1)[0]
    return f"{kept}\n[snapshot truncated: {len(text) - len(kept)} of {len(text)} characters left out]"


def _value(node: dict[str, Any], key: str) -> str:
    value = (node.get(key) or {}).get("value")
    return "" if value is None else str(value)


def _properties(node: dict[str, Any]) -> list[tuple[str, Any]]:
    found = {prop["name"]: prop.get("value", {}).get("value") for prop in node.get("properties", [])}
    return [(key, found[key]) for key in SHOWN_PROPERTIES if found.get(key) not in (None, False, "false")]


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split()).replace('"', "'")
    return text if len(text) <= limit else text[:limit] + "…"
