"""Slicing a file into the parts that can affect each other, and keeping the ones that matter.

A test file is hundreds of methods that share nothing but imports; the gate (gate.py)
says yes to the whole file when one method in it builds two meshes. Here the file's
units (top-level functions and classes, and each member of a top-level class) are
grouped into components: two units are in one component when a name one of them
defines (a function, a class, a module or class variable, an attribute it assigns) is
referenced by the other, whatever the namespace, because the analysis lets callers
feed parameters, counts calls by name module-wide and caps argument contexts per
function, except through units that carry no device value (``_carrying``): those are
kept with what reads them without joining their callers. Seeding Python's or NumPy's
global generator is shared state too: a unit that shuffles with one keeps every unit
that seeds one. Module-level statements are
always kept and bind the same value for every reader, so their readers need them but
are not joined through them. A member also needs its class statement (bases,
decorators) and what that one needs.

The gate then runs on each component with the imports and the module-level statements
(which are always kept: they set context meshes and seeds for everything after them).
Components it rules out are left out of the text the engine reads. Lines keep their
numbers through a map, and columns do not change (a member keeps its indentation
under its kept class line).
"""

from __future__ import annotations

import ast
from typing import AbstractSet, Iterable

from .ast_walk import walk as _walk
from .call_counts import SyntaxCounts
from ..core.vocabulary import CARRYING_ATTRS, CARRYING_CALLS, CARRYING_KEYWORDS
from .gate_facts import CONSTRUCTION, GateFacts, decide, gate_facts
from .scoping import Scan

# Files shorter than this are analysed whole: below it the walk that groups the units
# costs about what the smaller parse saves (CPU sliced / whole over the files of jax,
# maxtext, orbax and tunix that reach the engine, once units that carry no device value
# stopped joining their callers: 0.95 under 300 lines, 0.86 at 300-600, 0.75 at
# 600-1200; docs/performance.md).
COMPONENT_MIN_LINES = 300

# The analysis keeps one piece of state across functions: whether Python's and NumPy's
# global generators were seeded (random.seed, np.random.seed), which the shuffles and
# permutations read (scoping.py tells which units do). Generators made with their own
# seed (default_rng, PRNG keys) are values like any other.
_RNG = ("rng", "")


class _Unit:
    __slots__ = ("node", "first", "last", "defines", "refs", "owner", "kind")

    def __init__(self, node: ast.stmt, kind: str, owner: "_Unit | None" = None) -> None:
        self.node = node
        self.first = _first_line(node)
        self.last = node.end_lineno or node.lineno
        self.defines: set[tuple[str, str]] = set()
        self.refs: set[tuple[str, str]] = set()
        self.owner = owner  # the class statement a member needs
        self.kind = kind  # import | global | def | header | member


def slice_components(source_lines: list[str], tree: ast.Module, counts: SyntaxCounts | None = None,
                     imported: frozenset[str] = frozenset()) -> list[int] | None:
    """The original line numbers to keep, in order; None when everything is kept.
    ``counts``: gets the whole file's calls counted (call_counts.py) on the way;
    ``imported``: the names the file imports from its project that may hold device
    values (project/imported.py), which seed the units that read them as the file's own
    devices do."""
    global _decided
    units, facts = _decided[1:] if _decided is not None and _decided[0] is tree else _gated_units(tree)
    _decided = None
    _describe(units, counts)
    parent = list(range(len(units)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    definers: dict[tuple[str, str], list[int]] = {}
    for i, u in enumerate(units):
        if u.kind != "import":
            for n in u.defines:
                definers.setdefault(n, []).append(i)
    carries = _carrying(units, facts, definers, imported)
    # u -> the units it reads from that carry no device value: kept with u, but not
    # joined to u's component (see _carrying).
    reads: dict[int, set[int]] = {}
    for i, u in enumerate(units):
        if u.kind == "import":
            continue
        for n in u.refs | u.defines:
            for j in definers.get(n, ()):
                if j == i or units[j].kind == "global" and u.kind != "global":
                    # Always kept, and what it binds is the same for every reader: its
                    # readers need it but do not reach each other through it (a reader
                    # that rebinds or mutates the name defines it, and links itself).
                    continue
                if not carries[j] or n == _RNG:
                    reads.setdefault(i, set()).add(j)
                    continue
                a, b = find(i), find(j)
                if a != b:
                    parent[a] = b
    index = {id(u): i for i, u in enumerate(units)}
    groups: dict[int, list[int]] = {}
    for i, u in enumerate(units):
        if u.kind != "import":
            groups.setdefault(find(i), []).append(i)
    always = [facts[i] for i, u in enumerate(units) if u.kind in ("import", "global")]

    # Component -> the components it needs directly: its class statements' and those of
    # what it reads. One set each, built once: hundreds of tests read the same helpers.
    edges: dict[int, set[int]] = {}
    for root, members in groups.items():
        out_edges: set[int] = set()
        for i in members:
            owner = units[i].owner
            if owner is not None:
                out_edges.add(find(index[id(owner)]))
            out_edges.update(find(j) for j in reads.get(i, ()))
        out_edges.discard(root)
        edges[root] = out_edges

    closures: dict[int, set[int]] = {}

    def needs(root: int) -> set[int]:
        """A component, the components of the class statements it needs and of what it reads."""
        if root in closures:
            return closures[root]
        out: set[int] = set()
        todo = [root]
        while todo:
            r = todo.pop()
            if r in out:
                continue
            done = closures.get(r)
            if done is not None:
                out |= done  # everything r reaches, found from r before
                continue
            out.add(r)
            todo.extend(edges[r] - out)
        closures[root] = out
        return out

    keep: set[int] = set()
    for root, members in groups.items():
        if root in keep or not any(carries[i] for i in members):
            # A component without a device value has no finding of its own: what it calls
            # is judged as the component of whoever passes it device values.
            continue
        support = needs(root)
        # Module-level statements are in ``always`` already: counted once.
        if decide(GateFacts.merged(always + [facts[i] for r in support for i in groups[r]
                                             if units[i].kind != "global"]), imported):
            keep |= support
    # A class statement kept for what it defines needs a body: its first member, with
    # everything that member needs (no member is kept without its component).
    while True:
        bodies = {id(units[i].owner) for i in range(len(units)) if find(i) in keep and units[i].owner}
        empty = [i for i, u in enumerate(units) if u.kind == "header" and find(i) in keep and id(u) not in bodies]
        if not empty:
            break
        for i in empty:
            keep |= needs(find(i + 1))  # members follow their class statement
    kept_units = [u for i, u in enumerate(units) if u.kind in ("import", "global") or find(i) in keep]
    if len(kept_units) == len(units):
        return None
    lines: set[int] = set()
    for u in kept_units:
        lines.update(range(u.first, u.last + 1))
    return sorted(ln for ln in lines if ln <= len(source_lines))


# What makes a unit's values device values: a call, attribute or keyword that builds or
# reads devices, meshes, shardings, arrays placed on them, device counts and ids
# (core/vocabulary.py).
_CARRYING_CALLS = CARRYING_CALLS
_CARRYING_ATTRS = CARRYING_ATTRS
_CARRYING_KEYWORDS = CARRYING_KEYWORDS


def _carrying(units: list["_Unit"], facts: list[GateFacts], definers: dict[tuple[str, str], list[int]],
              imported: frozenset[str] = frozenset()) -> list[bool]:
    """Which units may hold a device value: those that build or read one (the seeds, with
    those that read a name ``imported`` from the project), and those that read a name or
    attribute a carrying unit defines.

    A unit that carries none only moves other values around; its callers feed its
    parameters but need not be kept with it: when a caller is left out, the analysis
    counts calls in the whole file (engine.py), so such a parameter is unknown, as it is
    in the whole file where that caller passes something else (no device value). Callers
    that read it keep it (``reads``). On test files this is what keeps hundreds of test
    methods calling one helper apart.
    """
    # A module imported whole (``meshes.``) seeds every unit that reads the module's name.
    reads_imported = {("n", n.rstrip(".")) for n in imported if n.endswith(".") or "." not in n}
    carrying = [u.kind != "import" and (_seed(facts[i]) or not reads_imported.isdisjoint(u.refs))
                for i, u in enumerate(units)]
    readers: dict[int, list[int]] = {}
    for i, u in enumerate(units):
        if u.kind == "import":
            continue
        for n in u.refs | u.defines:
            if n == _RNG:
                continue
            for j in definers.get(n, ()):
                if j != i:
                    readers.setdefault(j, []).append(i)
    todo = [i for i, c in enumerate(carrying) if c]
    while todo:
        j = todo.pop()
        for i in readers.get(j, ()):
            if not carrying[i]:
                carrying[i] = True
                todo.append(i)
    return carrying


def _seed(facts: GateFacts) -> bool:
    if facts.sources or facts.one_mesh_use or not facts.attrs.isdisjoint(_CARRYING_ATTRS):
        return True
    aliases = facts.aliases
    for raw, call, _ in facts.calls:
        if aliases.get(raw, raw) in _CARRYING_CALLS:
            return True
        for k in call.keywords:
            if k.arg in _CARRYING_KEYWORDS:
                return True
    return False


def _units(tree: ast.Module) -> list[_Unit]:
    """The file's units in order, without what they define and read (``_describe``)."""
    units: list[_Unit] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            units.append(_Unit(stmt, "import"))
        elif isinstance(stmt, ast.ClassDef) and stmt.body and stmt.body[0].lineno > stmt.lineno:
            header = _Unit(stmt, "header")
            header.last = _first_line(stmt.body[0]) - 1
            units.append(header)
            units.extend(_Unit(m, "member", owner=header) for m in stmt.body)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            units.append(_Unit(stmt, "def"))
        else:
            units.append(_Unit(stmt, "global"))
    return units


def _describe(units: list[_Unit], counts: SyntaxCounts | None = None) -> None:
    """What each unit defines for the others and reads from them (Python's scoping)."""
    # np.sort(x) changes nothing np names: imported names are never changed objects.
    imported = {(a.asname or a.name).split(".")[0] for u in units if u.kind == "import"
                for a in u.node.names}  # type: ignore[attr-defined]
    for u in units:
        if u.kind == "header":
            stmt = u.node
            assert isinstance(stmt, ast.ClassDef)
            u.defines.add(("n", stmt.name))
            u.refs = _names([*stmt.bases, *stmt.keywords, *stmt.decorator_list])
            if counts is not None:
                for part in (*stmt.bases, *stmt.keywords, *stmt.decorator_list,
                             *getattr(stmt, "type_params", ())):
                    counts.add(part)
        elif u.kind == "member":
            m, cls = u.node, u.owner.node  # type: ignore[union-attr]
            assert isinstance(cls, ast.ClassDef)
            _facts(m, u, True, counts, imported)
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name in CONSTRUCTION:
                u.refs.add(("n", cls.name))
            elif not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                u.refs.add(("n", cls.name))  # class variables and fields: what constructors set
        elif u.kind != "import":
            _facts(u.node, u, False, counts, imported)
    # A decorator receives the function it decorates (``@register("train")`` files it in
    # a dict that other units read): the unit that defines the decorator reads the
    # function, as a callee reads what its callers pass, so that a mesh builder's value
    # reaches the units that read the registry.
    decorating: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for u in units:
        if u.kind in ("def", "member") and isinstance(u.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for dec in u.node.decorator_list:
                head = dec.func if type(dec) is ast.Call else dec
                if type(head) is ast.Name:
                    decorating.setdefault(("n", head.id), set()).add(("n", u.node.name))
    if decorating:
        for u in units:
            if u.kind == "def":
                for n in list(u.defines):
                    u.refs |= decorating.get(n, set())


# The units and gate facts of the last file the gate decided by units (gate_by_units),
# for slice_components on the same tree: one walk of a long file instead of two.
_decided: tuple[ast.Module, list[_Unit], list[GateFacts]] | None = None


def _gated_units(tree: ast.Module) -> tuple[list[_Unit], list[GateFacts]]:
    units = _units(tree)
    return units, [gate_facts(_gate_view(u), _owner(u)) for u in units]


def _owner(unit: _Unit) -> str | None:
    """The class of a member: constructing it calls its ``__init__``."""
    cls = unit.owner.node if unit.owner is not None else None
    return cls.name if isinstance(cls, ast.ClassDef) else None


def gate_by_units(tree: ast.Module) -> bool:
    """The gate's verdict on a file long enough to be sliced, from its units' facts.

    The same facts the whole file's walk gathers, in pieces (scripts/gate_by_units.py
    compares the two verdicts over real code); kept for the slicing that follows.
    """
    global _decided
    units, facts = _gated_units(tree)
    verdict = decide(GateFacts.merged(facts))
    _decided = (tree, units, facts) if verdict else None
    return verdict


def _facts(stmt: ast.stmt, unit: _Unit, in_class: bool, counts: SyntaxCounts | None,
           imported: AbstractSet[str] = frozenset()) -> None:
    """What a statement of the module (or class) body defines for other units, and the
    names it reads from them: names (``n``) and attributes (``a``) apart, as the
    analysis counts them apart; a function's own locals are its own."""
    scan = Scan(counts)
    loads, binds = scan.scope([stmt], "module")
    # A free name whose object the unit changes in place (holder['m'] = half in a
    # function): one more definer of it; a parameter or local (self.cache.append) is not.
    unit.defines.update(("n", n) for n in binds | scan.globals | ((scan.mutated & loads) - imported))
    unit.defines.update(("a", n) for n in scan.attr_defs)
    if in_class:
        unit.defines.update(("a", n) for n in binds)
    unit.refs.update(("n", n) for n in loads | binds | scan.globals)
    unit.refs.update(("a", n) for n in scan.attr_refs)
    if scan.rng:
        unit.refs.add(_RNG)
    if scan.seeds:
        unit.defines.add(_RNG)


def _names(nodes: Iterable[ast.AST]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for n in nodes:
        for sub in _walk(n):
            if isinstance(sub, ast.Name):
                out.add(("n", sub.id))
            elif isinstance(sub, ast.Attribute):
                out.add(("a", sub.attr))
    return out


def _gate_view(unit: _Unit) -> ast.stmt:
    if unit.kind != "header":
        return unit.node
    cls = unit.node
    assert isinstance(cls, ast.ClassDef)
    return ast.Expr(value=ast.Tuple(elts=[*cls.bases, *(k.value for k in cls.keywords), *cls.decorator_list],
                                    ctx=ast.Load()))


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno] + [d.lineno for d in decorators])
