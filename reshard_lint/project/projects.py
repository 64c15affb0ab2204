"""The projects one process meets, and how their modules are summarised.

The engine asks for a file's view of its project (``view``); the view asks for module
summaries, which are made here by the same parser and interpreter as any analysed file,
running the module body only. Layouts are found once per directory.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Mapping

from .module_text import module_level
from .roots import Layout, layout_for
from .summaries import callable_export, exportable, frozen_config, registry_export
from .view import FileView, Project

if TYPE_CHECKING:
    from ..analysis.arguments import Call
    from ..analysis.context import FileContext
    from ..analysis.values import Value


def may_import_devices(source: str) -> bool:
    """Whether the gate asks the project what ``source`` imports: whenever it imports
    anything. Any import may bring a function that moves arrays or builds meshes, whatever
    this file's own words: a training script whose meshes and moves all come through
    imports (``place(x, ROLLOUT)``) is analysed when it calls one; imported.py decides
    which names matter, from the imported modules' summaries."""
    return "import" in source


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
                directory, src=list(src) if isinstance(src, (list, tuple)) else None)
        project = self._projects.get(layout)
        if project is None:
            project = self._projects[layout] = Project(layout, self._summarise, lambda p: self.unsaved(p),
                                                       record=self._record)
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
        from ..stages import newer_syntax
        from ..analysis import Analyzer
        from ..analysis.context import FileContext
        from ..analysis.mutation import share
        from ..analysis.tree import Module
        from ..analysis.values import QualVal
        from .recording import RecordingAnalyzer

        run = module_level(text, full)
        view.shape = run.shape
        if run.tree is None:
            return None  # unknown: the importing file is not the place to report it
        tree = run.tree if run.body is text else newer_syntax.parse(run.body)
        # The context keeps the module: it places and spells the exported values' nodes
        # in the importers' messages.
        module = Module(tree, run.body)
        ctx = FileContext(module, run.body, path, self.settings)
        ctx.python_tree = tree
        ctx.project = view
        ctx.display = view.project.display(path)
        guarded = run.guarded
        analyzer = RecordingAnalyzer(ctx, _ignore, guarded) if guarded else Analyzer(ctx, _ignore)
        functions = False
        try:
            analyzer.run(module_only=True)
            scope = analyzer.module_scope
            if scope is not None:
                share(scope.vars.values())
            exports: dict[str, Value] = {}
            for name, value in (scope.vars.items() if scope is not None else ()):
                # (scope is not None in this loop)
                if name in analyzer.filed and name not in run.rebound \
                        and (table := registry_export(value, path)) is not None:
                    # Filed by the module body alone (flow.store_global): what it left.
                    exports[name] = table
                    functions = True
                    continue
                if scope.bindings.get(name) != 1 or name in run.rebound:  # type: ignore[union-attr]
                    continue
                if name in guarded and not exportable(value):
                    # Bound in an if/try/with block: an importer that has the name at all
                    # has what that one statement bound.
                    value = analyzer.bound_at.get(name, value)  # type: ignore[attr-defined]
                # A re-export (``from .mesh import TRAIN`` in __init__.py) stays a name, resolved
                # only when an importer asks for it: resolving every one here would analyse
                # every module a package's __init__.py imports.
                if exportable(value) or type(value) is QualVal:
                    exports[name] = value
                elif (config := frozen_config(value, analyzer.field_value)) is not None:
                    exports[name] = config
                elif name in run.called and (func := callable_export(value, path)) is not None:
                    exports[name] = func
                    functions = True
        finally:
            # An exported function keeps its module's scope as its closure: not taken apart.
            analyzer.release(keep_values=functions)
        return exports, ctx


    def _record(self, text: str, path: str, view: FileView, keys: frozenset[tuple[int, int]]) \
            -> "tuple[dict[tuple[int, int], list[Call]], FileContext] | None":
        """The whole module ``text`` analysed (its functions' own runs included) for the
        arguments of the calls at ``keys`` ((line, column)), each evaluation's; and its
        context, which places their values' nodes in another module's messages."""
        from ..stages import newer_syntax
        from ..analysis import Analyzer
        from ..analysis.context import FileContext
        from ..analysis.mutation import share
        from ..analysis.tree import Module

        try:
            tree = newer_syntax.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        ctx = FileContext(Module(tree, text), text, path, self.settings)
        ctx.python_tree = tree
        ctx.project = view
        ctx.display = view.project.display(path)
        analyzer = Analyzer(ctx, _ignore)
        recorder: dict[tuple[int, int], list[Call]] = {k: [] for k in keys}
        analyzer.recorder = recorder
        try:
            analyzer.run()
        except RecursionError:
            return None
        finally:
            analyzer.release(keep_values=True)  # (the arguments' values outlive the run)
        # Containers among them are another module's: changed in place there, copied.
        share(v for calls in recorder.values() for call in calls
              for v in (*(x for x, _ in call.positional), *(x for x, _ in call.keywords.values())))
        return recorder, ctx


def _ignore(event: object) -> None:
    pass  # the module's own findings are reported when it is checked itself


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
