"""The project root and the directories imports are resolved from.

The root is the nearest ancestor holding ``pyproject.toml``, ``setup.cfg``, ``setup.py``
or ``.git``; without one, the directory that holds the file's top package (the first
ancestor without ``__init__.py``: where ``python -m pkg.main`` runs from, so ``pkg.moves``
and ``from . import moves`` resolve), or the file's own directory when it is in no package. Import roots default to the root and its ``src/`` (ruff's ``src`` default,
so that both flat and ``src/`` layouts work); a ``src`` setting (a list of directories,
relative to the root) replaces them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


@dataclass(frozen=True)
class Layout:
    root: str
    import_roots: tuple[str, ...]  # absolute, in the order imports are looked up


def find_root(path: str) -> str:
    """The nearest ancestor of ``path`` (a file or a directory) holding a project marker,
    else the directory of ``path`` itself."""
    start = os.path.abspath(path)
    here = start if os.path.isdir(start) else os.path.dirname(start)
    d = here
    while True:
        if any(os.path.exists(os.path.join(d, m)) for m in MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return _package_parent(here)
        d = parent


def _package_parent(directory: str) -> str:
    """The first of ``directory`` and its ancestors that is no package directory."""
    d = directory
    while os.path.isfile(os.path.join(d, "__init__.py")):
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return d


def layout_for(path: str, src: Sequence[str] | None = None, root: str | None = None) -> Layout:
    """The layout of the project ``path`` belongs to; ``root`` skips the search."""
    top = os.path.abspath(root) if root is not None else find_root(path)
    if src:
        dirs = [os.path.normpath(os.path.join(top, s)) for s in src]
    else:
        dirs = [top, os.path.join(top, "src")]
    seen: list[str] = []
    for d in dirs:
        if os.path.isdir(d) and d not in seen:
            seen.append(d)
    return Layout(top, tuple(seen))
