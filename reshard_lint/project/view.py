"""A project as the analysis of one of its files sees it: imported names to values.

``Project`` holds what a process knows of one project (its layout, module index and the
summaries built so far); ``FileView`` is one file's window on it, which the interpreter
asks for the value behind a qualified name (``mypkg.mesh.MESH``) and which records the
project files the answer was read from. Reading goes through a callable, so the language
server can hand in the unsaved text of open documents.
"""

from __future__ import annotations

import ast
import os
import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Mapping, cast

from ..core.collector import kept
from .graph import ImportGraph
from .modules import MODELLED, ModuleFile, ModuleIndex
from .roots import Layout
from .interface import UNKNOWN
from .constants import mutable
from .summaries import Summary, digest, made, reexport

if TYPE_CHECKING:
    from ..analysis.arguments import Call
    from ..analysis.context import FileContext
    from ..analysis.values import Value

# Texts of project files kept by a Project, the most recently read.
_RECENT = 8
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Analyse = Callable[[str, str, "FileView", bool], "tuple[dict[str, Value], FileContext] | None"]
Record = Callable[[str, str, "FileView", frozenset[tuple[int, int]]],
                  "tuple[dict[tuple[int, int], list[Call]], FileContext] | None"]


def read_file(path: str) -> str | None:
    from ..core.sources import SourceError, decode, read_bytes

    try:
        return decode(read_bytes(path), path).text
    except (SourceError, OSError):
        return None


def unchanged(deps: Mapping[str, str], now: dict[str, str | None] | None = None,
              unsaved: Callable[[str], str | None] = lambda path: None) -> bool:
    """Whether every file in ``deps`` still has the content it had (a cached result's
    check); ``now`` remembers the digests read, for the other entries of a run;
    ``unsaved``: an editor's text of a file, when it has one open."""
    now = {} if now is None else now
    return all(current(path, now, unsaved) == d for path, d in deps.items())


def current(path: str, now: dict[str, str | None],
            unsaved: Callable[[str], str | None] = lambda path: None) -> str | None:
    """The digest of the file's content now (None: unreadable), read once per ``now``."""
    if path not in now:
        text = unsaved(path)
        if text is None:
            text = read_file(path)
        now[path] = None if text is None else digest(text)
    return now[path]


def _stamp(path: str) -> tuple[int, int] | None:
    """What says a file is unchanged since it was read: its mtime and size; None when it
    cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class Project:
    def __init__(self, layout: Layout, analyse: Analyse,
                 unsaved: Callable[[str], str | None] = lambda path: None, record: Record | None = None) -> None:
        self.layout = layout
        self._record = record
        # (file, digest, call positions) -> the recorded arguments, the file's context, and
        # the deps and contexts of its view (FileView.arguments_at)
        self.recorded: dict[tuple[str, str, frozenset[tuple[int, int]]], object] = {}
        # Files a result rests on as a whole (calls in their functions' bodies, which no
        # interface hash holds): a cached result holds only while they are unchanged.
        self.text_deps: set[str] = set()
        self.index = ModuleIndex(layout)
        self.unsaved = unsaved  # an editor's text of the file, when it has one open
        self._analyse = analyse
        self._summaries: dict[str, Summary] = {}  # realpath -> the latest summary
        self._building: set[str] = set()
        self._stamps: dict[str, tuple[tuple[int, int], str]] = {}  # path -> (stat, digest)
        # path -> text of the files read last: a gate over a whole tree reads hundreds of
        # modules, and most are asked again only through the memo (3-5 MB kept otherwise).
        self._recent: OrderedDict[str, str] = OrderedDict()
        self.memo: dict[tuple[object, ...], object] = {}  # the text tests of imported.py, by content
        # (path, digest) -> hashes.summary_part of every module summarised here
        self.shapes: dict[tuple[str, str], str] = {}
        # (file, dict name) -> whether only that module's body files into the dict, and the
        # files the answer was read from (FileView.files_only_here)
        self.sealed: dict[tuple[str, str], tuple[bool, dict[str, str]]] = {}
        # identifier -> the project files that spell it, with every file's digest (built
        # once, on the first question of callers.py); parsed trees by digest
        self._words: tuple[dict[str, list[str]], dict[str, str]] | None = None
        self.words_made = 0
        self._graph: tuple[ImportGraph, int] | None = None
        self._trees: OrderedDict[str, ast.Module | None] = OrderedDict()
        # (file, function) -> its calls in other modules and the files read (FileView.calls_of)
        self.callers: dict[tuple[str, str], tuple[object, dict[str, str], int]] = {}
        # (file, name) -> whether the project only reads that module-level container
        # (constants.py), the files read, and the identifier index's generation
        self.read_only: dict[tuple[str, str], tuple[bool, dict[str, str], int]] = {}

    def words(self, check: bool) -> int:
        """Build the index of the identifiers project files spell, or again where ``check``
        finds a file changed since; its generation (callers' answers keep theirs)."""
        if self._words is None or check and not self.current(self._words[1]):
            from .registries import project_files

            words: dict[str, list[str]] = {}
            read: dict[str, str] = {}
            for path in project_files(self.layout.import_roots):
                found = self.text(path)
                if found is None:
                    continue
                read[path] = found[1]
                spelled = set(_WORD.findall(found[0])) if found[0].isascii() else {"*"}
                for w in spelled:
                    words.setdefault(w, []).append(path)
            self._words = (words, read)
            self.words_made += 1
        return self.words_made

    def files_naming(self, name: str, deps: dict[str, str]) -> list[str]:
        """The project files (under the import roots) whose text spells ``name`` as an
        identifier (after ``words``), each with its digest in ``deps``. A file that
        spells identifiers outside ASCII counts for every name. (A file that does not
        spell it yet is no dependency: one that starts calling a function is seen when
        the function's file is analysed again, as a file added to the project is.)"""
        assert self._words is not None
        words, read = self._words
        found = sorted(set(words.get(name, [])) | set(words.get("*", [])))
        deps.update((path, read[path]) for path in found)
        return found

    def import_graph(self) -> ImportGraph:
        """The project's import graph, read on demand (through the editor's text)."""
        # Read again after the identifier index was (a file changed: Project.words).
        if self._graph is None or self._graph[1] != self.words_made:
            self._graph = (ImportGraph(self.index, lambda p: (self.text(p) or ("", ""))[0]), self.words_made)
        return self._graph[0]

    def view_of(self, path: str) -> FileView:
        """The view of the project from the module at ``path``."""
        name = self.index.module_name(path)
        return FileView(self, self.index.find(name) if name is not None else None)

    def tree(self, text: str) -> ast.Module | None:
        """Python's tree of a project file's text (the last few kept by digest)."""
        key = digest(text)
        if key in self._trees:
            self._trees.move_to_end(key)
            return self._trees[key]
        tree = _parsed(text)
        self._trees[key] = tree
        if len(self._trees) > 32:
            self._trees.popitem(last=False)
        return tree

    def display(self, path: str) -> str:
        rel = os.path.relpath(path, self.layout.root)
        return path if rel.startswith(os.pardir) else rel.replace(os.sep, "/")

    def text(self, path: str) -> tuple[str, str] | None:
        """(text, digest) of a project file, the editor's when it has the file open; a file
        unchanged on disk is not read again while its text is among the last read."""
        text = self.unsaved(path)
        if text is not None:
            return text, digest(text)
        stamp = _stamp(path)
        if stamp is None:
            return None
        known = self._stamps.get(path)
        if known is not None and known[0] == stamp:
            text = self._recent.get(path)
            if text is not None:
                self._recent.move_to_end(path)
                return text, known[1]
        return self._read(path, stamp)

    def digest_of(self, path: str) -> str | None:
        """The digest of a project file's content now, from its stat when it was read before."""
        text = self.unsaved(path)
        if text is not None:
            return digest(text)
        stamp = _stamp(path)
        if stamp is None:
            return None
        known = self._stamps.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        found = self._read(path, stamp)
        return found[1] if found is not None else None

    def _read(self, path: str, stamp: tuple[int, int]) -> tuple[str, str] | None:
        text = read_file(path)
        if text is None:
            return None
        d = digest(text)
        self._stamps[path] = (stamp, d)
        self._recent[path] = text
        if len(self._recent) > _RECENT:
            self._recent.popitem(last=False)
        return text, d

    def current(self, deps: dict[str, str]) -> bool:
        """Whether every file in ``deps`` still has the content it was read with."""
        for path, d in deps.items():
            if self.digest_of(path) != d:
                return False
        return True

    def interfaces(self, deps: Mapping[str, str]) -> dict[str, str]:
        """The interfaces (interface.py) of the files of ``deps`` as this process read
        them: the gate part of each, and the summary part of those summarised here. A file
        whose text here is not the one of ``deps`` gets none: it must then be unchanged."""
        from .module_scan import per_content
        from .interface import gate_part

        out: dict[str, str] = {}
        for path, d in deps.items():
            if not path.endswith(".py") or path in self.text_deps:
                # Not a module (a requirements file RSH308 read): its interface as Python
                # says nothing of what it decides, so a result resting on it holds only
                # while it is unchanged.
                continue
            key = ("interface", path, d)
            gate = self.memo.get(key)
            if gate is None:
                found = self.text(path)
                if found is None or found[1] != d:
                    continue
                # The text facts the gate already took of this content, from its memo.
                text = found[0]
                gate = self.memo[key] = gate_part(
                    text, lambda compute: per_content(self.memo, path, d, text, compute))
            shape = self.shapes.get((path, d))
            out[path] = f"{gate}:{shape}" if shape is not None else str(gate)  # (a str: gate_part's)
        return out

    def summary(self, mod: ModuleFile, full: bool = False) -> Summary | None:
        """The summary of a project module; None for a namespace package, an unreadable
        file, or a module whose own analysis is under way (an import cycle: unknown).
        ``full``: one that also exports the functions importers call (defs.py); made once
        an importer calls one, it then serves every importer."""
        if mod.path is None:
            return None
        key = mod.key
        known = self._summaries.get(key)
        if known is not None and (known.full or not full) and self.current(known.deps):
            return known
        if key in self._building:
            return None
        found = self.text(mod.path)
        if found is None:
            return None
        text, d = found
        self._building.add(key)
        view = FileView(self, mod)
        try:
            analysed = self._analyse(text, mod.path, view, full)
        except Exception:  # noqa: BLE001 - an imported module's trouble is unknown, not the importer's error
            analysed, view.shape = None, None
        finally:
            self._building.discard(key)
        self.shapes[(mod.path, d)] = view.shape or UNKNOWN
        exports, ctx = analysed if analysed is not None else ({}, None)
        summary = made(mod.name, mod.path, self.display(mod.path), d, exports, ctx, view.deps, view.contexts, full)
        self._summaries[key] = summary
        kept()  # core/collector.py: long-lived, out of later collections in a flake8 worker
        return summary


class FileView:
    """One file's imports of the project, and the project files they were read from."""

    def __init__(self, project: Project, module: ModuleFile | None) -> None:
        self.project = project
        self.module = module
        self.deps: dict[str, str] = {}  # path -> digest of every summary used, transitively
        self.contexts: list[FileContext] = []  # of the modules whose values were taken
        # Of the module this view summarises: hashes.summary_part of the text it ran.
        self.shape: str | None = None
        self._values: dict[str, Value | None] = {}  # value(), asked for every qualified call
        self._sealed: dict[tuple[str, str], bool] = {}  # files_only_here, asked at each filing
        self._words_checked = False  # Project.words: the project's files checked for changes

    def calls_of(self, path: str, name: str) -> list[tuple[str, ast.Call]] | None:
        """The calls the project's other modules make of ``name``, a top-level function or
        class of the module at ``path`` (callers.py), or None where they cannot all be
        seen; the files read are this view's dependencies."""
        from .callers import calls_of

        return self._per_name(self.project.callers, path, name, calls_of)  # type: ignore[return-value]

    def arguments_at(self, path: str, keys: frozenset[tuple[int, int]]) -> dict[tuple[int, int], list[Call]] | None:
        """The arguments of the calls at ``keys`` ((line, column)) of the project file at
        ``path``, as that file's own analysis evaluates them (each evaluation's; none for a
        call its analysis does not reach). Its context and those of the modules it read
        join this view's, so that messages place their nodes; its files are this view's
        dependencies."""
        project = self.project
        found = project.text(path)
        if found is None or project._record is None:
            return None
        key = (os.path.realpath(path), found[1], keys)
        known = project.recorded.get(key)
        if known is None or not project.current(known[2]):  # type: ignore[index]
            view = project.view_of(path)
            made = project._record(found[0], path, view, keys)
            deps = dict(view.deps)
            deps[path] = found[1]
            project.text_deps.add(path)
            known = (made, view.contexts, deps)
            project.recorded[key] = known
        made, contexts, deps = cast("tuple[Any, list[FileContext], dict[str, str]]", known)
        self.deps.update(deps)
        if made is None:
            return None
        calls, ctx = made
        for c in (ctx, *contexts):
            if c not in self.contexts:
                self.contexts.append(c)
        return calls

    def files_only_here(self, path: str, name: str) -> bool:
        """Can only the module body of ``path`` (this view's file) file items into its
        module-level dict ``name``, through its own functions (registries.py)? Read from
        Python's trees of the file and of every project file that names the dict or one of
        those functions (each recorded in ``deps``: an edit of any can change the answer)."""
        key = (os.path.realpath(path), name)
        asked = self._sealed.get(key)
        if asked is not None:
            return asked  # (one file's analysis asks at each filing: the files were checked once)
        known = self.project.sealed.get(key)
        if known is not None and self.project.current(known[1]):
            self._sealed[key] = known[0]
            self.deps.update(known[1])
            return known[0]
        deps: dict[str, str] = {}
        answer = self._files_only_here(path, name, deps)
        self.project.sealed[key] = (answer, deps)
        self._sealed[key] = answer
        self.deps.update(deps)
        return answer

    def _files_only_here(self, path: str, name: str, deps: dict[str, str]) -> bool:
        from . import registries

        found = self.project.text(path)
        if found is None:
            return False
        deps[path] = found[1]
        own = _parsed(found[0])
        names = registries.filers(own, name) if own is not None else None
        if names is None:
            return False
        own_key = os.path.realpath(path)
        for other in registries.project_files(self.project.layout.import_roots):
            if os.path.realpath(other) == own_key:
                continue
            text = self.project.text(other)
            if text is None:
                continue
            deps[other] = text[1]
            # (A name spelled outside ASCII may be the same identifier: such a file is parsed.)
            if text[0].isascii() and name not in text[0] and not any(n in text[0] for n in names):
                continue
            tree = _parsed(text[0])
            if tree is None or registries.named_elsewhere(tree, names, name):
                return False
        return True

    def absolute(self, level: int, module: str | None) -> str | None:
        """What ``from <level dots><module> import`` names, or None outside a package."""
        if self.module is None:
            return None
        return self.project.index.resolve_relative(self.module, level, module)

    def of(self, module: ModuleFile | None) -> FileView:
        """A view of the same project from ``module`` (whose relative imports it resolves)."""
        return FileView(self.project, module)

    def value(self, qual: str, _seen: frozenset[str] = frozenset()) -> Value | None:
        """The value a project module exports under ``qual``'s last part, or None (not a
        project module's name, a module itself, or nothing exportable)."""
        if _seen:
            return self._value(qual, _seen)
        if qual not in self._values:
            from ..analysis.mutation import own_copy

            found = self._value(qual, _seen)
            self._values[qual] = own_copy(found) if found is not None else None
        return self._values[qual]

    def _value(self, qual: str, _seen: frozenset[str]) -> Value | None:
        parts = qual.split(".")
        if len(parts) < 2 or parts[0] in MODELLED or qual in _seen:
            return None
        index = self.project.index
        if index.find(parts[0]) is None:
            return None
        mod = index.find(".".join(parts[:-1]))
        if mod is None or index.find(qual) is not None:
            return None
        summary = self._summary(mod, parts[-1])
        found = summary.exports.get(parts[-1]) if summary is not None else None
        if found is None and summary is not None:
            from .imported import star_source

            # Bound by ``from .meshes import *`` (a package's __init__.py): that module's.
            source = star_source(self, mod, parts[-1])
            if source is not None:
                return self.value(f"{source}.{parts[-1]}", _seen | {qual})
        if found is not None and reexport(found):
            # Re-exported (``from .mesh import TRAIN`` in __init__.py): followed when asked;
            # a cycle of re-exports is unknown.
            return self.value(getattr(found, "qual", ""), _seen | {qual})
        if found is not None and mutable(found) and not self._only_read(mod.path or "", parts[-1]):
            return None  # a list or dict some code may change in place (constants.py)
        return found

    def _only_read(self, path: str, name: str) -> bool:
        from .constants import only_read

        return bool(self._per_name(self.project.read_only, path, name, only_read))

    def _per_name(self, memo: dict[tuple[str, str], Any], path: str, name: str,
                  compute: Callable[["Project", str, str, dict[str, str]], object]) -> object:
        """What ``compute`` says of ``name`` in the file at ``path`` from the project's other
        files (the identifier index's), kept in ``memo`` until a project file changes; the
        files it read become this view's dependencies. The project's files are checked
        for changes once per view (one file's analysis)."""
        made = self.project.words(check=not self._words_checked)
        self._words_checked = True
        key = (os.path.realpath(path), name)
        known = memo.get(key)
        if known is None or known[2] != made:
            deps: dict[str, str] = {}
            known = memo[key] = (compute(self.project, path, name, deps), deps, made)
        self.deps.update(known[1])
        return known[0]

    def module_of(self, qual: str) -> str | None:
        """The project module that defines ``qual`` (its longest prefix the project holds),
        or None when ``qual`` is no name of the project's (for a culprit's words:
        analysis/reasons.py)."""
        parts = qual.split(".")
        if parts[0] in MODELLED:
            return None
        index = self.project.index
        if index.find(parts[0]) is None:
            return None
        for end in range(len(parts) - 1, 0, -1):
            name = ".".join(parts[:end])
            if index.find(name) is not None:
                return name
        return parts[0]

    def forget(self, qual: str, instead: Value) -> None:
        """This file assigns ``qual`` (``meshes.TRAIN = ...``): from here on it reads
        ``instead`` there, not what the module binds."""
        self._values[qual] = instead

    def star(self, module: str, _seen: frozenset[str] = frozenset()) -> dict[str, Value]:
        """The public values ``from module import *`` binds: its own, and those a star
        import of its own binds there (``from .meshes import *`` in a package's
        ``__init__.py``: ``imported.star_source`` says which names)."""
        mod = self.project.index.find(module)
        if mod is None or module.split(".")[0] in MODELLED or module in _seen:
            return {}
        summary = self._summary(mod, None)
        if summary is None:
            return {}
        from ..analysis.mutation import own_copy
        from .imported import star_source, star_sources

        out = {k: own_copy(v) for k, v in summary.exports.items() if not k.startswith("_")}
        for source in star_sources(self, mod):
            for k, v in self.star(source, _seen | {module}).items():
                if k not in out and star_source(self, mod, k) == source:
                    out[k] = v
        return out

    def _summary(self, mod: ModuleFile, name: str | None) -> Summary | None:
        if mod.path is None:
            return None
        full = late = False
        if name is not None:
            from .imported import (
                binds_call, calls_function, exports_constant, exports_value, files_registry, reexports_callable,
            )

            # The gate's text test: only a name the module may bind to a device value at
            # module level gets the module analysed; and a literal constant or a
            # dataclass (a configuration module's), and a function an importer calls,
            # which runs there as a function of its own file does, or such a function
            # the module re-exports (a package's ``from .meshes import *``).
            full = calls_function(self, mod, name) or files_registry(self, mod, name)
            value = exports_value(self, mod, name)
            if not full and not value and not exports_constant(self, mod, name) \
                    and not reexports_callable(self, mod, name):
                return None
            # A name bound to a call (``TRAIN = Mesh(...)``, ``step = jax.jit(...)``): a
            # value the module-level summary holds, or else a function the full one does.
            late = full and value and binds_call(self, mod, name)
            full = full and not late
        summary = self.project.summary(mod, full)
        if late and summary is not None and name not in summary.exports:
            summary = self.project.summary(mod, True)
        if summary is None:
            return None
        self.deps.update(summary.deps)
        for ctx in summary.contexts:
            if ctx not in self.contexts:
                self.contexts.append(ctx)
        return summary


def _parsed(text: str) -> "ast.Module | None":
    from ..stages import newer_syntax

    try:
        return newer_syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
