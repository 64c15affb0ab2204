"""The development set's labels (../shared/devset/README.md): each ``.py`` file of a
project starts with comment lines ``# expect: KIND@LOC ...`` (or ``clean``), ``# allow:
KIND@LOC ...`` and, in one file, ``# entry: SCRIPT``. ``LOC`` is ``L1|L2|...``: lines of
that file or ``FILE:LINE`` relative to the project root; one item holds at any of them.

Standard library only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("REORDERED-DEVICES", "SUBSET-DEVICES", "CROSS-MESH-PUT", "NOT-A-MESH")
_HEADER = re.compile(r"#\s*(expect|allow|entry)\s*:\s*(.*?)\s*$")
_ITEM = re.compile(r"^([A-Z][A-Z-]*)@(.+)$")


@dataclass(frozen=True)
class Item:
    kind: str
    locs: tuple[tuple[str, int], ...]  # (file relative to the root, line)
    home: str  # the file whose header holds it

    def text(self) -> str:
        return f"{self.kind}@" + "|".join(f"{f}:{n}" for f, n in self.locs)


@dataclass
class Project:
    name: str
    root: Path
    entry: str | None = None
    expected: list[Item] = field(default_factory=list)
    allowed: list[Item] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.expected


def _items(text: str, home: str) -> list[Item]:
    out = []
    for tok in text.split():
        if tok == "clean":
            continue
        m = _ITEM.match(tok)
        if not m or m.group(1) not in KINDS:
            raise ValueError(f"{home}: bad header item {tok!r}")
        locs = []
        for alt in m.group(2).split("|"):
            file, _, num = alt.rpartition(":")
            locs.append((file or home, int(num)))
        out.append(Item(m.group(1), tuple(locs), home))
    return out


def load_project(root: Path) -> Project:
    proj = Project(root.name, root)
    for py in sorted(root.rglob("*.py")):
        rel = py.relative_to(root).as_posix()
        for raw in py.read_text(encoding="utf-8").splitlines():
            if not raw.startswith("#"):
                break
            m = _HEADER.match(raw.strip())
            if not m:
                continue
            which, rest = m.groups()
            if which == "entry":
                proj.entry = rest
            else:
                (proj.expected if which == "expect" else proj.allowed).extend(_items(rest, rel))
    return proj


def load_projects(projects_dir: Path) -> list[Project]:
    return [load_project(d) for d in sorted(Path(projects_dir).iterdir()) if d.is_dir()]


def rel(root: Path, path: str) -> str:
    """A recorded file (absolute) relative to the project root, as labels spell it."""
    return os.path.relpath(os.path.realpath(path), os.path.realpath(root)).replace(os.sep, "/")
