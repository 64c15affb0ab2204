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

import os
from typing import TYPE_CHECKING, Callable, Iterator, Mapping

from ..core import vocabulary as api
from ..core.config import runtime_for
from ..stages import runtime_facts as rf
from .modules import MODELLED
from .summaries import digest

if TYPE_CHECKING:
    from .view import FileView, Project

CONFTEST = "conftest.py"


def decide(settings: Mapping[str, object], path: str, source: str, facts_of: Callable[[], rf.FileFacts | None],
           view: "FileView | None") -> tuple[rf.Decision, dict[str, str]]:
    """(the decision for the file at ``path``, the project files it read with their digests).
    ``facts_of()``: what the whole ``source`` says (None: it does not parse), asked only
    when the detection reads it."""
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
    whole = facts_of() if rf.may_say(source) or (view is not None and "import" in source) else None
    sources: list[tuple[str, rf.Facts]] = [("the file", whole.facts if whole is not None else rf.NONE)]
    if view is not None:
        sources.extend(_others(view, path, whole, deps))
    return rf.decide(setting, sources), deps


def launcher(decision: rf.Decision, view: "FileView | None", path: str,
             facts: rf.FileFacts | None) -> tuple[str, dict[str, str]]:
    """(a project module that calls ``jax.distributed.initialize`` and imports the module
    at ``path``, directly or not: an entry point whose program runs as several processes,
    and reaches this code; "" when none does, the project files read to say so). Asked
    only by the rules that wait for multi-process uses, of a multi-controller file that
    has none of its own (the identifier index it reads is the project's every file).
    The project's files that spell the word are asked (callers.py), at most eight."""
    deps: dict[str, str] = {}
    if view is None or decision.runtime != rf.MULTI or (facts is not None and facts.multi_process):
        return "", deps
    return _launcher(view, path, deps), deps


def _launcher(view: "FileView", path: str, deps: dict[str, str]) -> str:
    project = view.project
    here = project.index.module_name(path)
    if here is None:
        return ""
    project.words(check=False)
    candidates = [f for f in project.files_naming(api.INITIALIZE_WORD, deps)
                  if os.path.abspath(f) != os.path.abspath(path)]
    if len(candidates) > 8:
        return ""
    graph = project.import_graph()
    for other in candidates:
        facts = _facts(project, other, deps)
        name = project.index.module_name(other)
        if facts is None or not facts.launches or name is None:
            continue
        reached = graph.dependencies(name)
        for dotted in reached:  # the modules whose imports lead here: their gate parts hold them
            mod = project.index.find(dotted)
            d = project.digest_of(mod.path) if mod is not None and mod.path is not None else None
            if d is not None and mod is not None and mod.path is not None:
                deps[mod.path] = d
        if here in reached:
            return project.display(other)
    return ""


def _others(view: "FileView", path: str, whole: rf.FileFacts | None,
            deps: dict[str, str]) -> Iterator[tuple[str, rf.Facts]]:
    project = view.project
    here = os.path.abspath(path)
    name = os.path.basename(here)
    if name == CONFTEST or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))):
        for conftest in _conftests(here, project.layout.root):
            facts = _facts(project, conftest, deps)
            if facts is not None:
                yield project.display(conftest), facts
    if whole is None:
        return  # no imports, or it does not parse
    index = project.index
    for dotted in _imported_modules(whole.imports, view):
        if dotted.split(".")[0] in MODELLED:
            continue  # jax stays the models', even in its own repository
        mod = index.find(dotted)
        if mod is None or mod.path is None or os.path.abspath(mod.path) == here:
            continue
        facts = _facts(project, mod.path, deps)
        if facts is not None:
            yield f"{project.display(mod.path)} (imported)", rf.at_import(facts)


def _imported_modules(imports: tuple[rf.ImportLine, ...], view: "FileView") -> Iterator[str]:
    """The project modules the import statements run, each once: ``import a.b.c`` runs
    ``a``, ``a.b`` and ``a.b.c``; ``from a.b import c`` runs ``a``, ``a.b`` and, when it is
    a module, ``a.b.c``."""
    index = view.project.index
    seen: set[str] = set()
    for kind, level, module, names in imports:
        found: list[str] = [module]
        if kind == "from":
            base = view.absolute(level, module or None) if level else module
            if not base:
                continue
            found = [base] + [f"{base}.{n}" for n in names if n != "*" and index.find(f"{base}.{n}") is not None]
        for name in found:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                dotted = ".".join(parts[:i])
                if dotted not in seen:
                    seen.add(dotted)
                    yield dotted


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
