"""One engine for every front end, and the one function that takes a file through the stages.

``check_source`` runs the stages in order, each cheaper than the next, so that most
files stop early:

1. a substring prefilter on the text (no parse at all);
2. for files that pass, a cheap pass over Python's ``ast`` (free inside flake8, which
   already parsed the file) that looks for the shapes a finding needs;
3. for long files, the same question per component (components.py) or top-level
   statement (slicing.py): only the parts that can matter are analysed;
4. Python's parse of what is left (none when the caller's tree is of the same text);
5. the one batched traversal of Python's tree for all rules; positions in libcst's
   terms are computed for the nodes a diagnostic names (analysis/tree.py);
6. noqa comments and the selection, for the front ends that do not leave them to flake8.

Every front end calls it with what it already has (flake8's tree, the editor's unsaved
text, a worker's slice) and the stages it skips (coverage and explain: the gate and the
slicing). Importing this module imports neither the rules nor the analysis: a process
whose files all stop at the gate never does.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Mapping, Sequence, Union

from ..stages import newer_syntax
from ..core.diagnostic import Diagnostic, Related
from ..stages.gate import SLICE_FIRST, decide, gate_facts, may_have_findings, prefilter
from ..stages.nesting import too_deep
from ..stages.prepared import Prepared, prepare
from ..rules import Rule, all_rules

if TYPE_CHECKING:
    from ..analysis.tree import Module
    from ..project.projects import Projects
    from ..stages.call_counts import SyntaxCounts

# (file context, transfer events in program order, anchor node id -> its diagnostic)
Observer = Callable[[Any, list[Any], dict[int, Diagnostic]], None]
# A front end's settings, or how to read them once a file gets to the analysis (flake8
# reads the project's configuration only then).
Settings = Union[Mapping[str, object], Callable[[], Mapping[str, object]], None]

PARSE_ERROR = "RSH001"
INTERNAL_ERROR = "RSH002"
# A file that could not be read or decoded: reported by the front ends (runner.py), which
# read the files; the engine only ever sees text.
IO_ERROR = "RSH003"
# Codes about a whole file rather than a rule: `# noqa` never applies to them.
ERROR_CODES = (PARSE_ERROR, INTERNAL_ERROR, IO_ERROR)
_ANALYSIS_RECURSION_LIMIT = 12000
# The events besides transfers that coverage counts as sites (analysis/events.py), by name:
# importing the engine imports no analysis.
_COVERAGE_EVENTS = frozenset({"Fetch", "FetchSite", "Site"})


class Cancelled(Exception):
    """The caller no longer wants this result (an editor sent a newer version)."""


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Set when the file could not be analysed; diagnostics then holds one RSH001/RSH002
    # (error_code).
    error: str | None = None
    error_code: str | None = None
    stage: str = "prefilter"  # how far the file went: prefilter, gate, analysed
    # The project files whose summaries the gate or the analysis read (path -> content
    # digest): the result holds while they are unchanged.
    deps: dict[str, str] = field(default_factory=dict)
    # What the stages before the analysis made of a file that passed them, when the
    # caller stopped there (``analyse=False``): hand it back as ``prepared``.
    prepared: Prepared | None = None
    # Diagnostics a noqa comment silenced, when the selection stage ran (``select``).
    silenced: list[Diagnostic] = field(default_factory=list)


def check_source(source: str, path: str = "<stdin>", settings: Settings = None, *,
                 engine: Engine | None = None,
                 tree: ast.AST | None = None,
                 prepared: Prepared | None = None,
                 imported: frozenset[str] | None = None,
                 gate: bool = True,
                 slicing: bool = True,
                 slice_min_lines: int | None = None,
                 compile_rejected: bool = False,
                 analyse: bool = True,
                 keep_tree: bool = True,
                 pause: Callable[[], ContextManager[None]] | None = None,
                 observer: Observer | None = None,
                 raise_errors: bool = False,
                 select: Callable[[str], bool] | None = None,
                 cancelled: Callable[[], bool] | None = None,
                 contain_errors: bool = False) -> FileResult:
    """Take one file through the stages: prefilter -> gate -> slicing -> parse ->
    analysis and rules -> noqa and selection. What the caller already has, it passes:

    - ``engine`` (else ``engine_for(settings)``, built only when a file gets to the
      analysis), ``tree``: Python's tree of ``source`` (flake8's), ``imported``: the
      names the file imports from its project that may hold device values (else asked of
      the engine's projects, or of this process's gate projects for ``settings``);
    - ``prepared``: the stages before the analysis already ran (a worker's slice): the
      analysis starts from it.

    The stages a front end skips are parameters: ``gate=False`` skips the prefilter and
    the gate, ``slicing=False`` analyses the whole file (coverage, explain), and
    ``slice_min_lines`` says from how many lines a file is sliced. ``compile_rejected``:
    a file the prefilter rules out is compiled, and one Python's compiler refuses goes on
    (a syntax error is RSH001 whatever words the file holds: ``check``). ``analyse=False``
    stops after the slicing: the result's ``prepared`` is what passed (with Python's tree
    of an unsliced text when ``keep_tree``), ``stage`` says whether anything did.

    ``pause`` is entered around the parse and the analysis (core/collector.paused);
    ``observer`` sees the transfer events (engine.analyse); ``raise_errors``: a file
    that cannot be parsed or analysed raises, for the caller to say why, instead of
    being RSH001/RSH002; ``select(code)``: the selection, after which noqa comments
    silence what they name (``silenced``); ``cancelled`` is asked between stages and for
    every event, and raises Cancelled. ``contain_errors``: a failure of the analysis in one
    function or top-level statement is noted for the observer (``FileContext.failures``)
    and the analysis goes on with the rest of the file (coverage).
    """
    result = FileResult(path)
    if prepared is None:
        # 1-3: prefilter, gate, slicing.
        if imported is None:
            # Names imported from the project's modules that may hold meshes: the file's
            # own text need not name any, and they seed its slice (components.py) as
            # what the file builds itself does.
            projects = engine.projects if engine is not None else _gate_projects(settings)
            imported, result.deps = projects.device_imports(source, path)
        if gate:
            if not imported and not prefilter(source):
                if not (compile_rejected and refused(source)):
                    return result
                # The analysis says why Python refuses the file (RSH001), or analyses a
                # file only its compiler refuses (a 'return' outside a function).
            else:
                result.stage = "gate"
                # A giant file skips the gate's walk: slicing keeps only what can matter.
                if imported or source.count("\n") < SLICE_FIRST:
                    if tree is None:
                        tree = _parse_or_none(source)  # None: reported below with Python's reason
                    if tree is not None and not (decide(gate_facts(tree), imported) if imported
                                                 else may_have_findings(tree)):
                        return result
        result.stage = "analysed"
        if tree is None:
            # One parse for the slicing, the call counts and the tree the analysis reads.
            tree = _parse_or_none(source)
        prepared = prepare(source, tree, slice_min_lines if slicing else _NO_SLICING, imported)
        if prepared.line_map is None and isinstance(tree, ast.Module) and (analyse or keep_tree):
            prepared.tree = tree
        tree = None
        if not analyse:
            result.prepared = prepared
            return result
    else:
        result.stage = "analysed"
    _check(cancelled)
    # 4-5: parse, analysis and rules.
    if pause is None:
        _analyse(result, source, path, settings, engine, prepared, observer, raise_errors, cancelled,
                 contain_errors)
    else:
        with pause():
            _analyse(result, source, path, settings, engine, prepared, observer, raise_errors, cancelled,
                     contain_errors)
    # 6: selection and noqa (RSH002, a bug, is always selected).
    if select is not None:
        from ..core import noqa
        from ..core.fixes import split_lines

        result.diagnostics, result.silenced = noqa.selected(
            result.diagnostics, split_lines(source), lambda code: code == INTERNAL_ERROR or select(code),
            ERROR_CODES)
    return result


# slice_min_lines for a file analysed whole (slicing=False).
_NO_SLICING = 10**12


def _analyse(result: FileResult, original: str, path: str, settings: Settings, engine: Engine | None,
             prepared: Prepared, observer: Observer | None, raise_errors: bool,
             cancelled: Callable[[], bool] | None, contain_errors: bool = False) -> None:
    """Stages 4 and 5: parse what the slicing kept (unless its tree came along), refuse
    nesting the analysis cannot follow, run the analysis and the rules."""
    from ..analysis.tree import Module

    if engine is None:
        engine = engine_for(settings() if callable(settings) else settings)
    source, line_map, counts = prepared.text, prepared.line_map, prepared.counts

    def at(line: int) -> int:  # a line of ``source`` in the file the user has
        return line_map[line - 1] if line_map and 1 <= line <= len(line_map) else line

    python_tree = prepared.tree
    prepared.tree = None  # not held by a Prepared the caller keeps
    try:
        if python_tree is None:
            python_tree = newer_syntax.parse(source)
    except SyntaxError as exc:
        if raise_errors:
            raise
        line = at(max(exc.lineno or 1, 1))
        what = exc.msg
        if "too many nested" in what or "too deeply nested" in what:
            what = f"nesting too deep: {what}"
        # Python's offset is 1-based, in characters of the line (flake8's E999 shows it one
        # further, as it takes it for 0-based); past the line's end (an unclosed bracket at
        # the end of the file) it is the line's end.
        text_line = (exc.text or "").rstrip("\r\n")
        column = max(exc.offset or 1, 1)
        if exc.text is not None:
            column = min(column, len(text_line) + 1)
        _failed(result, PARSE_ERROR, line,
                f"could not parse the file: {what} (line {line}, column {column})", column - 1)
        return
    except (UnicodeEncodeError, UnicodeDecodeError, UnicodeTranslateError) as exc:  # (with a reason)
        if raise_errors:
            raise
        # Text from an editor or stdin may hold lone surrogates; no file decoded by
        # sources.decode does.
        _failed(result, PARSE_ERROR, 1, "could not parse the file: not valid Unicode text "
                                        f"({exc.reason} at character {exc.start})")
        return
    except ValueError as exc:  # a NUL byte
        if raise_errors:
            raise
        _failed(result, PARSE_ERROR, 1, f"could not parse the file: {exc}")
        return
    except (RecursionError, MemoryError):
        if raise_errors:
            raise
        python_tree = None  # Python's parser gave up on the nesting: where, below
    deep = too_deep(source, python_tree)
    if deep is not None:
        # The analysis recurses through the tree: bounded before it starts.
        if raise_errors:
            raise RecursionError(f"nesting too deep: {deep[1]}")
        _failed(result, PARSE_ERROR, at(deep[0]), f"could not parse the file: nesting too deep: {deep[1]}")
        return
    if python_tree is None:
        _failed(result, PARSE_ERROR, 1, "could not parse the file: nesting too deep for Python's parser")
        return
    # too_deep() bounds nesting at a depth the analyzer's recursion handles within
    # this limit; Python's default of 1000 frames is reached by depth ~400.
    _check(cancelled)
    old_limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(old_limit, _ANALYSIS_RECURSION_LIMIT))
        module = Module(python_tree, source)
        view = engine.projects.view(path)
        result.diagnostics = engine.analyse(module, original, path, line_map, observer=observer,
                                            python_tree=python_tree, parsed_text=source, cancelled=cancelled,
                                            call_counts=counts, project=view, file_facts=prepared.where,
                                            contain_errors=contain_errors)
        if view is not None:
            result.deps = view.deps
    except Cancelled:
        raise
    except RecursionError:
        if raise_errors:
            raise
        _failed(result, INTERNAL_ERROR, 1, "could not analyse the file: expressions nested too deeply")
    except Exception as exc:  # noqa: BLE001 - a linter bug must not stop the run
        if raise_errors:
            raise
        _failed(result, INTERNAL_ERROR, 1,
                f"internal error while analysing the file: {type(exc).__name__}: {exc}")
    finally:
        sys.setrecursionlimit(old_limit)


def refused(text: str) -> bool:
    """Whether Python's compiler refuses the text. Asked of the files the prefilter rules out,
    which nothing else parses (``compile_rejected``): the analysis then says why (RSH001),
    or analyses a file only the compiler refused (a 'return' outside a function) and finds
    nothing. Compiling to code builds no Python tree: 0.87 s against ast.parse's 1.02 s
    for the 572 such files of jax's installed sources; it takes a cold check of them from
    0.58 s to 1.36 s (2 cores). The cache keeps the verdict: a warm run compiles nothing."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes: not ours to report
            compile(text, "<reshard-lint>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return True
    return False


def _gate_projects(settings: Settings) -> "Projects":
    from ..project.projects import gate_projects

    return gate_projects((settings() if callable(settings) else settings) or {})


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
        """``check_source`` with this engine. ``force`` skips the prefilter and the gate
        (the caller ran them, and says with ``imported`` which names the file imports
        from its project that may hold device values)."""
        return check_source(source, path, engine=self, tree=tree, prepared=prepared,
                            imported=imported if force else None, gate=not force,
                            slice_min_lines=slice_min_lines, cancelled=cancelled)

    def analyse(self, module: "Module", source: str, path: str,
                line_map: list[int] | None = None, observer: Observer | None = None,
                python_tree: ast.Module | None = None, parsed_text: str | None = None,
                cancelled: Callable[[], bool] | None = None,
                call_counts: "SyntaxCounts | None" = None, project: Any = None,
                file_facts: Any = None, contain_errors: bool = False) -> list[Diagnostic]:
        """Diagnostics for a parsed module; ``observer`` also sees every transfer event and
        the diagnostic anchored at each call (``reshard-lint coverage``)."""
        from ..analysis import Analyzer
        from ..analysis.foreign import foreign_calls, named_elsewhere
        from ..analysis.context import FileContext

        rules = self.rules

        ctx = FileContext(module, source, path, self.settings, line_map)
        ctx.python_tree = python_tree
        ctx.parsed_text = parsed_text
        ctx.call_counts = call_counts
        ctx.file_facts = file_facts  # a slice's: what the whole file says of where it runs
        ctx.project = project  # project/view.py FileView: values imported from the project's modules
        ctx.where = partial(self._where, view=project)  # (called with ctx: no cycle through it)
        ctx.launcher = partial(self._launcher, view=project)
        if contain_errors:
            ctx.failures = []
        if observer is not None:
            ctx.coverage_sites = []
        # anchor node id -> (priority, diagnostic): one diagnostic per call, the most specific.
        best: dict[int, tuple[int, Diagnostic]] = {}
        finishers: list[Rule] = []

        transfers: list[object] = []

        def sink(event: object) -> None:
            _check(cancelled)
            through = getattr(event, "through", None)
            if observer is not None and type(event).__name__ == "Transfer":
                # A transfer of another module's function run for a call here is a site
                # of that module (coverage counts it there, with this call's verdict among
                # its contexts), not a second one here.
                (transfers if through is None else ctx.relayed_transfers).append(event)
            elif observer is not None and not getattr(event, "coverage_only", False):
                ctx.other_events.append(event)  # constructions, fetches: what explain draws
            if ctx.coverage_sites is not None and type(event).__name__ in _COVERAGE_EVENTS:
                ctx.coverage_sites.append(event)
            if getattr(event, "coverage_only", False) or getattr(event, "fed", False):
                # events.Site, FetchSite: no rule reads them; a fed transfer
                # (analysis/foreign.py): the calls in other modules report it.
                return
            for rule in self.by_event.get(type(event), ()):
                for diag in rule.check(event):  # type: ignore[arg-type]
                    if through is not None:
                        diag = _through(ctx, diag, through, type(event).__name__ != "Transfer",
                                        getattr(event, "path", ()))
                    key = id(event.node)  # type: ignore[attr-defined]
                    # Where the code runs is decided here, when a rule has something to say.
                    why = ctx.silenced_by(rule.runtimes, event.node, through)  # type: ignore[attr-defined]
                    if why is not None:
                        ctx.runtime_silenced.append((key, rule.priority, diag, why))
                        continue
                    prio = rule.priority
                    if key not in best or prio > best[key][0]:
                        best[key] = (prio, diag)

        for rule in rules:
            rule.start(ctx)
            finishers.append(rule)
        analyzer = Analyzer(ctx, sink)
        if project is not None:
            # A function this file never calls takes the calls other modules make of it
            # (the file's own analysis only: a summary for an importer runs no such search).
            analyzer.callsites.foreign = partial(foreign_calls, ctx)
            analyzer.callsites.named_elsewhere = partial(named_elsewhere, ctx)
        if observer is not None:
            analyzer.expected_sink = transfers.append
        analyzer.run()
        for rule in finishers:
            for node, diag in rule.finish(ctx):
                key = id(node)
                why = ctx.silenced_by(rule.runtimes, node)
                if why is not None:
                    ctx.runtime_silenced.append((key, rule.priority, diag, why))
                    continue
                if key not in best or rule.priority > best[key][0]:
                    best[key] = (rule.priority, diag)
        if observer is not None:
            # What the runtime silenced counts where it would have been the call's one
            # diagnostic (coverage): not where a more specific one is reported anyway.
            ctx.runtime_silenced = [e for e in ctx.runtime_silenced if e[0] not in best or e[1] > best[e[0]][0]]
            observer(ctx, transfers, {k: d for k, (_, d) in best.items()})
        analyzer.release()
        diags = [d for _, d in best.values()]
        return sorted(set(diags), key=lambda d: d.sort_key)


    def _where(self, ctx: Any, view: Any) -> Any:
        """Where the file's code runs (project/where.py); the files read to say so become
        the result's dependencies."""
        from ..project.where import decide

        decision, deps = decide(self.settings, ctx.path, ctx.source, lambda: ctx.whole_facts, view)
        if view is not None:
            view.deps.update(deps)
        return decision

    def _launcher(self, ctx: Any, view: Any) -> str:
        """The module that launches the program this file runs in (project/where.py); the
        files read to say so become the result's dependencies."""
        from ..project.where import launcher

        found, deps = launcher(ctx.decision, view, ctx.path, ctx.whole_facts)
        if view is not None:
            view.deps.update(deps)
        return found


def _failed(result: FileResult, code: str, line: int, message: str, col: int = 0) -> FileResult:
    """``result`` as a file that could not be parsed or analysed: one diagnostic saying why,
    at ``col`` (0-based) of ``line``."""
    result.error, result.error_code = message, code
    result.diagnostics = [Diagnostic(code, line, col, message)]
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
    return check_source(source, path, engine=engine_for(settings), tree=tree)


def _through(ctx: Any, diag: Diagnostic, inner: object, construction: bool = False,
             path: tuple[Any, ...] = ()) -> Diagnostic:
    """A diagnostic at a call of another module's function, pointing at the transfer (or
    the mesh or sharding construction) inside it that the call's arguments make fail.
    A transfer's has no fix: the code to change may be in either file. A construction's
    keeps the rule's own, which only rewrites what this file wrote (RSH102's undoing of a
    reordering step inside the call)."""
    steps = [Related(at[1], at[2], "the call that leads there", at[0], step=True)
             for at in map(ctx.locate, path) if at is not None]
    where = ctx.locate(inner)
    what = "the construction this call runs" if construction else "the transfer this call runs"
    extra = tuple(steps) + ((Related(where[1], where[2], what, where[0], step=True),) if where is not None else ())
    return replace(diag, fix=diag.fix if construction else None, related=diag.related + extra)
