"""The projects one process meets, and how their modules are summarised.

The engine asks for a file's view of its project (``view``); the view asks for module
summaries, which are made here by the same parser and interpreter as any analysed file,
running the module body only. Layouts are found once per directory.
"""

from __future__ import annotations

import ast
import os
import re
from typing import TYPE_CHECKING, Callable, Mapping, NamedTuple

from .roots import Layout, layout_for
from .summaries import callable_export, exportable
from .view import FileView, Project

if TYPE_CHECKING:
    from ..analysis.context import FileContext
    from ..analysis.values import Value


_ORIGIN_WORDS = ("device_put", "make_array_from", "host_local_array_to_global_array", "out_shardings")


def may_import_devices(source: str) -> bool:
    """Imported meshes matter to the gate only where an array is placed (gate.decide: an
    origin or a device_put); without one the file's own text decides. Substring tests
    first: every file of a flake8 run pays this."""
    if "import" not in source:
        return False
    if any(w in source for w in _ORIGIN_WORDS):
        return True
    return "device" in source and _device_keyword(source)


def _device_keyword(source: str) -> bool:
    """Does ``device =`` (not ``==``) stand in the text as a name of its own, as the regex
    ``\\bdevice\\s*=(?!=)`` finds it? By str.find: the regex tries its word boundary at
    every position (may_import_devices over the jax repository's files 0.22 -> 0.08 s)."""
    n = len(source)
    i = source.find("device")
    while i >= 0:
        end = i + 6
        if i == 0 or not (source[i - 1].isalnum() or source[i - 1] == "_"):
            while end < n and source[end].isspace():
                end += 1
            if end < n and source[end] == "=" and not source.startswith("=", end + 1):
                return True
        i = source.find("device", i + 6)
    return False


class Projects:
    def __init__(self, settings: Mapping[str, object]) -> None:
        self.settings = dict(settings)
        # The language server's open documents: their text, not the disk's (None: not open).
        self.unsaved: Callable[[str], str | None] = lambda path: None
        self._layouts: dict[str, Layout] = {}  # directory -> layout
        self._projects: dict[Layout, Project] = {}

    def view(self, path: str) -> FileView | None:
        """``path``'s view of its project; None for text that is not a file (stdin)."""
        if not path or path.startswith("<") or not os.path.isfile(path):
            return None
        directory = os.path.dirname(os.path.abspath(path))
        layout = self._layouts.get(directory)
        if layout is None:
            src = self.settings.get("src")
            layout = self._layouts[directory] = layout_for(
                directory, src=list(src) if isinstance(src, (list, tuple)) else None)  # type: ignore[arg-type]
        project = self._projects.get(layout)
        if project is None:
            project = self._projects[layout] = Project(layout, self._summarise, lambda p: self.unsaved(p))
        name = project.index.module_name(path)
        module = project.index.find(name) if name is not None else None
        return FileView(project, module)

    def device_imports(self, source: str, path: str) -> tuple[frozenset[str], dict[str, str]]:
        """Names ``source`` imports from its project that may hold device values (the
        gate's question, from the text: project/imported.py), and the project files the
        answer was read from, with their digests."""
        if not may_import_devices(source):
            return frozenset(), {}
        view = self.view(path)
        if view is None:
            return frozenset(), {}
        from .imported import device_imports

        return device_imports(source, view), view.deps

    def interfaces(self, path: str, deps: Mapping[str, str]) -> dict[str, str]:
        """The interfaces (interface.py) of the project files ``path``'s result read."""
        view = self.view(path) if deps else None
        return view.project.interfaces(deps) if view is not None else {}

    def _summarise(self, text: str, path: str, view: FileView, full: bool = False) \
            -> "tuple[dict[str, Value], FileContext] | None":
        """The module body of ``text`` run for the values it binds once, and its context;
        ``full``: with the functions importers may call for device values (defs.py),
        exported with the scope they close over."""
        from .. import newer_syntax
        from ..analysis import Analyzer
        from ..analysis.context import FileContext
        from ..analysis.values import QualVal
        from ..cst_parse import parse_module

        run = module_level(text, full)
        view.shape = run.shape
        if run.tree is None:
            return None  # unknown: the importing file is not the place to report it
        module = parse_module(run.body, python_accepted=True)
        ctx = FileContext(module, run.body, path, self.settings)
        ctx.python_tree = run.tree if run.body is text else newer_syntax.parse(run.body)
        ctx.project = view
        ctx.display = view.project.display(path)
        analyzer = Analyzer(ctx, _ignore)
        functions = False
        try:
            analyzer.run(module_only=True)
            scope = analyzer.module_scope
            exports: dict[str, Value] = {}
            for name, value in (scope.vars.items() if scope is not None else ()):
                if scope.bindings.get(name) != 1 or name in run.rebound:  # type: ignore[union-attr]
                    continue
                # A re-export (``from .mesh import TRAIN`` in __init__.py) stays a name, resolved
                # only when an importer asks for it: resolving every one here would analyse
                # every module a package's __init__.py imports.
                if exportable(value) or type(value) is QualVal:
                    exports[name] = value
                elif name in run.called and (func := callable_export(value, path)) is not None:
                    exports[name] = func
                    functions = True
        finally:
            # An exported function keeps its module's scope as its closure: not taken apart.
            analyzer.release(keep_values=functions)
        # Python's tree is wanted again only for the positions of a message naming this
        # module: parsed again then, not kept with every summary.
        ctx.python_tree, ctx.lazy_tree = None, True
        return exports, ctx


class ModuleLevel(NamedTuple):
    """What a summary of a module's text runs."""

    shape: str  # interface.summary_part of it
    tree: ast.Module | None  # Python's tree of the whole text; None: nothing runs (no parse, too deep)
    body: str  # the text with the bodies no importer reaches blanked out
    rebound: set[str]  # names a function declares ``global``: not exported
    called: frozenset[str]  # the functions kept for importers to call (a full summary)


def module_level(text: str, full: bool) -> ModuleLevel:
    """What ``_summarise`` runs of ``text``, and the summary part of its interface (the
    warm ``check`` asks for that alone, interface.py); ``full``: keeping the functions
    importers call (defs.py), its summary part marked ``F``."""
    from .. import newer_syntax
    from ..nesting import too_deep
    from .defs import device_functions
    from .interface import summary_part

    mark = "F" if full else ""
    try:
        tree = newer_syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ModuleLevel(mark + summary_part("\0unparsable", set()), None, text, set(), frozenset())
    if too_deep(text, tree) is not None:
        return ModuleLevel(mark + summary_part("\0too deep", set()), None, text, set(), frozenset())
    called = device_functions(text) if full else frozenset()
    body = _module_level_text(text, tree, called)
    rebound = _declared_global(text)
    return ModuleLevel(mark + summary_part(body, rebound), tree, body, rebound, called)


def _module_level_text(text: str, tree: ast.Module, keep: frozenset[str] = frozenset()) -> str:
    """``text`` with the bodies of the functions its module-level code cannot reach
    blanked out (``pass``, then empty lines: every line keeps its number, every kept
    node its column). Only module-level values, and the functions named in ``keep``
    (those importers call: defs.py), are exported, and a 2,000-line module of helpers
    then costs libcst and the interpreter its module-level lines."""
    defs: dict[str, list[ast.AST]] = {}
    roots: list[ast.AST] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(stmt.name, []).append(stmt)
            roots.extend(stmt.decorator_list)
            roots.extend(stmt.args.defaults)
            if stmt.name in keep:
                roots.append(stmt)
        elif isinstance(stmt, ast.ClassDef):
            defs.setdefault(stmt.name, []).append(stmt)
            roots.extend([*stmt.bases, *stmt.decorator_list])
            if stmt.name in keep:
                roots.append(stmt)
        else:
            roots.append(stmt)
    reached: set[str] = set(keep)
    todo = roots
    while todo:
        names = {n.id for node in todo for n in ast.walk(node) if isinstance(n, ast.Name)}
        todo = [d for name in names - reached if name in defs for d in defs[name]]
        reached |= names
    lines = text.split("\n")
    blanked = False
    for name, nodes in defs.items():
        if name in reached:
            continue
        for node in nodes:
            body = node.body  # type: ignore[attr-defined]
            first, last = body[0].lineno, node.end_lineno or body[-1].lineno
            if first <= node.lineno or first - 1 >= len(lines):
                continue  # a one-line def: nothing to save
            indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
            lines[first - 1] = indent + "pass"
            for i in range(first, min(last, len(lines))):
                lines[i] = ""
            blanked = True
    return "\n".join(lines) if blanked else text


def _ignore(event: object) -> None:
    pass  # the module's own findings are reported when it is checked itself


_GLOBAL = re.compile(r"(?m)^[ \t]+global[ \t]+([\w \t,]+)")


def _declared_global(text: str) -> set[str]:
    """Names some function declares ``global``: it may rebind them, so their value at
    import time is not the one an importer sees."""
    return {n for m in _GLOBAL.finditer(text) for n in re.findall(r"\w+", m.group(1))} if "global" in text else set()


_GATE_PROJECTS: dict[tuple[str, ...], Projects] = {}


def gate_projects(settings: Mapping[str, object]) -> Projects:
    """The projects of a process that has no engine (the gate's workers, flake8 before
    the engine is needed): one set per ``src`` setting."""
    src = settings.get("src")
    key = tuple(src) if isinstance(src, (list, tuple)) else ()
    projects = _GATE_PROJECTS.get(key)
    if projects is None:
        projects = _GATE_PROJECTS[key] = Projects({"src": list(key)} if key else {})
    return projects


def device_imports(source: str, path: str, settings: Mapping[str, object]) -> tuple[frozenset[str], dict[str, str]]:
    """``Projects.device_imports`` in a process that has no engine."""
    return gate_projects(settings).device_imports(source, path)
