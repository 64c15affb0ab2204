"""Python's scoping, enough to tell a function's free names from its locals.

components.py asks it, unit by unit, what each part of a long file defines for the
others and reads from them: sets of names, nested scopes included. The same walk can
count the file's calls for the analysis (call_counts.py): a sliced file's counts are
taken over the whole file, and a second walk of every node would cost a third as much
as slicing does.

The analysis has its own scopes (analysis/scope.py) for another question: how many
sites bind a name in one block, not entering nested scopes, read as the interpreter
runs the block, with the values bound. The two are kept apart because they answer
different questions.
"""

from __future__ import annotations

import ast
from typing import Iterable

from .ast_walk import fields as child_fields
from .call_counts import SyntaxCounts
from ..core.qualnames import MUTATING_METHODS

# Seeding or drawing from Python's or NumPy's global generator (components.py: shared state).
_RNG_NAMES = frozenset({"seed", "shuffle", "permutation", "sample", "choice"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class Scan:
    """One statement's names, scope by scope; ``counts``, when given, also gets its calls
    counted exactly as ``SyntaxCounts.of`` counts them."""

    def __init__(self, counts: SyntaxCounts | None = None) -> None:
        self.attr_refs: set[str] = set()
        self.attr_defs: set[str] = set()
        self.globals: set[str] = set()
        self.rng = False
        self.seeds = False
        self.counts = counts
        # Names whose objects a statement changes in place (d[k] = v, d.update(...),
        # setattr(obj, ...)): a unit doing so is one more place that defines them.
        self.mutated: set[str] = set()

    def scope(self, body: list[ast.AST], kind: str, bound: Iterable[str] = ()) -> tuple[set[str], set[str]]:
        """(names this scope reads that it does not bind, names it binds); names free in
        nested scopes count as read here unless bound here (a class body binds nothing
        for the functions in it)."""
        loads: set[str] = set()
        binds: set[str] = set(bound)
        declared: set[str] = set()
        inner: set[str] = set()
        counts = self.counts
        refs = counts.refs if counts is not None else None
        attr_counts = counts.attr_refs if counts is not None else None
        stack = list(body)
        pop, push, extend = stack.pop, stack.append, stack.extend
        Name, Attribute, Load, Call = ast.Name, ast.Attribute, ast.Load, ast.Call
        while stack:
            node = pop()
            # t is type(node), one lookup for the branches; mypy does not narrow the node by it,
            # hence the ignores below.
            t = type(node)
            if t is Name:
                name = node.id  # type: ignore[attr-defined]
                if type(node.ctx) is Load:  # type: ignore[attr-defined]
                    loads.add(name)
                    if refs is not None:
                        refs[name] = refs.get(name, 0) + 1
                else:
                    binds.add(name)
                continue
            if t is Attribute:
                attr = node.attr  # type: ignore[attr-defined]
                self.attr_refs.add(attr)
                if type(node.ctx) is not Load:  # type: ignore[attr-defined]
                    self.attr_defs.add(attr)
                elif attr_counts is not None:
                    attr_counts[attr] = attr_counts.get(attr, 0) + 1
                push(node.value)  # type: ignore[attr-defined]
                continue
            if t is Call:
                if counts is not None:
                    counts.call(node)  # type: ignore[arg-type]
                changed = mutated_by_call(node)  # type: ignore[arg-type]
                if changed is not None:
                    self.mutated.add(changed)
            elif t is ast.Subscript and type(node.ctx) is not Load:  # type: ignore[attr-defined]
                changed = changed_name(node)
                if changed is not None:
                    self.mutated.add(changed)
            elif t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.Lambda:
                inner |= self._function(node, binds, stack)  # type: ignore[arg-type]
                continue
            elif t is ast.ClassDef:
                binds.add(node.name)  # type: ignore[attr-defined]
                extend(node.bases)  # type: ignore[attr-defined]
                extend(k.value for k in node.keywords)  # type: ignore[attr-defined]
                extend(node.decorator_list)  # type: ignore[attr-defined]
                self._type_params(node)
                free, _ = self.scope(list(node.body), "class")  # type: ignore[attr-defined]
                inner |= free
                continue
            elif t in _COMPREHENSIONS:
                gens = node.generators  # type: ignore[attr-defined]
                push(gens[0].iter)  # evaluated in the enclosing scope
                parts: list[ast.AST] = [g.target for g in gens] + [g.iter for g in gens[1:]]
                parts += [c for g in gens for c in g.ifs]
                parts += ([node.key, node.value]  # type: ignore[attr-defined]
                          if t is ast.DictComp else [node.elt])  # type: ignore[attr-defined]
                free, _ = self.scope(parts, "function")
                inner |= free
                continue
            elif t is ast.Global or t is ast.Nonlocal:
                declared.update(node.names)  # type: ignore[attr-defined]
                if t is ast.Global:
                    self.globals.update(node.names)  # type: ignore[attr-defined]
                continue
            elif t is ast.Import or t is ast.ImportFrom:
                aliases = node.names  # type: ignore[attr-defined]
                binds.update((x.asname or x.name).split(".")[0] for x in aliases)
                continue
            elif t is ast.AnnAssign and counts is not None:
                # The annotation is read (walked below) but calls nothing: counted back out.
                counts.add(node.annotation, -1)  # type: ignore[attr-defined]
            name = getattr(node, "name", None)  # except ... as e, match captures
            if type(name) is str:
                binds.add(name)
            if t is ast.MatchMapping and node.rest:  # type: ignore[attr-defined]
                binds.add(node.rest)  # type: ignore[attr-defined]
            for field in child_fields(t):
                value = getattr(node, field, None)
                if type(value) is list:
                    extend(v for v in value if isinstance(v, ast.AST))
                elif isinstance(value, ast.AST):
                    push(value)
        here = binds - declared
        if loads & _RNG_NAMES or self.attr_refs & _RNG_NAMES:
            self.rng = True
            self.seeds = self.seeds or "seed" in loads or "seed" in self.attr_refs
        if kind == "class":
            return (loads - here) | inner, here
        return (loads - here) | (inner - here), here

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, binds: set[str],
                  stack: list[ast.AST]) -> set[str]:
        """A function or lambda met in a scope: its defaults, decorators and annotations
        are read there; its body is a scope of its own. Returns its free names."""
        a = node.args
        stack.extend(a.defaults)
        stack.extend(d for d in a.kw_defaults if d is not None)
        args = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p is not None)]
        if isinstance(node, ast.Lambda):
            body: list[ast.AST] = [node.body]
        else:
            binds.add(node.name)
            stack.extend(node.decorator_list)
            annotations = [p.annotation for p in args if p.annotation is not None]
            if node.returns is not None:
                annotations.append(node.returns)
            stack.extend(annotations)
            if self.counts is not None:
                for ann in annotations:
                    self.counts.add(ann, -1)  # walked for the names they read, not counted
            self._type_params(node)
            body = list(node.body)
        free, _ = self.scope(body, "function", [p.arg for p in args])
        return free

    def _type_params(self, node: ast.AST) -> None:
        # PEP 695 bounds: not scanned for names (as before), but counted like the rest.
        if self.counts is not None:
            for param in getattr(node, "type_params", None) or ():
                self.counts.add(param)


def changed_name(target: ast.AST) -> str | None:
    """The name whose object an assignment to ``target`` changes in place: ``config`` of
    ``config.target`` or ``d[k]``; None for a plain name (a binding) or a tuple."""
    if not isinstance(target, (ast.Attribute, ast.Subscript)):
        return None
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def mutated_by_call(call: ast.Call) -> str | None:
    """The name whose object the call changes: ``d`` of ``d.update(...)``, ``obj`` of
    ``setattr(obj, ...)`` and ``monkeypatch.setattr(obj, ...)``."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in MUTATING_METHODS:
        return changed_name(func)  # the name under d.update, self.cache.append
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name in ("setattr", "delattr") and call.args:
        first = call.args[0]
        return first.id if isinstance(first, ast.Name) else changed_name(first)
    return None
