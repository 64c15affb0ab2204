"""Control flow: branches, loops and handlers, and the values names have where paths meet.

Where two paths disagree, a name becomes unknown; a path that returns, raises, breaks or
continues does not reach the statement after it (``exits``). A ``for`` loop over a
sequence the analysis knows exactly runs once per element (``Flow._unrolled``,
unroll.py); in any other loop a name the loop rebinds keeps a value that every iteration
gives back (``Flow._loop_head``), or is unknown.
"""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional, Sequence, cast

from . import mutation, unroll
from .functions import generator
from .interpreter_base import InterpreterBase
from .scope import Scope, count_bindings, names_in_target
from .valueops import ordered
from .values import (
    UNKNOWN, ArrayVal, ConstVal, DevVal, FuncVal, HostVal, PATHS, SeqVal, Unknown, Value, alike, join,
    same_place, undecidable, unknown,
)

# Quiet runs of a loop's body before its names settle or are given up on.
_LOOP_PASSES = 3


class _Trace(NamedTuple):
    """What the quiet runs of a loop's body must leave as they found it: functions waiting
    to run (a def in the body would run once per pass), the return values of the function
    being run and the values a generator being run yields, memoized helper results (each pass has new arguments and would use up the
    helpers' argument contexts: functions.py), and the file's records of meshes (RSH102
    counts the device arrays meshes are built on) and of classes' __init__."""

    pending: int
    returns: int
    yields: int
    memo: dict[ast.AST, int]
    made_by: dict[int, ast.AST]
    mesh_roots: set[int]
    inits: dict[int, FuncVal]


class Flow(InterpreterBase):
    """The interpreter's compound statements that split and join paths."""

    settling = False  # a loop's body runs quietly to settle its names (no nested settling)
    # > 0 where the code runs other than once in order (in a loop run as any number of
    # iterations, in a block expected to fail): a store into a container is not followed.
    inexact = 0
    unroll_weight = 1  # the product of the element counts of the loops run per element around it
    unroll_runs = 0  # loop bodies run per element so far in the file (unroll.MAX_RUNS)
    # > 0 inside a block of an if, try or match whose path the analysis did not decide.
    branching = 0
    # The module body is running (not a function's own run after it), and how many of the
    # functions running now were entered by a plain call (functions.call_function): where
    # both say so, a function's body runs once in order as part of the module's (store_global).
    top_run = False
    plain_calls = 0
    filings = 0  # stores into module-level containers followed (functions.inline: not memoized)

    def exec_branches(self, scope: Scope, blocks: Sequence[Sequence[ast.stmt]]) -> None:
        before = dict(scope.vars)
        ctx_before = self.context_mesh
        results: list[dict[str, Value]] = []
        ctxs: list[Value] = []
        through: list[bool] = []
        for stmts in blocks:
            scope.vars = dict(before)
            self.context_mesh = ctx_before
            self.branching += 1
            try:
                self.exec_block(stmts, scope)
            finally:
                self.branching -= 1
            results.append(scope.vars)
            ctxs.append(self.context_mesh)
            through.append(not exits(stmts))
        if any(through):
            # A branch that returns, raises, breaks or continues does not reach the code
            # after the statement: ``if mesh is None: raise ...`` leaves the other binding.
            results = [r for r, t in zip(results, through) if t]
            ctxs = [c for c, t in zip(ctxs, through) if t]
        scope.vars = _merge(results)
        c = ctxs[0] if ctxs else ctx_before
        for other in ctxs[1:]:
            c = join(c, other)
        self.context_mesh = c

    def exec_loop(self, stmt: ast.For | ast.AsyncFor | ast.While, scope: Scope) -> None:
        if isinstance(stmt, ast.While):
            self._joined_loop(stmt, scope, None)
            return
        # Python evaluates what a for loop iterates once, before the loop, with the
        # names as they are then.
        it = self.eval(stmt.iter, scope)
        if type(stmt) is ast.For and self._unrolled(stmt, it, scope):
            return
        # Run for elements it does not know, the body may run for none of them: a
        # transfer in it is no crossing of a call that relays it (functions.relayed).
        self.undecided += 1
        self._joined_loop(stmt, scope, it)

    def _unrolled(self, stmt: ast.For, it: Value, scope: Scope) -> bool:
        """Run the loop once per element, in order, as Python does (unroll.py): the target
        bound to each element, each run's events emitted (a call that crosses on one
        element crosses), and after the loop the names as the last run left them, the
        target the last element; then the ``else`` block. False: not run so (what is
        iterated, the body or the cost is not one it follows exactly)."""
        planned = unroll.plan(self, stmt.iter, it, scope)
        if planned is None or not unroll.plain_body(stmt.body):
            return False
        elements, weight = planned
        seen = unroll.sources(self, stmt.iter, it, scope)
        outer, self.unroll_weight = self.unroll_weight, weight
        roots: set[int] | None = None
        assigned = count_bindings(stmt.body)
        bound: dict[str, Value] = {}
        try:
            for i, element in enumerate(elements):
                if i and unroll.changed(seen):
                    break
                self.unroll_runs += 1
                self.bind(stmt.target, element, scope)
                self.exec_block(stmt.body, scope)
                if roots is None:
                    # RSH102 counts the device arrays meshes are built on: the same
                    # construction run again is no second one.
                    roots = set(self.ctx.mesh_roots)
                _rebound(scope, assigned, bound)
            else:
                if not unroll.changed(seen):
                    self.exec_block(stmt.orelse, scope)
                    return True
        finally:
            self.unroll_weight = outer
            if roots is not None:
                self.ctx.mesh_roots.clear()
                self.ctx.mesh_roots.update(roots)
        # The body changed what is iterated: the steps that follow, if any, are not known.
        self._joined_loop(stmt, scope, UNKNOWN)
        return True

    def _joined_loop(self, stmt: ast.For | ast.AsyncFor | ast.While, scope: Scope, it: Optional[Value]) -> None:
        """A loop run any number of times: its body runs once, from values every
        iteration starts with where the analysis finds them (``_loop_head``), and the
        names it binds are unknown after it unless they settle. ``it``: what a ``for``
        iterates (evaluated already)."""
        self.inexact += 1
        try:
            self._join_loop(stmt, scope, it)
        finally:
            self.inexact -= 1

    def _join_loop(self, stmt: ast.For | ast.AsyncFor | ast.While, scope: Scope, it: Optional[Value]) -> None:
        assigned = count_bindings(stmt.body)
        count_bindings(stmt.orelse, assigned)
        entry = {n: scope.vars[n] for n in assigned if n in scope.vars}
        for name in assigned:
            scope.vars[name] = unknown(PATHS, f"'{name}'")
        if not isinstance(stmt, ast.While):
            it = UNKNOWN if it is None else it
            for n in names_in_target(stmt.target):
                scope.vars[n] = unknown(PATHS, f"'{n}'")
            # A device of a list the analysis knows, which one not known; otherwise the
            # rule a comprehension's loop variable follows (expressions.py).
            default = DevVal(fn=undecidable, desc=f"an element of {it.desc}", node=stmt.iter, single=True,
                             any_device=True) if ordered(it) else unknown(PATHS)
            self.bind_loop_target(stmt.target, it, stmt.iter, scope, default)
        else:
            self.eval(stmt.test, scope)
        targets = set(names_in_target(stmt.target)) if not isinstance(stmt, ast.While) else set()
        head = self._loop_head(stmt, scope, {n: v for n, v in entry.items() if n not in targets})
        scope.vars.update(head)
        ctx_before = self.context_mesh
        self.exec_block(stmt.body, scope)
        self.exec_block(stmt.orelse, scope)
        # A break leaves with what the body had bound by then: after the loop, unknown.
        after = {} if jumps(stmt.body, (ast.Break,)) else \
            {n: v for n, v in head.items() if settled(v, join(v, scope.vars.get(n, UNKNOWN)))}
        for name in assigned:
            scope.vars[name] = after.get(name) or unknown(PATHS, f"'{name}'")
        if not isinstance(stmt, ast.While):
            for n in names_in_target(stmt.target):
                scope.vars[n] = unknown(PATHS, f"'{n}'")
        self.context_mesh = join(ctx_before, self.context_mesh)

    def _loop_head(self, stmt: ast.For | ast.AsyncFor | ast.While, scope: Scope, entry: dict[str, Value]) -> dict[str, Value]:
        """The values that the names a loop rebinds have at the top of every iteration,
        where the analysis knows one: ``params = update(params)`` keeps params on its
        mesh however often it runs. Found by running the body quietly from the values it
        starts with until they settle (``settled``); a name that changes place, or that
        a ``continue`` may carry around the rest of the body, is unknown, as is every name
        of a loop nested in one being settled (its cost stays linear). A ``break`` leaves
        the loop, so it feeds no iteration (exec_loop makes the names unknown after it)."""
        carried = {n: v for n, v in entry.items() if not isinstance(v, Unknown)}
        if not carried or self.settling or jumps(stmt.body, (ast.Continue,)):
            return {}
        saved, ctx = dict(scope.vars), self.context_mesh
        trace = self._trace()
        self.quiet += 1
        self.settling = True
        try:
            for _ in range(_LOOP_PASSES):
                scope.vars = {**saved, **carried}
                self.context_mesh = ctx
                self.exec_block(stmt.body, scope)
                joined = {n: join(v, scope.vars.get(n, UNKNOWN), n) for n, v in carried.items()}
                if all(settled(carried[n], v) for n, v in joined.items()):
                    return carried
                carried = {n: v for n, v in joined.items() if not isinstance(v, Unknown)}
                if not carried:
                    return {}
            return {}
        finally:
            self.quiet -= 1
            self.settling = False
            scope.vars, self.context_mesh = saved, ctx
            self._untrace(trace)

    def _trace(self) -> "_Trace":
        returns = len(self.returns[-1]) if self.returns else 0
        yields = len(self.yields[-1][1]) if self.yields else 0
        return _Trace(len(self.pending), returns, yields, {fn: len(m) for fn, m in self.memo.items()},
                      dict(self.ctx.made_by), set(self.ctx.mesh_roots), dict(self.inits))

    def _untrace(self, trace: "_Trace") -> None:
        del self.pending[trace.pending:]
        if self.returns:
            del self.returns[-1][trace.returns:]
        if self.yields:
            del self.yields[-1][1][trace.yields:]
        for fn in list(self.memo):
            m = self.memo[fn]
            for key in list(m)[trace.memo.get(fn, 0):]:
                del m[key]
        self.ctx.made_by.clear()
        self.ctx.made_by.update(trace.made_by)
        self.ctx.mesh_roots.clear()
        self.ctx.mesh_roots.update(trace.mesh_roots)
        self.inits.clear()
        self.inits.update(trace.inits)

    def store_item(self, target: ast.Subscript, base: Value, value: Value, scope: Scope) -> bool:
        """``d[k] = v`` on a dict (or ``a[i] = v`` on a list) the name ``d`` of this scope
        holds, with a constant key: the name holds the container with that item from now
        on, as every read of it in this run that comes later sees it; every other holder
        (another name, an attribute, a container) sees it changed (mutation.changed), and
        so do functions that run later (the name counts as bound twice). False: not
        followed so (the caller marks the container changed)."""
        name = target.value
        if type(name) is not ast.Name or self.inexact or scope.vars.get(name.id) is not base \
                or name.id in scope.volatile:
            return False
        if not self._stored_into(target, base, value, scope, scope):
            return False
        scope.bindings[name.id] = max(2, scope.bindings.get(name.id, 0))
        return True

    def _stored_into(self, target: ast.Subscript, base: Value, value: Value, scope: Scope, holder: Scope) -> bool:
        """``holder``'s name ``target.value`` bound to the container ``base`` with the item
        ``target`` stores (its key read in ``scope``), ``base`` itself changed for every other
        holder; False where the key or the container is not one the analysis follows."""
        key_node = target.slice
        if type(key_node) is not ast.Constant and type(key_node) is not ast.Name:
            return False  # (a key read again must have no effect)
        new = mutation.stored(base, self.eval(key_node, scope), value)
        if new is None:
            return False
        mutation.changed(base)
        mutation.follows(base, new)  # type: ignore[arg-type]  # (stored gave new: base is a SeqVal)
        holder.vars[target.value.id] = new  # type: ignore[attr-defined]  # (an ast.Name: the callers')
        return True

    def store_global(self, target: ast.Subscript, base: Value, value: Value, scope: Scope) -> bool:
        """``G[k] = v`` in a function of this module, where ``G`` is a module-level name
        bound once (``MESHES = {}``) and the function runs as part of the module body, once
        in order: called (plainly, not traced or mapped) from module-level code on a path
        the analysis decided, as a decorator such as ``@register("train")`` is. The module
        scope holds the container with that item from then on, as the module body's
        later reads see it. Functions that run later (their own runs after the module) read
        ``G`` as bound twice (Interpreter.run), and importers read it only where no other
        code can file into it (project/registries.py). False: not followed."""
        name = target.value
        ms = self.module_scope
        if type(name) is not ast.Name or ms is None or scope is ms or not self.top_run or self.inexact \
                or self.branching or self.plain_calls != len(self.inline_stack) \
                or any(generator(fn) or type(fn) is ast.AsyncFunctionDef for fn in self.inline_stack):
            return False
        holder: Optional[Scope] = scope
        while holder is not None and (holder.kind == "class" or name.id not in holder.bindings):
            holder = holder.parent
        if holder is not ms or ms.bindings.get(name.id) != 1 or ms.vars.get(name.id) is not base \
                or name.id in ms.volatile or not self._files_only_here(name.id):
            return False
        if not self._stored_into(target, base, value, scope, ms):
            return False
        self.filed.add(name.id)
        self.filings += 1
        return True

    def _files_only_here(self, name: str) -> bool:
        """Does nothing but this module's body file into its dict ``name``
        (project/registries.py)? Text that is no file of a project: no other module can
        import it."""
        view = self.ctx.project
        if view is None:
            return True
        return bool(view.files_only_here(self.ctx.path, name))

    def exec_try(self, stmt: ast.Try, scope: Scope) -> None:
        self.branching += 1
        try:
            self._exec_try(stmt, scope)
        finally:
            self.branching -= 1

    def _exec_try(self, stmt: ast.Try, scope: Scope) -> None:
        assigned = count_bindings(stmt.body)
        before = dict(scope.vars)
        self.exec_block(stmt.body, scope)
        self.exec_block(stmt.orelse, scope)
        after_body = scope.vars
        results = [after_body]
        through = [not exits(stmt.body) and not exits(stmt.orelse)]
        for handler in stmt.handlers:
            scope.vars = dict(before)
            for name in assigned:
                scope.vars[name] = unknown(PATHS, f"'{name}'")
            if handler.type is not None:
                self.eval(handler.type, scope)
            if handler.name is not None:
                scope.vars[handler.name] = unknown(PATHS, f"'{handler.name}'")
            self.exec_block(handler.body, scope)
            results.append(scope.vars)
            through.append(not exits(handler.body))
        if any(through):
            # ``except ...: raise RuntimeError(...)``: only the paths that go on meet.
            results = [r for r, t in zip(results, through) if t]
        scope.vars = _merge(results)
        self.exec_block(stmt.finalbody, scope)


def _rebound(scope: Scope, assigned: dict[str, int], bound: dict[str, Value]) -> None:
    """After a run of a loop body run per element: a name the body binds at one site that
    this run left with another value than the run before counts as bound twice. A function
    that runs later (after the module, once its calls are seen) reads one value of it,
    while a call of it in each run saw that run's (scope.py)."""
    for name in assigned:
        v = scope.vars.get(name, UNKNOWN)
        if name in bound and bound[name] is not v and not (
                isinstance(v, ConstVal) and isinstance(bound[name], ConstVal)
                and bound[name].value == v.value):  # type: ignore[attr-defined]  # (a ConstVal)
            scope.bindings[name] = max(2, scope.bindings.get(name, 0))
        bound[name] = v


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def exits(stmts: Sequence[ast.stmt]) -> bool:
    """Does the block never reach the statement after it? It ends in ``return``,
    ``raise``, ``continue`` or ``break``, or in an ``if`` every branch of which does.
    (Not a ``with``: its context manager may swallow the exception, as pytest.raises does.)"""
    if not stmts:
        return False
    last = stmts[-1]
    if type(last) is ast.If:
        if not last.orelse:
            return False
        return exits(last.body) and exits(last.orelse)
    return isinstance(last, _EXITS)


def _merge(paths: list[dict[str, Value]]) -> dict[str, Value]:
    """The names after several paths meet: each joined over the paths (missing: unknown)."""
    merged: dict[str, Value] = {}
    for k in set().union(*paths) if paths else ():
        vals = [r.get(k, UNKNOWN) for r in paths]
        v = vals[0]
        for other in vals[1:]:
            v = join(v, other, k)
        merged[k] = v
    return merged


def settled(old: Value, new: Value) -> bool:
    """Has a loop-carried value stopped changing: the same value, NumPy data both times,
    arrays on one mesh (or device) object, laid out alike, or containers of one shape
    whose elements each settled?"""
    if old is new:
        return True
    if isinstance(old, HostVal) and isinstance(new, HostVal):
        return True
    if isinstance(old, ConstVal) and isinstance(new, ConstVal):
        return old.value == new.value
    if isinstance(old, ArrayVal) and isinstance(new, ArrayVal):
        return same_place(old.sharding, new.sharding) and old.derived == new.derived
    if isinstance(old, SeqVal) and isinstance(new, SeqVal):
        # A parameter tree a step gives back in the shape it took, each leaf settled.
        return alike(old, new) and all(settled(a, b) for a, b in zip(old.items, new.items))
    return False


def jumps(stmts: Sequence[ast.stmt], kinds: tuple[type, ...] = (ast.Break, ast.Continue)) -> bool:
    """Does a statement of ``kinds`` (``break``, ``continue``) of this loop occur, not one
    of a loop nested in it?"""
    for stmt in stmts:
        t = type(stmt)
        if t in kinds:
            return True
        if isinstance(stmt, ast.If):
            if jumps(stmt.body, kinds) or jumps(stmt.orelse, kinds):
                return True
        elif t is ast.Try or t.__name__ == "TryStar":
            tried = cast(ast.Try, stmt)  # (ast.TryStar, Python 3.11, has Try's fields; no class on 3.10)
            parts = [tried.body, *(h.body for h in tried.handlers)]
            parts += [tried.orelse, tried.finalbody]
            if any(jumps(p, kinds) for p in parts):
                return True
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            if jumps(stmt.body, kinds):
                return True
        elif isinstance(stmt, ast.Match):
            if any(jumps(c.body, kinds) for c in stmt.cases):
                return True
    return False
