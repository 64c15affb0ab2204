"""For very long files: build the tree of only the top-level statements the analysis can use.

The analysis costs time and memory per line it reads, and a 200,000-line generated file
is mostly statements that cannot matter: the analysis only follows names from
statements that build devices, meshes, shardings or arrays to statements that use them.
This module selects, with the ast the gate already has, the top-level statements that

* mention a device, mesh, sharding or transfer API (seeds, and every import);
* bind a name that a selected statement reads (the values flowing in); or
* read a name a selected statement binds and can raise an event (a call, an operator
  between values, an augmented assignment, a ``with``), or bind another name to its
  object (``d2 = d``): the values flowing out;
* change in place the object of a name a selected statement binds (``d2["w"] = x``);

and leaves the others out. The kept lines come with a map back to their original line
numbers (columns do not change: top-level statements start in column 0), which the
file context applies to every position. A test runs every example and fixture sliced
and unsliced and requires identical results.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict

from ..core.fixes import split_lines
from .ast_walk import walk as _walk
from ..core.vocabulary import SEED_ATTRS, SEED_CALLS, SEED_KEYWORDS
from .gate_facts import callee_name
from .scoping import changed_name as _changed_name, mutated_by_call as _mutated_by_call

# Files shorter than this are analysed whole: slicing is for generated giants.
SLICE_MIN_LINES = 5000

# The calls, attributes and keywords whose statements seed what is kept (core/vocabulary.py).
_SEED_CALLS = SEED_CALLS
_SEED_ATTRS = SEED_ATTRS
_SEED_KEYWORDS = SEED_KEYWORDS


class _Facts:
    __slots__ = ("stores", "loads", "seed", "acts", "changes")

    def __init__(self) -> None:
        self.stores: set[str] = set()
        self.changes: set[str] = set()  # names whose objects it changes in place
        self.loads: set[str] = set()
        self.seed = False
        self.acts = False  # can raise an event from the values it reads


def _facts(stmt: ast.stmt) -> _Facts:
    f = _Facts()
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        f.seed = True
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        f.stores.add(stmt.name)
    for node in _walk(stmt):
        # t is type(node), one lookup for the branches; mypy does not narrow the node by it,
        # hence the ignores below.
        t = type(node)
        if t is ast.Name:
            if isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                f.loads.add(node.id)  # type: ignore[attr-defined]
            else:
                f.stores.add(node.id)  # type: ignore[attr-defined]
        elif t is ast.Call:
            f.acts = True
            if callee_name(node.func) in _SEED_CALLS:  # type: ignore[attr-defined]
                f.seed = True
            elif any(k.arg in _SEED_KEYWORDS for k in node.keywords):  # type: ignore[attr-defined]
                f.seed = True
            base = _mutated_by_call(node)  # type: ignore[arg-type]  # d.update(...)
            if base is not None:
                f.changes.add(base)
        elif t is ast.Attribute:
            if node.attr in _SEED_ATTRS:  # type: ignore[attr-defined]
                f.seed = True
        elif t is ast.BinOp:
            left, right = node.left, node.right  # type: ignore[attr-defined]
            if not (isinstance(left, ast.Constant) and isinstance(right, ast.Constant)):
                f.acts = True
        elif t in (ast.AugAssign, ast.With, ast.AsyncWith):
            f.acts = True
        elif t in (ast.Import, ast.ImportFrom):
            for a in node.names:  # type: ignore[attr-defined]
                f.stores.add((a.asname or a.name).split(".")[0])
        if t in (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete):
            # config.target = half, d[k] = v, del d[k]: the object a later read sees changes.
            targets = node.targets if t in (ast.Assign, ast.Delete) else [node.target]  # type: ignore[attr-defined]
            for target in targets:
                base = _changed_name(target)
                if base is not None:
                    f.changes.add(base)
    return f


_IDENT = re.compile(r"[A-Za-z_]\w*")
_SEED_TEXT = re.compile(r"\b(?:" + "|".join(sorted(_SEED_CALLS | _SEED_ATTRS | _SEED_KEYWORDS)) + r")\b")
# A call, or an operator with a name on one side: what can raise an event.
_ACTS_TEXT = re.compile(r"[A-Za-z_]\w*\s*\(|[A-Za-z_\])]\s*[-+*/@%|&^<>]|[-+*/@%|&^]\s*[A-Za-z_(\[]")


def _text_facts(stmt: ast.stmt, text: str) -> _Facts | None:
    """Facts of a simple assignment or expression from its text, without walking its ast.

    Cheaper by an order of magnitude on generated files; loads are over-approximated by
    every identifier in the text (selecting more is safe), stores come from the targets.
    """
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.Expr):
        targets = []
        if isinstance(stmt.value, ast.Call) and _mutated_by_call(stmt.value) is not None:
            return None  # d.update(...): what it changes is a store, found by the walk
    else:
        return None
    stores: set[str] = set()
    for t in targets:
        if isinstance(t, ast.Name):
            stores.add(t.id)
        else:
            return None  # tuples, attributes, subscripts: walk them
    if ":=" in text:
        return None
    f = _Facts()
    f.stores = stores
    f.loads = set(_IDENT.findall(text)) - stores if len(targets) == 1 else set(_IDENT.findall(text))
    f.seed = _SEED_TEXT.search(text) is not None
    f.acts = _ACTS_TEXT.search(text) is not None
    return f


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno] + [d.lineno for d in decorators])


def slice_source(source: str, tree: ast.Module) -> tuple[str, list[int] | None]:
    """The lines of the statements the analysis can use, and their original numbers.

    The map is None when every statement is kept (the text is then ``source``).
    """
    stmts = tree.body
    lines = split_lines(source)
    facts = []
    for s in stmts:
        f = None
        if s.end_lineno is not None and s.end_lineno - s.lineno < 20:
            f = _text_facts(s, "".join(lines[s.lineno - 1:s.end_lineno]))
        facts.append(f if f is not None else _facts(s))
    storers: dict[str, list[int]] = defaultdict(list)
    loaders: dict[str, list[int]] = defaultdict(list)
    # np.sort(x) is no change to np: a module's name is never one an object is changed under.
    modules = {n for s, f in zip(stmts, facts) if isinstance(s, (ast.Import, ast.ImportFrom)) for n in f.stores}
    changers: dict[str, list[int]] = defaultdict(list)
    for i, (s, f) in enumerate(zip(stmts, facts)):
        for n in f.stores | (f.changes - modules):
            storers[n].append(i)
        for n in f.changes - modules:
            changers[n].append(i)
        # ``d2 = d``: another name of the same object, whose changes in place are changes
        # of what ``d``'s readers read (flow.store_item, mutation.changed).
        if f.acts or type(s) is ast.Assign and isinstance(s.value, (ast.Name, ast.Attribute)):
            for n in f.loads:
                loaders[n].append(i)
    selected = [f.seed for f in facts]
    work = [i for i, f in enumerate(facts) if f.seed]
    while work:
        i = work.pop()
        f = facts[i]
        for n in f.loads:  # what flows in
            for j in storers.get(n, ()):
                if not selected[j]:
                    selected[j] = True
                    work.append(j)
        for n in f.stores:  # what flows out, and changes in place of what it binds
            for j in (*loaders.get(n, ()), *changers.get(n, ())):
                if not selected[j]:
                    selected[j] = True
                    work.append(j)
    if all(selected):
        return source, None
    keep = [False] * (len(lines) + 2)
    for s, sel in zip(stmts, selected):
        if sel:
            last = getattr(s, "end_lineno", None) or s.lineno
            for ln in range(_first_line(s), last + 1):
                keep[ln] = True
    kept = [ln for ln in range(1, len(lines) + 1) if keep[ln]]
    return keep_lines(lines, kept), kept


def keep_lines(lines: list[str], kept: list[int]) -> str:
    """The text of the ``kept`` lines (1-based numbers) of ``lines``."""
    text = "".join(lines[ln - 1] for ln in kept)
    if text and not text.endswith(("\n", "\r")):
        text += "\n"  # the last kept line may have been the file's unterminated last line
    return text
