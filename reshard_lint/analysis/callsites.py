"""Call sites: which values a function's parameters take, and when that is known.

A function's parameters take the values its call sites in the module pass (or its
defaults). That is only sound when every call of the function was seen, so the
interpreter's observations are checked against a syntactic count of the module:

* every call spelled ``f(...)`` (or ``obj.m(...)`` for a method, ``Cls(...)`` for
  ``__init__``) must have been evaluated with a known callee;
* the function must not escape: a reference that is not a call (a callback handed to
  an unknown function, a stored function, ``self.m`` passed on) means calls the
  analysis cannot see, and its parameters stay unknown;
* where call sites pass different values (identity: one binding, one value) the
  parameter is unknown. Precision first.

Names are counted module-wide whatever their scope, so two functions sharing a name
make both counts disagree with what was observed: unknown, never a guess.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Optional

from ..stages.ast_walk import own_scope
from ..stages.call_counts import SyntaxCounts, local_counts
from .arguments import Call
from .values import UNKNOWN, ClassVal, FuncVal, SeqVal, Unknown, Value, func_name, is_unknown, join, unknown

NO_CALL_SITE = "a parameter no call site feeds"
# The same, where other files of the project spell the function's name: calls the
# analysis did not follow (a method of an instance, handed on, more files than it reads).
CALLED_ELSEWHERE = "a parameter of a function other modules may call, whose calls the analysis does not follow"
FOREIGN_VALUE = "a value another module passes that the analysis does not follow"
ESCAPES = "a parameter of a function passed where the analysis cannot follow its calls"
UNSEEN_CALLS = "a parameter of a function called where the analysis did not follow the call"
DISAGREE = "a parameter whose call sites pass different values"
RECURSIVE = "a parameter of a recursive function"
STAR = "a parameter fed by *args or **kwargs"


def parameter(name: str, of: str, what: str = "parameter") -> str:
    """The culprit of an unknown parameter (analysis/reasons.py): ``parameter 'mesh' of
    train_step``, ``field 'mesh' of Config``."""
    return f"{what} '{name}' of {of}"


@dataclass
class Site:
    node: ast.AST
    params: Optional[dict[str, Value]]  # None: the arguments could not be matched
    # The context mesh in force at the call (the analyzer's context_mesh and whether a
    # mesh context may be in force), which a function traced or run there sees.
    context: Optional[tuple[Value, bool]] = None


class CallSites:
    """Observed calls of the module's functions, checked against the syntactic counts."""

    def __init__(self, source: str, tree: Optional[ast.Module] = None,
                 counts: Optional[SyntaxCounts] = None) -> None:
        self._source = source
        self._tree = tree
        self._counts: Optional[SyntaxCounts] = counts
        self.sites: dict[ast.AST, dict[int, Site]] = {}
        self.aliases: dict[ast.AST, set[str]] = {}  # names a wrapper of the function is bound to
        # The scheduler asks for every waiting function after each run: count once.
        self._expected: dict[ast.AST, Optional[int]] = {}
        self._locals: dict[ast.FunctionDef | ast.AsyncFunctionDef, Optional[SyntaxCounts]] = {}
        # Functions whose parameters other modules' calls feed, directly or through a
        # function so fed (interpreter.run_function)
        self.fed: set[ast.AST] = set()
        # The other modules' calls of one of this module's functions (the interpreter's)
        self.foreign: Optional[Callable[[FuncVal], Optional[list[tuple[ast.Call, list[Call]]]]]] = None
        # Do other files of the project spell the function's name (foreign.py)?
        self.named_elsewhere: Optional[Callable[[FuncVal], bool]] = None

    @property
    def counts(self) -> SyntaxCounts:
        if self._counts is None:
            self._counts = SyntaxCounts.of(self._source, self._tree)
        return self._counts

    def observe(self, func: FuncVal, node: ast.AST, params: Optional[dict[str, Value]],
                context: Optional[tuple[Value, bool]] = None) -> None:
        fn_sites = self.sites.setdefault(func.node, {})
        old = fn_sites.get(id(node))
        if old is not None and old.context != context:
            context = None
        if old is not None and old.params is not None and params is not None:
            # The same call evaluated again (a tree-map callback, a loop): join.
            merged = {k: join(v, params.get(k, UNKNOWN)) for k, v in old.params.items()}
            params = merged
        elif old is not None:
            params = None
        fn_sites[id(node)] = Site(node, params, context)

    def observe_fields(self, cls: ClassVal, node: ast.AST, params: Optional[dict[str, Value]]) -> None:
        """A dataclass constructor call: its fields are the parameters."""
        self.sites.setdefault(cls.node, {})[id(node)] = Site(node, params)

    def fields_ready(self, cls: ClassVal) -> bool:
        want = self._class_calls(cls)
        return want is None or len(self.sites.get(cls.node, {})) >= want

    def fields(self, cls: ClassVal, names: list[str]) -> dict[str, Value]:
        return self._agreed(self._class_calls(cls), self.sites.get(cls.node, {}), names,
                            cls.node.name, "field")

    def _class_calls(self, cls: ClassVal) -> Optional[int]:
        name = cls.node.name
        c = self.counts
        if c.name_escapes(name) or c.wrapped.get(name, 0):
            return None
        return c.calls.get(name, 0)

    def alias(self, func: FuncVal, name: str) -> None:
        self.aliases.setdefault(func.node, set()).add(name)
        self._expected.pop(func.node, None)

    def expected(self, func: FuncVal) -> Optional[int]:
        """How many call sites the module spells for ``func``; None: it escapes. A function
        the module never calls takes the calls the project's other modules make, where
        all of them are seen (``foreign``: analysis/foreign.py)."""
        if func.node not in self._expected:
            n = self._count(func)
            found = self.foreign(func) if n == 0 and self.foreign is not None else None
            if found:
                sites = self.sites.setdefault(func.node, {})
                bound = UNKNOWN if func.owner is not None else None  # __init__'s self: its run's
                for call, evaluations in found:
                    params: Optional[dict[str, Value]] = None
                    for args in evaluations:
                        one = bind_arguments(func.node, args, func.defaults, bound)
                        if one is None:
                            params = None
                            break
                        params = one if params is None else {k: join(v, one.get(k, UNKNOWN))
                                                             for k, v in params.items()}
                    sites[id(call)] = Site(call, params)
                n = len(found)
                if not _yields(func.node):
                    self.fed.add(func.node)
                # (A generator's calls make none of its transfers: they run where it is
                # iterated, and no call relays them (functions.relayed). Its run here, fed
                # by those calls, reports them at their own lines, and so do the runs of
                # the functions it calls.)
            self._expected[func.node] = n
        return self._expected[func.node]

    def _count(self, func: FuncVal) -> Optional[int]:
        fn = func.node
        if type(fn) is ast.Lambda and func.name is not None:
            name = func.name  # ``put = lambda x: ...``: counted as a def of that name
        elif type(fn) is ast.FunctionDef or type(fn) is ast.AsyncFunctionDef:
            name = fn.name
        else:
            return None
        c = self.counts
        if func.owner is not None:
            if c.attr_escapes(name):
                return None
            n = c.attr_calls.get(name, 0)
            if name == "__init__":
                cls_name = func.owner.node.name
                if c.name_escapes(cls_name) or c.wrapped.get(cls_name, 0):
                    return None
                n += c.calls.get(cls_name, 0)
            return n
        names = {name} | self.aliases.get(fn, set())
        if names == {name}:
            c = self._local(func) or c
        if any(c.name_escapes(n) for n in names):
            return None
        return sum(c.calls.get(n, 0) for n in names)

    def _local(self, func: FuncVal) -> Optional[SyntaxCounts]:
        """The counts inside the function that defines ``func``, when one does
        (call_counts.local_counts); names bound to wrappers of it are counted module-wide."""
        outer = getattr(func.scope, "node", None)
        if type(outer) is not ast.FunctionDef and type(outer) is not ast.AsyncFunctionDef:
            return None
        if outer not in self._locals:
            self._locals[outer] = local_counts(outer)
        return self._locals[outer]

    def ready(self, func: FuncVal) -> bool:
        """Every call the module spells for ``func`` has been seen (it can run now)."""
        want = self.expected(func)
        return want is None or len(self.sites.get(func.node, {})) >= want

    def parameters(self, func: FuncVal, names: list[str]) -> dict[str, Value]:
        """The value of each parameter: one value all call sites agree on, or unknown.

        ``*args`` and ``**kwargs`` take what the calls pass (an empty tuple or dict where
        none passes extra arguments) only for a function defined inside another one: a
        module-level function or a method may be called from the project's other
        modules, with extra arguments this module's calls do not show (a call of it run
        for its result binds them exactly: ``bind_arguments``)."""
        want, seen = self.expected(func), self.sites.get(func.node, {})
        if want == 0 and not seen and self.named_elsewhere is not None and self.named_elsewhere(func):
            return {n: unknown(CALLED_ELSEWHERE, parameter(n, func_name(func))) for n in names}
        out = self._agreed(want, seen, names, func_name(func))
        fn = func.node
        if isinstance(fn, ast.Lambda) or not _local(func):
            for star in (fn.args.vararg, fn.args.kwarg):
                if star is not None and star.arg in out:
                    out[star.arg] = unknown(STAR, parameter(star.arg, func_name(func)))
        return out

    def context(self, func: FuncVal) -> Optional[tuple[Value, bool]]:
        """The context mesh every call of ``func`` runs it under, when every call was
        seen and they agree (one mesh object); None otherwise."""
        want = self.expected(func)
        seen = self.sites.get(func.node, {})
        if not want or len(seen) != want:
            return None
        contexts = {(id(s.context[0]), s.context[1]) if s.context is not None else None for s in seen.values()}
        if len(contexts) != 1 or None in contexts:
            return None
        return next(iter(seen.values())).context

    def _agreed(self, want: Optional[int], seen: dict[int, Site], names: list[str], of: str,
                what: str = "parameter") -> dict[str, Value]:
        """``of``: the function's (or dataclass's) name, for the culprits of unknowns."""
        if want is None:
            return {n: unknown(ESCAPES, parameter(n, of, what)) for n in names}
        if not seen and want == 0:
            return {n: unknown(NO_CALL_SITE, parameter(n, of, what)) for n in names}
        if len(seen) != want or any(s.params is None for s in seen.values()):
            return {n: unknown(UNSEEN_CALLS, parameter(n, of, what)) for n in names}
        out: dict[str, Value] = {}
        for n in names:
            # (no params is None: above)
            vals = [s.params.get(n, UNKNOWN) for s in seen.values()]  # type: ignore[union-attr]
            v = vals[0]
            if isinstance(v, SeqVal) and all(_empty(x, v) for x in vals):
                out[n] = SeqVal((), v.kind, ())
                continue
            for other in vals[1:]:
                v = join(v, other)
            if is_unknown(v) and not all(is_unknown(x) for x in vals):
                # A call of another module the analysis did not evaluate says so itself.
                v = next((x for x in vals if isinstance(x, Unknown) and x.reason == FOREIGN_VALUE), None) \
                    or unknown(DISAGREE, parameter(n, of, what))
            out[n] = v
        return out


def _local(func: FuncVal) -> bool:
    """``func`` is defined inside another function's body: no other module can call it."""
    outer = getattr(func.scope, "node", None)
    return type(outer) is ast.FunctionDef or type(outer) is ast.AsyncFunctionDef


def _empty(v: Value, like: Value) -> bool:
    """``v`` is an empty tuple or dict as ``like`` is (the ``*args`` or ``**kwargs`` of
    calls that pass no extra arguments), never changed in place."""
    return isinstance(v, SeqVal) and isinstance(like, SeqVal) and not v.items and not v.changed \
        and v.kind == like.kind


def bind_arguments(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, call: Call, defaults: dict[str, Value],
                   bound: Optional[Value] = None, prefix: tuple[Value, ...] = (),
                   extra_kwargs: Optional[dict[str, Value]] = None) -> Optional[dict[str, Value]]:
    """Parameter -> value for one call, as Python binds them; None where it cannot tell.

    ``bound`` is the receiver of a method call (the first parameter), ``prefix`` the
    positional arguments a ``partial`` already holds.
    """
    if call.has_star:
        return None
    params = fn.args
    plain = [p.arg for p in [*params.posonlyargs, *params.args]]
    kwonly = [p.arg for p in params.kwonlyargs]
    positional = ([bound] if bound is not None else []) + list(prefix) + [v for v, _ in call.positional]
    out: dict[str, Value] = {}
    if len(positional) > len(plain) and params.vararg is None:
        return None
    for name, v in zip(plain, positional):
        out[name] = v
    keywords = dict(extra_kwargs or {})
    keywords.update({k: v for k, (v, _) in call.keywords.items()})
    extra: dict[str, Value] = {}
    for k, v in keywords.items():
        if k in out or (k not in plain and k not in kwonly):
            if params.kwarg is None or k in out:
                return None
            extra[k] = v
            continue
        out[k] = v
    # This call spells every argument (no ``*xs``/``**kw`` spread: above), so ``*args``
    # is the tuple of the positionals left over, ``**kwargs`` the dict of the keywords no
    # parameter names, as Python binds them.
    if params.vararg is not None:
        out[params.vararg.arg] = SeqVal(tuple(positional[len(plain):]), "tuple")
    if params.kwarg is not None:
        out[params.kwarg.arg] = SeqVal(tuple(extra.values()), "dict", tuple(extra))
    for name in plain + kwonly:
        if name not in out:
            if name not in defaults:
                return None  # Python raises TypeError: not a call that runs
            out[name] = defaults[name]
    return out


def _yields(fn: ast.AST) -> bool:
    """A ``def`` whose own body (not a nested function's) yields: a generator."""
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) \
        and any(type(n) is ast.Yield or type(n) is ast.YieldFrom for n in own_scope(fn.body))
