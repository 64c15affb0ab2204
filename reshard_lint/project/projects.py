"""The projects one process meets, and how their modules are summarised.

The engine asks for a file's view of its project (``view``); the view asks for module
summaries, which are made here by the same parser and interpreter as any analysed file,
running the module body only. Layouts are found once per directory.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Callable, Mapping

from .roots import Layout, layout_for
from .summaries import exportable
from .view import FileView, Project

if TYPE_CHECKING:
    from ..analysis.context import FileContext
    from ..analysis.values import Value


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
        if "import" not in source or not ("device" in source or "shard" in source or "mesh" in source
                                          or "Mesh" in source):
            return frozenset(), {}
        view = self.view(path)
        if view is None:
            return frozenset(), {}
        from .imported import device_imports

        return device_imports(source, view), view.deps

    def _summarise(self, text: str, path: str, view: FileView) -> "tuple[dict[str, Value], FileContext] | None":
        """The module body of ``text`` run for the values it binds once, and its context."""
        from .. import newer_syntax
        from ..analysis import Analyzer
        from ..analysis.context import FileContext
        from ..analysis.values import QualVal
        from ..cst_parse import parse_module
        from ..nesting import too_deep

        try:
            tree = newer_syntax.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # unknown: the importing file is not the place to report it
        if too_deep(text, tree) is not None:
            return None
        module = parse_module(text, python_accepted=True)
        ctx = FileContext(module, text, path, self.settings)
        ctx.python_tree = tree
        ctx.project = view
        ctx.display = view.project.display(path)
        analyzer = Analyzer(ctx, _ignore)
        try:
            analyzer.run(module_only=True)
            scope = analyzer.module_scope
            exports: dict[str, Value] = {}
            for name, value in (scope.vars.items() if scope is not None else ()):
                if scope.bindings.get(name) != 1 or _rebound(text, name):  # type: ignore[union-attr]
                    continue
                if type(value) is QualVal:
                    # Re-exported (``from .mesh import TRAIN`` in __init__.py): the value
                    # the other module exports, when it is a project module's.
                    value = view.value(value.qual) or value
                if exportable(value):
                    exports[name] = value
        finally:
            analyzer.release()
        return exports, ctx


def _ignore(event: object) -> None:
    pass  # the module's own findings are reported when it is checked itself


def _rebound(text: str, name: str) -> bool:
    """A function may rebind it (``global name``): its value at import time is not its value."""
    return re.search(rf"\bglobal\b[^\n]*\b{re.escape(name)}\b", text) is not None


_GATE_PROJECTS: dict[tuple[str, ...], Projects] = {}


def device_imports(source: str, path: str, settings: Mapping[str, object]) -> tuple[frozenset[str], dict[str, str]]:
    """``Projects.device_imports`` in a process that has no engine (the gate's workers,
    flake8 before the engine is needed): one set of projects per ``src`` setting."""
    src = settings.get("src")
    key = tuple(src) if isinstance(src, (list, tuple)) else ()
    projects = _GATE_PROJECTS.get(key)
    if projects is None:
        projects = _GATE_PROJECTS[key] = Projects({"src": list(key)} if key else {})
    return projects.device_imports(source, path)
