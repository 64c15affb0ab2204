"""Per-file facts rules need: positions, source text, comparisons, how names are spelled."""

from __future__ import annotations

import ast
from typing import Any, Callable, Iterable, Mapping

from ..core import vocabulary as api
from ..stages import runtime_facts as rf

from .devices import PLATFORMS, DevFn, Evaluator, Verdict
from .tree import Module
from .values import DevVal, MeshVal, undecidable



class FileContext:
    def __init__(self, module: Module, source: str, path: str,
                 settings: Mapping[str, object] | None = None, line_map: list[int] | None = None) -> None:
        self.module = module
        self._python_tree: ast.Module | None = None
        self.lazy_tree = False  # no tree yet, but Python parses the text: parse it on first use
        self.parsed_text: str | None = None  # the text ``module`` was parsed from, when not ``source``
        # The whole file's call counts when units were left out (callsites.py).
        self.call_counts: Any = None
        # A sliced long file: module line i is line line_map[i - 1] of ``source``.
        self.line_map = line_map
        self.source = source
        self.path = path
        self.settings = dict(settings or {})
        self.devices = Evaluator(self.settings.get("platforms") or PLATFORMS)  # type: ignore[arg-type]
        self._code: dict[ast.AST, str] = {}  # code(), whitespace collapsed, whole
        # qualified name -> how this file spells it (filled by the analyzer from imports)
        self.spellings: dict[str, str] = {}
        self.mesh_roots: set[int] = set()  # distinct device arrays meshes were built on
        # Where the file's code runs (docs/runtimes.md), decided when a rule that depends
        # on it first has something to say: ``where`` is the engine's decision
        # (project/where.py: settings, conftest.py files, imported modules), else the file's own.
        self.where: Callable[[FileContext], rf.Decision] | None = None
        # Asked for launched_by (the engine's, through project/where.py).
        self.launcher: Callable[[FileContext], str] | None = None
        self._decision: rf.Decision | None = None
        self._signs: bool | None = None
        self._launched_by: str | None = None
        self._colocated: frozenset[int] | None = None
        self._whole: ast.Module | bool | None = None  # whole_tree of a sliced file; False: no parse
        # What the whole file says of where it runs (stages/runtime_facts.py): a slice's
        # comes with it (stages/prepared.py), a whole file's is read from its tree on demand.
        self.file_facts: rf.FileFacts | None = None
        # What the multi-controller rules said that the runtime silenced (engine.analyse):
        # (anchor node id, its rule's priority, the diagnostic, why), for `coverage`.
        self.runtime_silenced: list[tuple[int, int, Any, str]] = []
        # Transfers of other modules' functions run for calls here (Transfer.through: the
        # call inside that function), kept for coverage when it observes the file.
        self.relayed_transfers: list[Any] = []
        # The other events (mesh constructions, fetches, context operations), kept only
        # when a front end observes the file: explain draws the meshes behind them.
        self.other_events: list[Any] = []
        # Fetches, and the sites only coverage counts (events.Site, FetchSite), in program
        # order, when an observer (coverage) is given the file; None: no site event is made.
        self.coverage_sites: list[Any] | None = None
        # Each such run: (the call here, whether its transfers were reported: every test on
        # its way decided, the functions it called that it did not run: (file or "" for
        # this one, name)), for coverage across files (frontends/coverage_relay.py).
        self.relay_runs: list[tuple[ast.AST, bool, frozenset[tuple[str, str]]]] = []
        # The functions of the module worth other modules' calls (foreign._building), once.
        self.building: frozenset[str] | None = None
        # Where the analysis itself failed and went on (interpreter.contained, asked for
        # by coverage): (the function or top-level statement it was running, what failed).
        # None: a failure ends the file's analysis (check: RSH002).
        self.failures: list[tuple[ast.AST, str]] | None = None
        # JAX's experimental cross-host transfer path (TFRT TPU, or this flag) moves some
        # arrays between device sets: the different-set error is then not certain.
        self.cross_host_transfers = "jax_cross_host_transfer_socket_address" in source
        # The project's modules, when the file is part of one (project/view.py FileView);
        # ``display``: how messages name this file when it is an imported module's.
        self.project: Any = None
        self.display = path
        # id(mesh) -> the call in this file that made it in another module's function: a
        # mesh with no name here is called by that call (render.describe_mesh).
        self.made_by: dict[int, ast.AST] = {}

    @property
    def python_tree(self) -> ast.Module | None:
        """Python's tree of the text ``module`` was parsed from, when at hand."""
        if self._python_tree is None and self.lazy_tree:
            from ..stages import newer_syntax

            self.lazy_tree = False
            text = self.parsed_text if self.parsed_text is not None else self.source
            try:
                self._python_tree = newer_syntax.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._python_tree = None
        return self._python_tree

    @python_tree.setter
    def python_tree(self, tree: ast.Module | None) -> None:
        self._python_tree = tree

    # -- where the code runs -----------------------------------------------------------
    @property
    def decision(self) -> rf.Decision:
        if self._decision is None:
            if self.where is not None:
                self._decision = self.where(self)
            else:
                setting = str(self.settings.get("runtime", "auto"))
                self._decision = rf.decide(setting, [("the file", rf.facts_of_text(self.source))])
        return self._decision

    @property
    def runtime(self) -> str:
        """``multi-controller`` or ``single-controller``: where this file's code runs."""
        return self.decision.runtime

    @property
    def runtime_explicit(self) -> bool:
        """Said by a setting (``runtime``, ``per-file-runtime``), not read from the code."""
        return self.decision.explicit

    @property
    def whole_tree(self) -> ast.Module | None:
        """Python's tree of the whole file (``source``): the analysis's, or for a sliced
        file one parse of its text, made the first time where the code runs is asked
        (None: it does not parse)."""
        if self.line_map is None and (self.parsed_text is None or self.parsed_text == self.source):
            return self.python_tree
        if self._whole is None:
            from ..stages import newer_syntax

            try:
                self._whole = newer_syntax.parse(self.source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._whole = False
        return self._whole if isinstance(self._whole, ast.Module) else None

    @property
    def whole_facts(self) -> rf.FileFacts | None:
        """What the whole file says of where it runs (None: it does not parse)."""
        if self.file_facts is None:
            tree = self.whole_tree
            if tree is not None:
                self.file_facts = rf.file_facts(tree, self.source)
        return self.file_facts

    @property
    def multicontroller_signs(self) -> bool:
        """Does the file use (not only import) what multi-process code uses:
        ``jax.process_index()``, ``jax.distributed``, ``multihost_utils.process_allgather(...)``?"""
        if self._signs is None:
            facts = self.whole_facts if rf.may_use_multi_process(self.source) else None
            # Or a module of the project that launches several processes imports this
            # one: its program runs here too (project/where.py).
            self._signs = facts is not None and facts.multi_process or bool(self.launched_by)
        return self._signs

    @property
    def launched_by(self) -> str:
        """The project module that launches several processes and imports this one ("":
        none, or no project), asked of the engine (project/where.py) the first time."""
        if self._launched_by is None:
            self._launched_by = self.launcher(self) if self.launcher is not None else ""
        return self._launched_by

    def multicontroller_signs_at(self, node: ast.AST) -> bool:
        """``multicontroller_signs`` for the code at ``node``: not when the uses are all in
        functions and classes of this file that run in no program with ``node``'s
        (stages/program_units.py: sibling benchmarks, one of which calls
        ``multihost_utils``)."""
        if not self.multicontroller_signs:
            return False
        facts = self.whole_facts
        if self.launched_by or facts is None or not facts.apart \
                or self.module.owner(node) is not self.module:
            return True
        line = self.line(node)
        return not any(first <= line <= last for first, last in facts.apart)

    def silenced_by(self, runtimes: tuple[str, ...], *nodes: object) -> str | None:
        """Why a diagnostic at ``nodes`` of a rule that applies on ``runtimes`` is not
        reported here: the file's runtime, or code that runs only through colocated Python
        (a single controller); None when it is reported."""
        if rf.SINGLE in runtimes:
            return None
        if self.runtime not in runtimes:
            return self.decision.reason or self.runtime
        colocated = self.colocated
        if colocated and any(n is not None and id(n) in colocated for n in nodes):
            return rf.COLOCATED
        return None

    @property
    def colocated(self) -> frozenset[int]:
        """The ids of the analysed tree's nodes in code that runs only through colocated Python."""
        if self._colocated is None:
            tree = self.python_tree
            self._colocated = rf.colocated_nodes(tree) \
                if tree is not None and api.COLOCATED_WORD in self.source else frozenset()
        return self._colocated

    # -- positions -------------------------------------------------------------------
    def home(self, node: ast.AST) -> "FileContext":
        """The context of the module ``node`` is from: this file's, or an imported one's."""
        return self._home(node)

    def _home(self, node: ast.AST) -> "FileContext":
        if self.project is None or not self.project.contexts:
            return self
        owner = self.module.owner(node)
        if owner is self.module:
            return self
        for other in self.project.contexts:
            if owner is other.module:
                return other
        return self

    def at(self, node: ast.AST | None) -> str:
        """Where ``node`` is, for a message: ``line 12``, or ``mypkg/mesh.py:12`` when it
        is in an imported module."""
        home = self._home(node) if node is not None else self
        if home is self:
            return f"line {self.line(node)}"
        return f"{home.display}:{home.line(node)}"

    def locate(self, node: ast.AST) -> tuple[str | None, int, int] | None:
        """(the other file's path or None, line, column) of ``node``, for related
        locations; None when no module at hand holds it."""
        home = self._home(node)
        try:
            line, col, _, _ = home.span(node)
        except KeyError:
            return None
        return (None if home is self else home.path), line, col

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        """Where ``node`` is, as libcst placed it (tree.Module.span), in the user's file."""
        if self.module.owner(node) is not self.module:
            raise KeyError(node)  # another module's node: its context places it
        line, col, end_line, end_col = self.module.span(node)
        return self._line(line), col, self._line(end_line), end_col

    def line(self, node: ast.AST | None) -> int:
        if node is None:
            return 0
        return self._line(self.module.span(node)[0])

    def _line(self, line: int) -> int:
        if self.line_map is None:
            return line
        return self.line_map[min(line, len(self.line_map)) - 1] + max(0, line - len(self.line_map))

    def lazy_code(self, node: ast.AST, limit: int = 80, suffix: str = "") -> Callable[[], str]:
        """``code(node, limit) + suffix`` when a message first needs it."""
        return lambda: self.code(node, limit) + suffix

    def code(self, node: ast.AST, limit: int = 80) -> str:
        text = self._code.get(node)
        if text is None:
            # A helper inlined at each call describes the same nodes again: generate once.
            text = self._code[node] = " ".join(self.module.code_for_node(node).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    # -- comparisons -----------------------------------------------------------------
    def compare(self, a: MeshVal | DevVal, b: MeshVal | DevVal) -> Verdict:
        da = a.devices if isinstance(a, MeshVal) else a
        db = b.devices if isinstance(b, MeshVal) else b
        if a is b or _one_list(da, db):
            return "same"
        if da.fn is db.fn or _platform_clash(da, db):
            return "unknown"  # (one function here: ``undecidable``, lists nothing is known of)
        return self.devices.compare(da.fn, db.fn, _sizes(da, db))

    def different_on(self, a: MeshVal | DevVal, b: MeshVal | DevVal) -> tuple[str, ...]:
        """The target platforms on which the two hold other devices."""
        lists = _two_lists(a, b)
        return self.devices.different_on(*lists) if lists else ()

    def reordered_on(self, a: MeshVal | DevVal, b: MeshVal | DevVal) -> tuple[str, ...]:
        """The target platforms on which the two hold their devices in different orders."""
        lists = _two_lists(a, b)
        return self.devices.reordered_on(*lists) if lists else ()

    @property
    def platforms(self) -> tuple[str, ...]:
        return self.devices.platforms

    def differs(self, a: MeshVal | DevVal, b: MeshVal | DevVal) -> bool:
        """True when the two differ in set or order on every topology that runs both."""
        lists = _two_lists(a, b)
        found = self.devices.verdicts(*lists) if lists else set()
        return bool(found) and found <= {"different", "reordered"}

    def locality(self, d: MeshVal | DevVal) -> str:
        dv = d.devices if isinstance(d, MeshVal) else d
        return self.devices.locality(dv.fn, dv.sizes)

    def is_reordered(self, d: DevVal) -> bool:
        return self.devices.is_reordered(d.fn, d.sizes)

    # -- spelling names for fixes ----------------------------------------------------
    def spell(self, qual: str) -> str | None:
        """How this file can write ``qual`` without new imports, or None."""
        return self.spellings.get(qual)

    def option(self, name: str, default: object) -> object:
        return self.settings.get(name, default)


def _two_lists(a: MeshVal | DevVal, b: MeshVal | DevVal) -> tuple[DevFn, DevFn, Iterable[int]] | None:
    """The device functions of two meshes or lists and their spelled sizes, to evaluate on
    the models; None where no evaluation says anything (one list, or a platform clash)."""
    da = a.devices if isinstance(a, MeshVal) else a
    db = b.devices if isinstance(b, MeshVal) else b
    if a is b or da.fn is db.fn or _platform_clash(da, db):
        return None
    return da.fn, db.fn, _sizes(da, db)


def _one_list(a: DevVal, b: DevVal) -> bool:
    """One device function: the same list. Not ``undecidable``, which every list the
    analysis cannot evaluate shares (a mesh factory's parameter joined over its callers,
    ``devs[:n]`` with an unknown ``n``): two of those are unknown, never the same."""
    return a.fn is b.fn and a.fn is not undecidable


def _platform_clash(a: DevVal, b: DevVal) -> bool:
    """jax.devices() against jax.devices('cpu'): the same devices on a CPU-only job."""
    named_a, named_b = a.platforms - {"default"}, b.platforms - {"default"}
    return ("default" in a.platforms and bool(named_b)) or ("default" in b.platforms and bool(named_a))


def _sizes(*vals: DevVal) -> Iterable[int]:
    out: list[int] = []
    for v in vals:
        out.extend(v.sizes)
    return out
