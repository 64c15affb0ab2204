"""Calls of the module's own functions, methods and classes, and of other project
modules' functions (project/defs.py), which run here quietly.

Two things happen at a call: the call site is recorded (callsites.py), so that the
function's own run sees the values its callers pass; and the function is evaluated
quietly for its return value in this call's argument context, memoized per context
and bounded in depth and in contexts per function, so cost stays linear in practice.
"""

from __future__ import annotations

import ast
from typing import Optional, Sequence

from .arguments import Call
from .events import Event
from .callsites import bind_arguments
from .interpreter_base import InterpreterBase
from ..stages.ast_walk import own_scope
from .scope import FUNCTIONS, Scope, count_bindings, with_rebound
from .valueops import each
from ..core import vocabulary as api
from ..core.qualnames import canonical
from .models import placement, shard_map
from .values import (
    UNKNOWN, ArrayVal, ConstVal, DevVal, FuncVal, GenVal, HostVal, InstanceVal, IntVal, JitVal,
    MeshContextVal, MeshVal, PartialVal, QualVal, SeqVal, ShardingVal, SliceVal, SpecVal, Unknown, Value,
    func_name, join, unknown,
)

_MAX_INLINE_DEPTH = 6
_MAX_CONTEXTS = 8  # distinct argument contexts evaluated per function

TOO_DEEP = "a result of helpers nested deeper than the analysis follows"
TOO_MANY_CONTEXTS = "a result of a function called with more different arguments than the analysis follows"
RECURSIVE_CALL = "a result of a function that calls itself"
UNMATCHED = "a result of a call whose arguments do not match the function"
NO_RETURN = "a result of a helper that returns nothing the analysis knows"
NOT_ONE_ELEMENT = "an element of a generator that yields values the analysis does not join"


class Functions(InterpreterBase):
    """The interpreter's calls into functions defined in the file."""

    def observe_call(self, func: FuncVal, call: Call, node: ast.AST, *, bound: Optional[Value] = None,
                     prefix: Sequence[Value] = (), extra_kwargs: Optional[dict[str, Value]] = None
                     ) -> Optional[dict[str, Value]]:
        params = bind_arguments(func.node, call, func.defaults, bound, tuple(prefix), extra_kwargs)
        # Only the analysis proper records call sites: a quiet evaluation for a return
        # value runs the same calls again in one caller's context. Another module's
        # function has its call sites there.
        if not self.quiet and func.home is None and (isinstance(func.node, FUNCTIONS) or func.name is not None):
            self.callsites.observe(func, node, params, (self.context_mesh, self.mesh_context))
            if self.fed_depth:
                self.callsites.fed.add(func.node)  # its arguments are other modules' calls' too
        return params

    def call_function(self, func: FuncVal, call: Call, node: ast.AST, *, bound: Optional[Value] = None,
                      prefix: Sequence[Value] = (), extra_kwargs: Optional[dict[str, Value]] = None) -> Value:
        params = self.observe_call(func, call, node, bound=bound, prefix=prefix, extra_kwargs=extra_kwargs)
        if params is None:
            self.unfollowed(func)
            return unknown(UNMATCHED, func_name(func))
        if func.manager:
            return self.managed(func, params)
        self.plain_calls += 1
        self.call_nodes.append(node)
        try:
            result = self.relayed(func, params, call)
            if result is None:
                result = self.inline(func, params)
        finally:
            self.plain_calls -= 1
            self.call_nodes.pop()
        if func.home is not None and not self.inline_stack:
            # Messages name this call beside the other module's line (render.describe_mesh).
            for made in (result.items if isinstance(result, SeqVal) else (result,)):
                if isinstance(made, MeshVal):
                    self.ctx.made_by.setdefault(id(made), node)
        return result

    def relayed(self, func: FuncVal, params: dict[str, Value], call: Call) -> Optional[Value]:
        """Another module's function called by this file's own code (or traced by a jitted
        call of it): run with this call's arguments, its transfers (and those of the
        functions it calls in its module, or another) are this call's to report
        (interpreter.emit); its result. They are reported only when the run took no path
        it could not decide (an ``if`` whose test this call's values do not decide, a
        ``while``, ``try``, ``match``, ``assert``, a comprehension's condition): a guard
        inside (``if jax.process_index() == 0``) would be read around the call here
        instead, and a transfer on a path the call may not take is no crossing of this
        call. ``if isinstance(params, dict)`` of a dict, ``if mesh is None`` of a mesh
        are decided. None: not run so."""
        fn = func.node
        if func.home is None or self.quiet or self.relay is not None or generator(fn) \
                or not (type(fn) is ast.Lambda or isinstance(fn, FUNCTIONS) and fn.body):
            return None
        self.relay = (call, self.quiet + 1, len(self.inline_stack) + 1)
        self.relay_calls_at = len(self.call_nodes)
        self.relay_args = tuple(params.values())
        held, self.relay_held = self.relay_held, []
        self.relay_gaps = set()
        before = self.undecided
        try:
            result = self.run_callable(func, params, quiet=True)
        finally:
            self.relay, self.relay_args = None, ()
            events, self.relay_held = self.relay_held, held
            gaps, self.relay_gaps = self.relay_gaps, set()
        decided = self.undecided == before
        if decided:
            for event in events:
                self.sink(event)
        # For coverage across files (frontends/coverage_relay.py): whether this run
        # reported every transfer the call makes, and the functions it did not run.
        self.ctx.relay_runs.append((call.node, decided, frozenset(gaps)))
        return result

    def unfollowed(self, func: FuncVal) -> None:
        """A call of ``func`` inside a relayed run that was not run with its arguments (a
        memoized result, recursion, the depth or context bounds, arguments it cannot
        bind): its transfers are not among the call's. Noted by (the other module's
        file, or "" for this one, the function's name)."""
        if self.relay is not None:
            fn = func.node
            self.relay_gaps.add((func.home or "", fn.name if not isinstance(fn, ast.Lambda) else "<lambda>"))

    def relaying(self, event: Event) -> bool:
        """Is ``event`` a transfer of the relayed run itself, or of a function it calls
        (quietly, for its result; a callback it traces), not of a pass that settles a
        loop's names or of an expected-error block? A function of this file it calls
        reports its own transfers."""
        assert self.relay is not None
        _, quiet, depth = self.relay
        nested = len(self.inline_stack) - depth
        if self.settling or nested < 0 or not 0 <= self.quiet - quiet <= nested:
            return False
        return not nested or self.ctx.module.owner(event.node) is not self.ctx.module

    def apply_decorator(self, dec: Value, func: Value, node: ast.AST) -> Value:
        """What ``@dec`` over a def binds its name to: the function marked (a property's
        getter, a context manager), a jitted or shard_mapped one, or what a decorator of
        the program returns for it; unknown otherwise."""
        if isinstance(dec, QualVal) and isinstance(func, FuncVal):
            if canonical(dec.qual) == api.PROPERTY and func.owner is not None:
                func.prop = True  # read as an attribute of an instance: classes.read_property
                return func
            if dec.qual == api.CONTEXT_MANAGER:
                func.manager = True  # called, it runs to its yield: functions.managed
                return func
        if isinstance(dec, QualVal) and canonical(dec.qual) == api.JIT:
            return JitVal(node, func=func, plain=True)
        if isinstance(dec, PartialVal) and isinstance(dec.func, QualVal) \
                and canonical(dec.func.qual) == api.JIT:
            return JitVal(node, dec.kwargs.get("in_shardings", UNKNOWN),
                          dec.kwargs.get("out_shardings", UNKNOWN), func=func,
                          plain=not dec.star and not dec.args and placement.keeps_placement(dec.kwargs),
                          sharded=tuple(k for k in api.JIT_SHARDINGS if k in dec.kwargs))
        if isinstance(dec, PartialVal) and isinstance(dec.func, QualVal) \
                and canonical(dec.func.qual) == api.SHARD_MAP and not dec.star and not dec.args:
            return shard_map.shard_mapped(func, dec.kwargs.get("mesh"), dec.kwargs.get("out_specs", UNKNOWN), node)
        if isinstance(dec, JitVal):  # jax.jit(out_shardings=...) used as a decorator factory
            return JitVal(dec.node, dec.in_shardings, dec.out_shardings, func=func, plain=dec.plain,
                          sharded=dec.sharded)
        if isinstance(dec, FuncVal) and isinstance(func, (FuncVal, JitVal)):
            # A decorator of the program's own (``@register("train")``, whose inner
            # function files the function in a table and returns it): Python binds the
            # name to what the decorator returns for the function, run as any call is.
            # Kept where that is a function; anything else is not followed.
            made = self.call_function(dec, Call.of_values(node, [func]), node)
            return made if isinstance(made, (FuncVal, JitVal)) else UNKNOWN
        return UNKNOWN

    def managed(self, func: FuncVal, params: dict[str, Value]) -> Value:
        """A call of a ``@contextlib.contextmanager`` generator: what ``with`` enters. Its
        body runs quietly with this call's arguments to its one yield; where a
        ``jax.set_mesh`` is in force there and the yield gives that mesh (or nothing, so
        that ``with f() as m`` binds what the analysis binds), entering the call enters
        that mesh context (interpreter.exec_with). Anything else: unknown."""
        fn = func.node
        if not generator(fn) or fn in self.inline_stack or len(self.inline_stack) >= _MAX_INLINE_DEPTH:
            self.unfollowed(func)
            return unknown(NO_RETURN, func_name(func))
        saved, self.managing = self.managing, (fn, [])
        try:
            self.run_callable(func, params, quiet=True)
            got = self.managing[1]
        finally:
            self.managing = saved
        if len(got) == 1:
            value, site = got[0]
            if isinstance(site, MeshContextVal) and (value is site.mesh or isinstance(value, ConstVal)
                                                     and value.value is None):
                return site
        return unknown(NO_RETURN, func_name(func))

    def inline(self, func: FuncVal, params: dict[str, Value]) -> Value:
        """The function's return value for these arguments, evaluated quietly, memoized."""
        fn = func.node
        stopped = self._beyond_bounds(func)
        if stopped is not None:
            return stopped
        # The closure is part of the call: two functions made by two calls of one factory
        # (``make(m1)``, ``make(m2)``) share a node but read different names.
        key = (("", func.scope), *sorted((k, _identity(v)) for k, v in params.items()))
        memo = self.memo.setdefault(fn, {})
        if key in memo:
            earlier, result = memo[key]
            rebound = _rebind(result, earlier, params)
            if rebound is not None:
                self.unfollowed(func)  # run before: its transfers were reported then, if at all
                return rebound
            # What it gave holds the other call's arrays where they cannot be swapped for
            # this call's: this call is a context of its own.
            key = (("", func.scope), *sorted((k, _identity(v, exact=True)) for k, v in params.items()))
            if key in memo:
                self.unfollowed(func)
                return memo[key][1]
        if len(memo) >= _MAX_CONTEXTS:
            self.unfollowed(func)
            return unknown(TOO_MANY_CONTEXTS, func_name(func))
        filings = self.filings
        result = self.run_callable(func, params, quiet=True)
        if self.filings == filings:
            # (A run that filed into a module's container is run again at the next call,
            # which files again: flow.store_global.)
            memo[key] = (params, result)  # params kept alive: the key holds their ids
        return result

    def run_quietly(self, func: FuncVal, params: dict[str, Value]) -> Value:
        """The function run quietly for these arguments once more, not memoized (a
        construction's ``__init__``, whose ``self`` is new at each: classes.py), bounded
        in depth as ``inline`` is."""
        stopped = self._beyond_bounds(func)
        return stopped if stopped is not None else self.run_callable(func, params, quiet=True)

    def _beyond_bounds(self, func: FuncVal) -> Optional[Value]:
        """Why a call of ``func`` is not run quietly here (it is running already, or the
        helpers are nested as deep as the analysis follows); None where it is."""
        if func.node in self.inline_stack or len(self.inline_stack) >= _MAX_INLINE_DEPTH:
            self.unfollowed(func)
            return unknown(RECURSIVE_CALL if func.node in self.inline_stack else TOO_DEEP, func_name(func))
        return None

    def call_with_leaves(self, func: FuncVal, leaves: list[Value], node: ast.AST) -> Value:
        """A tree.map callback on one leaf of each tree, with its events (not quiet)."""
        params = self.observe_call(func, Call.of_values(node, leaves), node)
        if params is None:
            self.unfollowed(func)
            return unknown(UNMATCHED, func_name(func))
        # Another module's function: what happens in it is that module's to report.
        return self.run_callable(func, params, quiet=func.home is not None)

    def run_callable(self, func: FuncVal, params: dict[str, Value], quiet: bool) -> Value:
        fn = func.node
        if fn in self.inline_stack:
            self.unfollowed(func)
            return unknown(RECURSIVE_CALL, func_name(func))
        parent: Scope = func.scope  # type: ignore[assignment]  # (FuncVal.scope: a Scope, typed object)
        if isinstance(fn, ast.Lambda):
            body_stmts: Sequence[ast.stmt] = []
            bindings: dict[str, int] = {}
        else:
            body_stmts = fn.body
            bindings = count_bindings(body_stmts)
        scope = with_rebound(Scope(parent if parent.kind != "class" else parent.parent, "function",
                                   self._param_bindings(fn.args, bindings), fn), body_stmts)
        for n in self._param_names(fn.args):
            scope.vars[n] = params.get(n, UNKNOWN)
        self.inline_stack.append(fn)
        home, self.home_now = self.home_now, func.home
        self.quiet += quiet
        saved_pending = len(self.pending)
        is_generator = generator(fn)
        if is_generator:
            self.yields.append((fn, []))
        try:
            if type(fn) is ast.Lambda:
                return self.eval(fn.body, scope)
            self.returns.append([])
            self.exec_block(body_stmts, scope)
            rets = self.returns.pop()
        finally:
            self.stopped = ""  # the caller is in the middle of its statement
            self.home_now = home
            self.quiet -= quiet
            self.inline_stack.pop()
            del self.pending[saved_pending:]  # nested defs are analysed on their own
            yielded = self.yields.pop()[1] if is_generator else []
        if is_generator:
            # A generator's call gives an iterator (its return value ends the iteration):
            # its elements are what the body yields, where one value stands for them all.
            return GenVal(each(yielded) or unknown(NOT_ONE_ELEMENT, func_name(func)) if yielded
                          else unknown(NO_RETURN, func_name(func)))
        if not rets:
            return unknown(NO_RETURN, func_name(func))
        v = rets[0]
        for other in rets[1:]:
            v = join(v, other)
        return v


_GENERATORS: dict[int, tuple[ast.AST, bool]] = {}


def generator(fn: ast.AST) -> bool:
    """A ``def`` whose own body (not a nested function's or class's) yields."""
    if not isinstance(fn, FUNCTIONS):
        return False
    known = _GENERATORS.get(id(fn))
    if known is not None and known[0] is fn:
        return known[1]
    found = any(type(node) is ast.Yield or type(node) is ast.YieldFrom for node in own_scope(fn.body))
    if len(_GENERATORS) > 4096:
        _GENERATORS.clear()
    _GENERATORS[id(fn)] = (fn, found)
    return found


def _identity(v: Value, depth: int = 0, exact: bool = False) -> object:
    """What tells two arguments apart in the memo: the object, but for the empty
    ``*args`` or ``**kwargs`` each call makes afresh (one context however many calls),
    an unknown, which tells every call apart, and an array on a sharding the analysis
    knows: two arrays on one sharding object, computed alike (``derived``), are placed
    alike, and a function can tell them apart by nothing else the analysis holds (the
    leaves of a parameter tree updated in a loop, one context per leaf's sharding, not
    per step; what such a run gave is handed to the next call with that call's arrays in
    place of the first one's: ``_rebind``). ``exact``: the array object itself."""
    if isinstance(v, SeqVal) and not v.items and not v.changed:
        return ("empty", v.kind)
    if isinstance(v, ArrayVal) and not exact:
        return ("array", id(v.sharding), v.derived)
    if isinstance(v, Unknown):
        # Two unknowns are never one value, even where they are one object (the nameless
        # UNKNOWN): a call with one is never the memo's answer to another call.
        return object()
    if isinstance(v, InstanceVal) and v.attrs is not None:
        # Two constructions of a class of this file whose __init__ assigned the same
        # values to the instance's own attributes, which nothing changes after: one
        # context for its methods (``test_a`` and ``test_b`` each building a Trainer).
        # (An instance in them, such as a helper its __init__ built, compared the same way,
        # a few levels deep.)
        return ("instance", id(v.cls), tuple((k, id(a) if depth > 2 else _identity(a, depth + 1))
                                             for k, a in sorted(v.attrs.items(), key=lambda kv: kv[0])))
    return id(v)


# What a memoized result may hold that takes nothing from the call's arrays but what the
# analysis keeps apart from them (their sharding, a mesh): handed on as it is.
_PLAIN = (ArrayVal, ShardingVal, MeshVal, SpecVal, DevVal, HostVal, ConstVal, IntVal, SliceVal, QualVal,
          Unknown)


def _rebind(result: Value, earlier: dict[str, Value], params: dict[str, Value]) -> Optional[Value]:
    """``result``, which a call with the arguments ``earlier`` gave, for a call with
    ``params`` that ``_identity`` does not tell apart: the earlier call's arrays (the
    arguments themselves) replaced by this call's where the result holds them (itself, or
    in its tuples, lists and dicts); None where it holds something that may keep an
    earlier array out of sight (an instance, a function, an iterator)."""
    swap = {id(old): new for k, old in earlier.items()
            if isinstance(old, ArrayVal) and (new := params.get(k)) is not None and new is not old}
    if not swap:
        return result

    def walk(v: Value) -> Optional[Value]:
        if id(v) in swap:
            return swap[id(v)]
        if isinstance(v, SeqVal):
            items = [walk(i) for i in v.items]
            if any(i is None for i in items):
                return None
            if all(a is b for a, b in zip(items, v.items)):
                return v
            return SeqVal(tuple(i for i in items if i is not None), v.kind, v.keys, changed=v.changed,
                          view=v.view)
        return v if isinstance(v, _PLAIN) else None

    return walk(result)
