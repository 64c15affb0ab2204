"""Where one file's code runs: the settings, and what the file and the code it runs say.

The decision, in order (docs/runtimes.md):

1. ``per-file-runtime``: the first glob that covers the file gives its runtime (``auto``
   goes on to the detection);
2. ``runtime``: ``single-controller`` or ``multi-controller`` is every other file's;
3. ``auto``: the facts (stages/runtime_facts.py) of the file itself, of the
   ``conftest.py`` files pytest loads for it (its directory and every parent up to the
   project root; for a test file, ``test_*.py`` or ``*_test.py``, and a conftest.py:
   pytest runs no other file with them), and of the project modules it imports (what
   runs when they are imported, their packages' ``__init__.py`` included).

The facts of another module are read once per content and kept in its project's memo,
beside the gate's text facts: the text is asked first whether it can hold any
(a substring test), and only then parsed. The files read are the decision's
dependencies: a cached result holds while they are unchanged (or changed without
changing their facts, which their interface hash holds: interface.py).
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Callable, Iterator, Mapping

from ..core.config import runtime_for
from ..stages import runtime_facts as rf
from .imports import imports_of
from .modules import MODELLED
from .summaries import digest

if TYPE_CHECKING:
    from .view import FileView, Project

CONFTEST = "conftest.py"


def decide(settings: Mapping[str, object], path: str, source: str, tree_of: Callable[[], ast.Module | None],
           view: "FileView | None") -> tuple[rf.Decision, dict[str, str]]:
    """(the decision for the file at ``path``, the project files it read with their digests).
    ``tree_of()``: Python's tree of the whole ``source`` (None: it does not parse), asked
    only when the detection reads it."""
    setting = str(settings.get("runtime", "auto"))
    deps: dict[str, str] = {}
    table = settings.get("per-file-runtime")
    if table and view is not None:
        # The same text elsewhere may be covered by another glob: the result is this path's.
        deps[os.path.abspath(path)] = digest(source)
    matched = runtime_for(path, table)
    if matched is not None:
        glob, runtime = matched
        if runtime == rf.SINGLE:
            return rf.Decision(rf.SINGLE, f"per-file-runtime {glob!r}", True), deps
        if runtime == rf.MULTI:
            return rf.Decision(rf.MULTI, "", True), deps
        setting = "auto"
    if setting != "auto":
        return rf.decide(setting, ()), deps
    tree = tree_of() if rf.may_say(source) or (view is not None and "import" in source) else None
    own = rf.facts_of(tree, source) if tree is not None and rf.may_say(source) else rf.NONE
    sources: list[tuple[str, rf.Facts]] = [("the file", own)]
    if view is not None:
        sources.extend(_others(view, path, source, tree, deps))
    return rf.decide(setting, sources), deps


def _others(view: "FileView", path: str, source: str, tree: ast.Module | None,
            deps: dict[str, str]) -> Iterator[tuple[str, rf.Facts]]:
    project = view.project
    here = os.path.abspath(path)
    name = os.path.basename(here)
    if name == CONFTEST or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))):
        for conftest in _conftests(here, project.layout.root):
            facts = _facts(project, conftest, deps)
            if facts is not None:
                yield f"{CONFTEST} ({project.display(conftest)})", facts
    if "import" not in source:
        return
    if tree is None:
        return  # it does not parse
    index = project.index
    seen: set[str] = set()
    for imp in imports_of(rf.import_statements(tree, source), view.module, index):
        parts = imp.module.split(".")
        if parts[0] in MODELLED:
            continue  # jax stays the models', even in its own repository
        for i in range(1, len(parts) + 1):  # importing a.b runs a/__init__.py first
            dotted = ".".join(parts[:i])
            if dotted in seen:
                continue
            seen.add(dotted)
            mod = index.find(dotted)
            if mod is None or mod.path is None or os.path.abspath(mod.path) == here:
                continue
            facts = _facts(project, mod.path, deps)
            if facts is not None:
                yield f"{project.display(mod.path)} (imported)", rf.at_import(facts)


def _conftests(path: str, root: str) -> Iterator[str]:
    """The conftest.py files pytest loads for ``path``: its directory's and its parents' up
    to ``root``."""
    d = os.path.dirname(path)
    root = os.path.abspath(root)
    while True:
        candidate = os.path.join(d, CONFTEST)
        if candidate != path and os.path.isfile(candidate):
            yield candidate
        if d == root or not d.startswith(root):
            return
        parent = os.path.dirname(d)
        if parent == d:
            return
        d = parent


def _facts(project: "Project", path: str, deps: dict[str, str]) -> rf.Facts | None:
    """The facts of a project file, once per content (the project's memo)."""
    d = project.digest_of(path)
    if d is None:
        return None
    deps[path] = d
    key = ("runtime_facts", path, d)
    found = project.memo.get(key)
    if found is None:
        text = project.text(path)
        if text is None:
            return None
        found = project.memo[key] = rf.facts_of_text(text[0])
    return found  # type: ignore[return-value]  # (what facts_of_text returned under this key)
