"""Python's iteration protocol and its numbers: ``iter``, ``next``, ``round``, the clock.

An iterator is a ``GenVal`` (values.py): every element it gives is ``element``, one value
standing for all of them, as a ``for`` loop takes them (``comprehensions.bind_loop_target``).
A generator function's call gives one (functions.py); ``iter`` gives one for a tuple
whose elements one value stands for (``valueops.each``), for host data (NumPy rows, the
rows of an uncommitted array: uncommitted too, on jax 0.10.2), and for an iterator
(itself). ``next`` takes an element: the same value whichever it is, so what holds for
one holds for each (``keys = iter(jax.random.split(key, n))``, ``next(keys)`` is an
uncommitted key however often it is called).

Not modelled, so unknown as before: ``iter`` of a list or dict (the iterator reads the
container as it is changed), of an array on a mesh (jax gives rows that are not the
array's layout), of what the analysis does not know, and ``iter(callable, sentinel)``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from .registry import handles
from . import placement
from ..arguments import Call
from ..reasons import MESH_CONTEXT, UNFOLLOWED_CALL
from ..scope import Scope
from ..valueops import each, leaves
from ..values import ConstVal, GenVal, HostVal, IntVal, SeqVal, Value, join, unknown

if TYPE_CHECKING:
    from ..interpreter import Analyzer


def taken(an: "Analyzer", it: GenVal, what: str) -> Value:
    """An element of the iterator ``it``, taken here (by ``next`` or a loop): under a mesh
    context, unknown where it holds an uncommitted array, which a generator's body (or a
    row of an uncommitted array) makes only when asked, and so under this context, which
    commits it to the context mesh (observed on jax 0.10.2: a generator made outside
    ``jax.set_mesh(m)`` and iterated inside it yields arrays on m's devices)."""
    out = it.element
    if an.mesh_context and any(isinstance(v, HostVal) and v.uncommitted for v in leaves(out)):
        return unknown(MESH_CONTEXT, what)
    return out


def element_of(an: "Analyzer", it: Value, node: ast.AST) -> Optional[Value]:
    """The value that stands for every element iterating ``it`` gives, where the analysis
    knows one: a tuple's (``each``), host data's (an element of it), an iterator's."""
    if isinstance(it, GenVal):
        return taken(an, it, "next")
    if isinstance(it, SeqVal) and it.kind == "tuple" and not (it.changed or it.view) and it.items:
        return each(it.items)
    if isinstance(it, HostVal):
        return placement.host_element(an, it, node)
    return None


@handles("iter")
def _iter(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
    if len(call.positional) != 1 or call.keywords or call.has_star:
        return unknown(UNFOLLOWED_CALL, "iter")
    it = call.arg(0)
    if isinstance(it, GenVal):
        return it  # an iterator's iterator is itself
    one = element_of(an, it, node)
    return GenVal(one) if one is not None else unknown(UNFOLLOWED_CALL, "iter")


@handles("next")
def _next(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
    """``next(it)``, ``next(it, default)``: an element of the iterator (or the default
    where it is exhausted)."""
    given = [v for v, _ in call.positional]
    it = given[0] if given else None
    if call.keywords or call.has_star or not 1 <= len(given) <= 2 or not isinstance(it, GenVal):
        return unknown(UNFOLLOWED_CALL, "next")
    out = taken(an, it, "next")
    return join(out, given[1]) if len(given) == 2 else out


@handles("round")
def _round(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
    """``round(x)``, ``round(x, n)`` of a Python number or host data: a Python number, a
    NumPy value, or for an uncommitted jax.Array an uncommitted one (``__round__``)."""
    if len(call.positional) not in (1, 2) or call.keywords or call.has_star:
        return unknown(UNFOLLOWED_CALL, "round")
    x = call.arg(0)
    if isinstance(x, HostVal):
        return HostVal(an.ctx.lazy_code(node, 40), node, x.uncommitted)
    if isinstance(x, IntVal) or (isinstance(x, ConstVal) and type(x.value) in (int, float, bool)):
        return HostVal(an.ctx.lazy_code(node, 40), node)
    return unknown(UNFOLLOWED_CALL, "round")


@handles("time.time")
def _clock(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
    """``time.time()``, ``time.perf_counter()``, ``time.monotonic()``, ``time.time_ns()``: a
    Python number (a seed made from it, ``jax.random.key(round(time.time()))``, too)."""
    return HostVal(an.ctx.lazy_code(node, 40), node)
