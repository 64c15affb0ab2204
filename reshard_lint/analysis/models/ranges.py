"""Python's ``range`` objects: their bounds, length, elements and slices, as Python computes them.

A configuration module's ``TRAIN_DEVICES = range(0, 8)`` read as
``jax.devices()[TRAIN_DEVICES.start:TRAIN_DEVICES.stop]``, or ``list(range(*bounds))``
whose elements index ``jax.devices()``: the bounds are ints (``IntVal``, maybe one per
topology: ``range(jax.device_count())``), and everything read from the range is computed
from them on each model topology with Python's own ``range``. A range stays host data
(``RangeVal`` is a ``HostVal``): a loop over it gives ints, as before. A bound that is
not an int the analysis knows gives plain host data, as any range did before.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from .registry import handles
from ..arguments import Call
from ..scope import Scope
from ..tree import arg_star, arg_value, call_args
from ..valueops import dotted
from ..values import ConstVal, HostVal, IntVal, RangeVal, SeqVal, Value
from .. import devices as dv

if TYPE_CHECKING:
    from ..interpreter import Analyzer

# ``list(range(n))`` of a literal n is a list of that many ints the analysis holds one by
# one (a SeqVal, which a change in place makes unknown: mutation.py); past this length it
# stays plain host data.
MAX_LISTED = 256

_ATTRIBUTES = ("start", "stop", "step")


def _constant(i: int) -> IntVal:
    return IntVal(lambda _m: i, literal=i)


def _one() -> IntVal:
    return IntVal(lambda _m: 1, literal=1)


def _zero() -> IntVal:
    return IntVal(lambda _m: 0, literal=0)


@handles("range")
def _range(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """``range(stop)``, ``range(start, stop)``, ``range(start, stop, step)`` of ints the
    analysis knows (``range(*bounds)`` of a tuple it holds too); plain host data otherwise."""
    host = HostVal(an.ctx.lazy_code(node, 40), node)
    given = _positional(an, call, node, scope)
    if given is None or call.keywords or not 1 <= len(given) <= 3 \
            or not all(isinstance(v, IntVal) for v in given):
        return host
    ints: list[IntVal] = [v for v in given if isinstance(v, IntVal)]
    if len(ints) == 1:
        start, stop, step = _zero(), ints[0], _one()
    else:
        start, stop = ints[0], ints[1]
        step = ints[2] if len(ints) == 3 else _one()
    if step.literal == 0:
        return host  # ValueError: the program stops here
    return RangeVal(host._desc, node, start, stop, step)


def _positional(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Optional[list[Value]]:
    """The positional arguments, a ``*t`` of a tuple the analysis holds spread out (read
    again from a name or attribute chain, which has no side effect); None when a starred
    argument is anything else."""
    if not call.has_star:
        return [v for v, _ in call.positional]
    by_node = {id(a): v for v, a in call.positional}
    out: list[Value] = []
    for a in call_args(node):
        star = arg_star(a)
        if star == "**":
            return None
        if star == "*":
            inner = arg_value(a)
            if dotted(inner) is None:
                return None
            spread = an.eval(inner, scope)
            if not isinstance(spread, SeqVal) or spread.kind == "dict" or spread.changed:
                return None
            out.extend(spread.items)
        elif not isinstance(a, ast.keyword):
            if id(a) not in by_node:
                return None
            out.append(by_node[id(a)])
    return out


def _per_model(r: RangeVal, pick: Callable[[range], int], literal: Optional[int]) -> IntVal:
    return IntVal(lambda m: pick(r.ints(m)), literal=literal)


def attribute(r: RangeVal, attr: str) -> Optional[Value]:
    """``r.start``, ``r.stop``, ``r.step``: the bounds as Python keeps them (a range given
    one argument starts at 0, steps by 1)."""
    if attr not in _ATTRIBUTES:
        return None
    return {"start": r.start, "stop": r.stop, "step": r.step}[attr]


def length(r: RangeVal) -> IntVal:
    """``len(r)``: how many ints it gives (0 for an empty one), on each topology."""
    lit = r.literal()
    return _per_model(r, len, len(lit) if lit is not None else None)


def subscript(r: RangeVal, parts: Sequence[object], node: ast.AST, desc: Callable[[], str]) -> Optional[Value]:
    """``r[i]``: an int (IndexError where it is out of range: that topology cannot run
    the program); ``r[a:b:c]``: another range, Python's slice of it. None for anything
    else (which the caller leaves as it was)."""
    if len(parts) != 1:
        return None
    part = parts[0]
    lit = r.literal()
    if isinstance(part, IntVal):
        index = part.fn
        value = None
        if lit is not None and part.literal is not None and -len(lit) <= part.literal < len(lit):
            value = lit[part.literal]
        return IntVal(lambda m: r.ints(m)[index(m)], literal=value)
    if not isinstance(part, tuple):
        return None
    bounds: list[Optional[Callable[[dv.Model], int]]] = []
    literals: list[Optional[int]] = []
    for p in part:
        if p is None or isinstance(p, ConstVal) and p.value is None:
            bounds.append(None)
            literals.append(None)
        elif isinstance(p, IntVal):
            bounds.append(p.fn)
            literals.append(p.literal)
        else:
            return None
    if literals[2] == 0:
        return None  # ValueError: slice step cannot be zero

    def sliced(m: dv.Model) -> range:
        lo, hi, st = (b(m) if b is not None else None for b in bounds)
        return r.ints(m)[lo:hi:st]

    known: Optional[range] = None
    if lit is not None and all(lv is not None or b is None for lv, b in zip(literals, bounds)):
        known = lit[slice(*literals)]
    out = RangeVal(desc, node, IntVal(lambda m: sliced(m).start, literal=known.start if known else None),
                   IntVal(lambda m: sliced(m).stop, literal=known.stop if known else None),
                   IntVal(lambda m: sliced(m).step, literal=known.step if known else None))
    return out


def listed(r: RangeVal, kind: str) -> Optional[Value]:
    """``list(r)`` or ``tuple(r)``: the ints one by one where the bounds are literal and
    the range short (a list the program may change in place like any other); None
    otherwise (the caller's plain host data)."""
    lit = r.literal()
    if lit is not None and len(lit) <= MAX_LISTED:
        return SeqVal(tuple(_constant(i) for i in lit), kind)
    return None
