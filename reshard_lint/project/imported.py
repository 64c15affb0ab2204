"""For the gate: the names a file imports from its project that may hold device values.

The prefilter and the ast gate skip a file whose own code builds no devices or mesh
(gate.py); with imports followed, a file that only uses ``TRAIN`` and ``ROLLOUT`` from
``mypkg.mesh`` can have a finding. This finds, from the text alone, the names imported
from project modules whose text builds devices or meshes (or re-exports such a module's
names), so that such a file goes to the engine whole. It says yes too often (any name
such a module may bind), never no to a name the analysis could resolve; the standard
library only: the gate runs where libcst is not imported.
"""

from __future__ import annotations

import re

from ..prefilter import _DEVICE_SOURCE
from .modules import ModuleFile
from .view import MODELLED, FileView, may_bind_value

# Matched at the start of a line holding "import": str.find over the text, then these, is
# ten times faster than one multiline regex over every file.
_FROM = re.compile(r"[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)")
_IMPORT_AS = re.compile(r"[ \t]*import[ \t]+([\w.]+)[ \t]+as[ \t]+(\w+)")
_NAME = re.compile(r"(\w+)(?:\s+as\s+(\w+))?")
_DEPTH = 4  # re-exports followed through at most this many modules


def device_imports(source: str, view: FileView) -> frozenset[str]:
    """Local names bound by imports of project modules that may hold device values."""
    out: set[str] = set()
    index = view.project.index
    froms, imports = _imports(source)
    for dots, module, names in froms:
        base = view.absolute(len(dots), module or None) if dots else module
        if not base or base.split(".")[0] in MODELLED or index.find(base) is None:
            continue
        source_mod = index.find(base)
        if names.strip() == "*":
            if source_mod is not None and _carries(view, source_mod, _DEPTH):
                out.add("*")
            continue
        for name, alias in _NAME.findall(names.strip("()")):
            if name == "import":
                continue
            sub = index.find(f"{base}.{name}")
            if sub is not None:
                if _carries(view, sub, _DEPTH):
                    out.add(alias or name)  # a module: its attributes may be device values
            elif source_mod is not None and _exports(view, source_mod, name, _DEPTH):
                out.add(alias or name)
    for module, alias in imports:
        if module.split(".")[0] in MODELLED:
            continue
        mod = index.find(module)
        if mod is not None and _carries(view, mod, _DEPTH):
            out.add(alias)
    return frozenset(out)


def _imports(text: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """(from-imports as (dots, module, names), ``import a.b as m`` as (module, alias))."""
    froms: list[tuple[str, str, str]] = []
    imports: list[tuple[str, str]] = []
    seen = -1
    i = text.find("import")
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        if start != seen:
            seen = start
            m = _FROM.match(text, start)
            if m is not None:
                froms.append(m.groups())  # type: ignore[arg-type]
            else:
                a = _IMPORT_AS.match(text, start)
                if a is not None:
                    imports.append(a.groups())  # type: ignore[arg-type]
        i = text.find("import", i + 6)
    return froms, imports


def _text(view: FileView, mod: ModuleFile) -> str | None:
    """The module's text, recorded in ``view.deps``: a verdict read from it holds while
    it is unchanged (a cached rejection too)."""
    if mod.path is None:
        return None
    found = view.project.text(mod.path)
    if found is None:
        return None
    view.deps[mod.path] = found[1]
    return found[0]


def _carries(view: FileView, mod: ModuleFile, depth: int) -> bool:
    """Does the module build devices or meshes itself, or import from one that does?"""
    text = _text(view, mod)
    if text is None:
        return False
    if any(w in text for w in _DEVICE_SOURCE):
        return True
    if depth <= 0:
        return False
    inner = FileView(view.project, mod)
    for dots, module, _ in _imports(text)[0]:
        base = inner.absolute(len(dots), module or None) if dots else module
        if base and base.split(".")[0] not in MODELLED:
            found = view.project.index.find(base)
            if found is not None and found != mod and _carries(view, found, depth - 1):
                return True
    return False


def _exports(view: FileView, mod: ModuleFile, name: str, depth: int) -> bool:
    text = _text(view, mod)
    return text is not None and may_bind_value(text, name) and _carries(view, mod, depth)
