"""Dotted module names to the project's files, and files back to their names.

Python's own rules, within the import roots: ``a/b.py`` is module ``a.b``; ``a/__init__.py``
is package ``a``; a directory without ``__init__.py`` is a namespace package (it has no
file, so nothing to export, but modules below it resolve). The first import root that
holds a name wins, as the first ``sys.path`` entry does. Lookups are cached: a project
is asked about the same few packages by every file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..core.vocabulary import MODELLED_PACKAGES
from .roots import Layout

# The packages the analysis models: their names are the models', even in JAX's own
# repository, where ``jax`` is a project package (and analysing it is not the point).
MODELLED = MODELLED_PACKAGES


@dataclass(frozen=True)
class ModuleFile:
    name: str  # dotted
    path: str | None  # the .py file; None for a namespace package
    is_package: bool

    @property
    def key(self) -> str:
        """What identifies the file whatever the path it was reached by (symlinks)."""
        return os.path.realpath(self.path) if self.path is not None else self.name


class ModuleIndex:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._found: dict[str, ModuleFile | None] = {}

    def find(self, name: str) -> ModuleFile | None:
        """The project's module ``name``, or None when the import roots do not hold it."""
        if name in self._found:
            return self._found[name]
        found = None
        if name and all(part.isidentifier() for part in name.split(".")):
            for root in self.layout.import_roots:
                found = _lookup(root, name)
                if found is not None:
                    break
        self._found[name] = found
        return found

    def module_name(self, path: str) -> str | None:
        """The dotted name of the project file ``path``, or None when no import root holds it.
        The innermost root names it: ``src/pkg/m.py`` is ``pkg.m``, not ``src.pkg.m``."""
        full = os.path.abspath(path)
        for root in sorted(self.layout.import_roots, key=len, reverse=True):
            rel = os.path.relpath(full, root)
            if rel.startswith(os.pardir + os.sep) or rel == os.pardir or os.path.isabs(rel):
                continue
            stem, ext = os.path.splitext(rel)
            if ext != ".py":
                return None
            parts = stem.split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and all(p.isidentifier() for p in parts):
                return ".".join(parts)
        return None

    def resolve_relative(self, importer: ModuleFile, level: int, module: str | None) -> str | None:
        """The absolute name ``from <level dots><module> import ...`` means in ``importer``,
        or None when it climbs above the top-level package (importlib's _resolve_name)."""
        parts = importer.name.split(".")
        if not importer.is_package:
            parts = parts[:-1]  # a module's package
        if level > len(parts):
            return None
        base = parts[: len(parts) - (level - 1)]
        return ".".join(base + module.split(".") if module else base)


def _lookup(root: str, name: str) -> ModuleFile | None:
    d = root
    parts = name.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        pkg = os.path.join(d, part)
        init = os.path.join(pkg, "__init__.py")
        if os.path.isfile(init):
            if last:
                return ModuleFile(name, init, True)
            d = pkg
            continue
        module = pkg + ".py"
        if os.path.isfile(module):  # before a directory without __init__.py, as Python looks
            return ModuleFile(name, module, False) if last else None
        if os.path.isdir(pkg):  # a namespace package
            if last:
                return ModuleFile(name, None, True)
            d = pkg
            continue
        return None
    return None
