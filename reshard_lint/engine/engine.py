"""One engine for every front end: prefilter, gate, parse, analyse, pick diagnostics.

Cost is paid in stages so that most files stop early:

1. a substring prefilter on the text (no parse at all);
2. for files that pass, a cheap pass over Python's ``ast`` (free inside flake8, which
   already parsed the file) that looks for the shapes a finding needs;
3. for long files, the same question per component (components.py) or top-level
   statement (slicing.py): only the parts that can matter are analysed;
4. only then the one batched traversal of Python's tree for all rules; positions in libcst's
   terms are computed for the nodes a diagnostic names (analysis/tree.py).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..stages import newer_syntax
from ..core.diagnostic import Diagnostic, Related
from ..stages.gate import decide, gate_facts, may_have_findings, prefilter
from ..stages.nesting import too_deep
from ..stages.prepared import Prepared, prepare
from ..rules import Rule, all_rules

if TYPE_CHECKING:
    from ..analysis.tree import Module
    from ..stages.call_counts import SyntaxCounts

# (file context, transfer events in program order, anchor node id -> its diagnostic)
Observer = Callable[[Any, list[Any], dict[int, Diagnostic]], None]

PARSE_ERROR = "RSH001"
INTERNAL_ERROR = "RSH002"
# A file that could not be read or decoded: reported by the front ends (runner.py), which
# read the files; the engine only ever sees text.
IO_ERROR = "RSH003"
_ANALYSIS_RECURSION_LIMIT = 12000


class Cancelled(Exception):
    """The caller no longer wants this result (an editor sent a newer version)."""


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Set when the file could not be analysed; diagnostics then holds one RSH001/RSH002.
    error: str | None = None
    stage: str = "prefilter"  # how far the file went: prefilter, gate, analysed
    # The project files whose summaries the analysis read (path -> content digest): the
    # result holds while they are unchanged.
    deps: dict[str, str] = field(default_factory=dict)


class Engine:
    """Rules are built once per engine (once per process), not once per file."""

    def __init__(self, settings: Mapping[str, object] | None = None,
                 rules: Sequence[type[Rule]] | None = None) -> None:
        self.settings = dict(settings or {})
        self._rule_classes = rules
        self._rules: list[Rule] | None = None
        self.by_event: dict[type, list[Rule]] = {}
        from ..project.projects import Projects

        self.projects = Projects(self.settings)

    @property
    def rules(self) -> list[Rule]:
        # Built on first use: the rule modules import the analysis, which a run whose files
        # all stop at the gate never needs (flake8 workers, warm runs).
        if self._rules is None:
            classes = self._rule_classes if self._rule_classes is not None else all_rules()
            self._rules = [r(self.settings) for r in classes]
            for rule in self._rules:
                for ev in rule.events:
                    self.by_event.setdefault(ev, []).append(rule)
        return self._rules

    def lint_source(self, source: str, path: str = "<stdin>", tree: ast.AST | None = None,
                    *, force: bool = False, slice_min_lines: int | None = None,
                    cancelled: Callable[[], bool] | None = None,
                    prepared: Prepared | None = None,
                    imported: frozenset[str] = frozenset()) -> FileResult:
        """Diagnostics for one file. ``force`` skips the prefilter and the gate (the caller
        ran them, and says with ``imported`` which names the file imports from its project
        that may hold device values); ``slice_min_lines`` overrides when a file is long
        enough to slice;
        ``cancelled`` is asked between stages and for every event, and raises Cancelled;
        ``prepared``: what the file's Python tree gave, made where the tree was."""
        result = FileResult(path)
        # Names imported from the project's modules that may hold meshes: the file's own
        # text need not name any, and they seed its slice (components.py) as what the
        # file builds itself does.
        if not force:
            imported = self.projects.device_imports(source, path)[0]
            if not imported and not prefilter(source):
                return result
            result.stage = "gate"
            try:
                if tree is None:
                    tree = newer_syntax.parse(source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None  # reported below with Python's reason
            if tree is not None and not (decide(gate_facts(tree), imported) if imported
                                         else may_have_findings(tree)):
                return result
        result.stage = "analysed"
        from ..analysis.tree import Module

        original = source
        if prepared is None:
            if tree is None:
                # One parse for the slicing, the call counts and the tree the analysis
                # reads, unless the gate just parsed the same text in this process.
                from ..stages.gate import tree_for

                tree = tree_for(source) or _parse_or_none(source)
            prepared = prepare(source, tree, slice_min_lines, imported)
        source, line_map, counts = prepared.text, prepared.line_map, prepared.counts
        _check(cancelled)

        def at(line: int) -> int:  # a line of ``source`` in the file the user has
            return line_map[line - 1] if line_map and 1 <= line <= len(line_map) else line

        python_tree = tree if line_map is None and isinstance(tree, ast.Module) else None
        tree = None
        try:
            if python_tree is None:
                python_tree = newer_syntax.parse(source)
        except SyntaxError as exc:
            line = at(max(exc.lineno or 1, 1))
            what = exc.msg
            if "too many nested" in what or "too deeply nested" in what:
                what = f"nesting too deep: {what}"
            return _failed(result, PARSE_ERROR, line,
                           f"could not parse the file: {what} (line {line}, column {max(exc.offset or 1, 1)})")
        except (UnicodeEncodeError, UnicodeDecodeError, UnicodeTranslateError) as exc:  # (with a reason)
            # Text from an editor or stdin may hold lone surrogates; no file decoded by
            # sources.decode does.
            return _failed(result, PARSE_ERROR, 1, "could not parse the file: not valid Unicode text "
                                                  f"({exc.reason} at character {exc.start})")
        except ValueError as exc:  # a NUL byte
            return _failed(result, PARSE_ERROR, 1, f"could not parse the file: {exc}")
        except (RecursionError, MemoryError):
            python_tree = None  # Python's parser gave up on the nesting: where, below
        deep = too_deep(source, python_tree)
        if deep is not None:
            # The analysis recurses through the tree: bounded before it starts.
            return _failed(result, PARSE_ERROR, at(deep[0]),
                           f"could not parse the file: nesting too deep: {deep[1]}")
        if python_tree is None:
            return _failed(result, PARSE_ERROR, 1, "could not parse the file: nesting too deep for Python's parser")
        # too_deep() bounds nesting at a depth the analyzer's recursion handles within
        # this limit; Python's default of 1000 frames is reached by depth ~400.
        _check(cancelled)
        old_limit = sys.getrecursionlimit()
        try:
            sys.setrecursionlimit(max(old_limit, _ANALYSIS_RECURSION_LIMIT))
            module = Module(python_tree, source)
            view = self.projects.view(path)
            result.diagnostics = self.analyse(module, original, path, line_map, python_tree=python_tree,
                                              parsed_text=source, cancelled=cancelled, call_counts=counts,
                                              project=view)
            if view is not None:
                result.deps = view.deps
        except Cancelled:
            raise
        except RecursionError:
            _failed(result, INTERNAL_ERROR, 1, "could not analyse the file: expressions nested too deeply")
        except Exception as exc:  # noqa: BLE001 - a linter bug must not stop the run
            _failed(result, INTERNAL_ERROR, 1,
                    f"internal error while analysing the file: {type(exc).__name__}: {exc}")
        finally:
            sys.setrecursionlimit(old_limit)
        return result

    def analyse(self, module: "Module", source: str, path: str,
                line_map: list[int] | None = None, observer: Observer | None = None,
                python_tree: ast.Module | None = None, parsed_text: str | None = None,
                cancelled: Callable[[], bool] | None = None,
                call_counts: "SyntaxCounts | None" = None, project: Any = None) -> list[Diagnostic]:
        """Diagnostics for a parsed module; ``observer`` also sees every transfer event and
        the diagnostic anchored at each call (``reshard-lint coverage``)."""
        from ..analysis import Analyzer
        from ..analysis.context import FileContext

        rules = self.rules

        ctx = FileContext(module, source, path, self.settings, line_map)
        ctx.python_tree = python_tree
        ctx.parsed_text = parsed_text
        ctx.call_counts = call_counts
        ctx.project = project  # project/view.py FileView: values imported from the project's modules
        # anchor node id -> (priority, diagnostic): one diagnostic per call, the most specific.
        best: dict[int, tuple[int, Diagnostic]] = {}
        finishers: list[Rule] = []

        transfers: list[object] = []

        def sink(event: object) -> None:
            _check(cancelled)
            through = getattr(event, "through", None)
            if observer is not None and type(event).__name__ == "Transfer" and through is None:
                # A transfer of another module's function run for a call here is a site
                # of that module (coverage counts it there), not a second one here.
                transfers.append(event)
            for rule in self.by_event.get(type(event), ()):
                if ctx.runtime not in rule.runtimes:
                    continue
                for diag in rule.check(event):  # type: ignore[arg-type]
                    if through is not None:
                        diag = _through(ctx, diag, through)
                    key = id(event.node)  # type: ignore[attr-defined]
                    prio = rule.priority
                    if key not in best or prio > best[key][0]:
                        best[key] = (prio, diag)

        for rule in rules:
            rule.start(ctx)
            finishers.append(rule)
        analyzer = Analyzer(ctx, sink)
        if observer is not None:
            analyzer.expected_sink = transfers.append
        analyzer.run()
        for rule in finishers:
            if ctx.runtime not in rule.runtimes:
                continue
            for node, diag in rule.finish(ctx):
                key = id(node)
                if key not in best or rule.priority > best[key][0]:
                    best[key] = (rule.priority, diag)
        if observer is not None:
            observer(ctx, transfers, {k: d for k, (_, d) in best.items()})
        analyzer.release()
        diags = [d for _, d in best.values()]
        return sorted(set(diags), key=lambda d: d.sort_key)


def _failed(result: FileResult, code: str, line: int, message: str) -> FileResult:
    """``result`` as a file that could not be parsed or analysed: one diagnostic saying why."""
    result.error = message
    result.diagnostics = [Diagnostic(code, line, 0, message)]
    return result


def _parse_or_none(source: str) -> ast.Module | None:
    try:
        return newer_syntax.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _check(cancelled: Callable[[], bool] | None) -> None:
    if cancelled is not None and cancelled():
        raise Cancelled


_ENGINES: dict[tuple[tuple[str, object], ...], Engine] = {}


def engine_for(settings: Mapping[str, object] | None = None) -> Engine:
    """This process's engine for ``settings``: its rules are built once, not once per file.

    The flake8 plugin, the command's workers and the language server all take theirs here.
    """
    key = tuple(sorted((settings or {}).items()))
    engine = _ENGINES.get(key)
    if engine is None:
        engine = _ENGINES[key] = Engine(settings)
    return engine


def default_engine() -> Engine:
    return engine_for(None)


def lint_source(source: str, path: str = "<stdin>", settings: Mapping[str, object] | None = None,
                tree: ast.AST | None = None) -> FileResult:
    return engine_for(settings).lint_source(source, path, tree)


def _through(ctx: Any, diag: Diagnostic, inner: object) -> Diagnostic:
    """A diagnostic at a call of another module's function, pointing at the transfer
    inside it that the call's arguments make fail, and without a fix: the code to change
    may be in either file."""
    where = ctx.locate(inner)
    extra = (Related(where[1], where[2], "the transfer this call runs", where[0]),) if where is not None else ()
    return replace(diag, fix=None, related=diag.related + extra)
