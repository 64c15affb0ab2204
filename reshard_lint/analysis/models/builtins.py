"""Python builtins on device lists: len, list, tuple, set, reversed, sorted; np.array (range: ranges.py);
on containers of arrays: enumerate, zip, map, dict, isinstance; on attributes: setattr, delattr."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ...core import vocabulary as api
from . import device_ids, placement, ranges
from .iteration import element_of
from .registry import handles
from .. import tree
from ..arguments import Call
from ..reasons import ATTRIBUTE, CONTAINER, UNFOLLOWED_CALL
from ..scope import Scope
from .. import devices as dv
from ..devarray import DevArr
from ..valueops import NO_KEY, dotted, each, ordered
from ..values import (
    UNKNOWN, ArrayVal, ConstVal, DevVal, FuncVal, GenVal, HostVal, IntVal, MeshVal, OwnShardingVal, QualVal, RangeVal, SeqVal,
    ShardingVal, Shuffle, SliceVal,
    Value, is_unknown, undecidable, unknown,
)

if TYPE_CHECKING:
    from ..interpreter import Analyzer

# sorted() keys that order devices physically: their order is platform-dependent,
# so the linter does not know it, and does not call it a reordering.
_PHYSICAL_KEYS = ("coords", "core_on_chip", "slice_index", "process_index", "host_id", "task_id")


@handles("len")
def _len(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0)
    if ordered(v):
        f = v.fn
        return IntVal(lambda m: len(f(m).rows()))
    if isinstance(v, SeqVal) and not v.changed:
        n = len(v.items)
        return IntVal(lambda _m: n, literal=n)
    if isinstance(v, RangeVal):
        return ranges.length(v)
    return HostVal(an.ctx.lazy_code(node, 40), node)  # an int, whatever it counts


@handles("slice")
def _slice(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """``slice(hi)``, ``slice(lo, hi)``, ``slice(lo, hi, step)``: bounds for a subscript."""
    given = [v for v, _ in call.positional]
    if call.keywords or call.has_star or not 1 <= len(given) <= 3:
        return UNKNOWN
    lo, hi, step = (None, given[0], None) if len(given) == 1 else (*given, None)[:3]
    return SliceVal((lo, hi, step))


@handles("int")
def _int(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0)
    return v if isinstance(v, IntVal) else device_ids.int_of(v) or UNKNOWN


@handles(api.NP_ARRAY, "list", "tuple")
def _neutral(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0, "object")
    if len(call.positional) > 1 or (set(call.keywords) - {"object", "dtype"}):
        return UNKNOWN
    name = an.current_name
    if name != api.NP_ARRAY and _unmodelled_set(an, call, v, scope):
        # list(x.devices()) of an array the analysis does not follow: which devices is
        # unknown, but a set's order is, whatever x is (below).
        how = an.ctx.code(node, 50)
        return DevVal(fn=undecidable, desc=how, node=node, reorders=(how,), fresh=False,
                      shuffle=Shuffle(node, how, agreed=False))
    if isinstance(v, DevVal) and not v.single:
        f = v.fn
        if v.is_set:
            if name == api.NP_ARRAY:
                return UNKNOWN  # an array of a set is an object array of one element
            how = f"{name}({v.desc})"
            token = an.new_token(node)
            # A set has no order: listing it gives its iteration order, which follows the
            # devices' hashes (object addresses). Observed with 2 processes x 4 CPU devices:
            # each process lists the same set in its own order, so a mesh built from it
            # differs between processes (the first collective times out), as after an
            # unseeded shuffle. A one-device set has one order.
            out = v.derive(lambda m: f(m).ravel().as_list().permuted("set" + token), how,
                           reorder=how, fresh=False)
            if _always_several(an, f, v.sizes):
                out.shuffle = Shuffle(node, how, agreed=False)
            return out
        if name == api.NP_ARRAY:
            return v.derive(lambda m: f(m).as_array(), v.desc)
        return v.derive(lambda m: f(m).as_list(), v.desc)
    if isinstance(v, SeqVal) and name in ("list", "tuple"):
        if v.kind == "dict":
            # A dict lists its keys (each once, in the order first written), where known.
            if NO_KEY in v.keys or len(v.keys) != len(v.items):
                return unknown(CONTAINER)
            return SeqVal(tuple(ConstVal(k) for k in dict.fromkeys(v.keys)), name)
        return SeqVal(v.items, name)
    if isinstance(v, RangeVal) and name in ("list", "tuple"):
        return ranges.listed(v, name) or HostVal(an.ctx.lazy_code(node, 40), node)
    return UNKNOWN


def _unmodelled_set(an: Analyzer, call: Call, v: Value, scope: Scope) -> bool:
    """``x.devices()`` or ``s.device_set`` of an array or sharding the analysis does not know."""
    if not is_unknown(v) or len(call.positional) != 1:
        return False
    arg = call.arg_node(0, "object")
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) \
            and arg.func.attr == api.DEVICES_WORD and not arg.args and not arg.keywords:
        recv = arg.func.value
    elif isinstance(arg, ast.Attribute) and arg.attr == api.DEVICE_SET_WORD:
        recv = arg.value
    else:
        return False
    text = dotted(recv)
    # A backend or client's devices() is a list in enumeration order, not a set.
    if text is None:
        return False
    parts = text.lower().split(".")
    if parts[0] in ("self", "cls") or any("backend" in p or "client" in p for p in parts):
        return False
    r = an.eval(recv, scope)  # a name or attribute chain: no side effects
    return is_unknown(r) or isinstance(r, (ArrayVal, ShardingVal, OwnShardingVal))


def _always_several(an: Analyzer, f: dv.DevFn, sizes: tuple[int, ...]) -> bool:
    return an.ctx.devices.observe(f, sizes, lambda a: len(a.flat) >= 2) == {True}


@handles("set")
def _set(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0)
    if isinstance(v, DevVal) and not v.single:
        return DevVal(fn=v.fn, desc=f"set({v.desc})", node=node, fresh=v.fresh, from_mesh=v.from_mesh,
                      sizes=v.sizes, is_set=True, reorders=v.reorders, shuffle=v.shuffle)
    return UNKNOWN


@handles("reversed")
def _reversed(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0)
    if ordered(v):
        f = v.fn
        how = f"reversed({v.desc})"
        return v.derive(lambda m: f(m).flip(0) if f(m).ndim else f(m), how, reorder="reversed()",
                        step=(node, call.arg_node(0)))
    return UNKNOWN


@handles("sorted")
def _sorted(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0)
    if not (isinstance(v, DevVal) and not v.single):
        return UNKNOWN
    f = v.fn
    reverse = call.arg(-1, "reverse")
    rev = isinstance(reverse, ConstVal) and reverse.value is True
    if call.given(-1, "reverse") and not isinstance(reverse, ConstVal):
        return v.derive(undecidable, v.desc)
    key_node = call.arg_node(-1, "key")
    key_text = an.ctx.code(key_node, 60) if key_node is not None else ""
    by_id = key_node is None or _is_id_key(key_node)
    if key_node is not None and _is_process_id_key(key_node):
        # (process, id): jax.devices()'s own enumeration, process by process (devices.py),
        # on every platform the model knows; reversed, every device moves.
        how = f"sorted({v.desc}, key={key_text}, reverse=True)" if rev else v.desc
        out = v.derive(lambda m: DevArr.of(sorted(f(m).flat, key=lambda i: (m.process_of(i), i), reverse=rev)),
                       how, fresh=v.fresh, is_set=False, order_by="written" if rev else "enumeration")
        out.reorders = ("reverse=True",) if rev else ()
        first = call.arg_node(0)
        out.steps = ((node, first),) if rev and first is not None else ()
        out.shuffle = None
        return out
    if key_node is not None and any(k in key_text for k in _PHYSICAL_KEYS):
        # Physical order is the platform's to decide; not a reordering the linter can see.
        return v.derive(undecidable, f"sorted({v.desc}, key={key_text})", is_set=False)
    if by_id and key_node is None and v.is_set:
        by_id = True  # a sorted set of devices sorts by id (Device defines ordering by id)
    if by_id:
        how = f"sorted({v.desc}, reverse=True)" if rev else v.desc
        # Sorting by id restores the natural order whatever happened before.
        out = v.derive(lambda m: f(m).sorted_by_id(rev), how, fresh=v.fresh, is_set=False,
                       order_by="written" if rev else "id")
        out.reorders = ("reverse=True",) if rev else ()
        out.steps = ()
        out.shuffle = None
        return out
    token = an.new_token(node)
    how = f"sorted({v.desc}, key={key_text})"
    return v.derive(lambda m: f(m).ravel().as_list().permuted("sort" + token), how, reorder=how,
                    is_set=False)


def _is_process_id_key(key: ast.AST) -> bool:
    """``lambda d: (d.process_index, d.id)``."""
    if not (isinstance(key, ast.Lambda) and len(key.args.args) == 1 and isinstance(key.body, ast.Tuple)):
        return False
    p = key.args.args[0].arg
    attrs = [e.attr for e in key.body.elts if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name)
             and e.value.id == p]
    return attrs == ["process_index", "id"] and len(key.body.elts) == 2


def _is_id_key(key: ast.AST) -> bool:
    if isinstance(key, ast.Lambda) and len(key.args.args) == 1:
        p = key.args.args[0].arg
        body = key.body
        return isinstance(body, ast.Attribute) and isinstance(body.value, ast.Name) \
            and body.value.id == p and body.attr == "id"
    if isinstance(key, ast.Call):  # operator.attrgetter('id')
        f = key.func
        fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        args = tree.call_args(key)
        if fname != "attrgetter" or len(args) != 1:
            return False
        # attrgetter(*names) and a keyword count as its one argument too.
        return tree.plain_string(tree.arg_value(args[0])) == "id"
    return False


@handles("enumerate")
def _enumerate(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """Pairs of an int (host data, one value for every index) and each element."""
    v = call.arg(0, "iterable")
    if len(call.positional) != 1 or call.has_star:
        return UNKNOWN
    if isinstance(v, HostVal):
        return v.again()
    index = HostVal(an.ctx.lazy_code(node, 40, " (an index)"), node)
    if isinstance(v, GenVal):
        return GenVal(SeqVal((index, v.element)))  # enumerate(batches()): (i, what it yields)
    if not isinstance(v, SeqVal):
        return UNKNOWN
    return SeqVal(tuple(SeqVal((index, item)) for item in v.items), "tuple", view=True)


@handles("zip")
def _zip(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """Tuples of the elements at each position, as far as the shortest goes."""
    values = [v for v, _ in call.positional]
    if any(isinstance(c, GenVal) for c in values) and not call.has_star and not set(call.keywords) - {"strict"}:
        # With an iterator: an iterator of tuples, each position what stands for every
        # element of its argument (models/iteration.py), where each has one.
        elements = [e for e in (element_of(an, c, node) for c in values) if e is not None]
        return GenVal(SeqVal(tuple(elements))) if len(elements) == len(values) else unknown(UNFOLLOWED_CALL, "zip")
    columns = [c for c in values if isinstance(c, (SeqVal, HostVal))]
    if call.has_star or not columns or set(call.keywords) - {"strict"} or len(columns) != len(values):
        return UNKNOWN
    seqs = [c for c in columns if isinstance(c, SeqVal)]
    if not seqs:
        return [c for c in columns if isinstance(c, HostVal)][0].again()  # every column is host data
    length = min(len(s.items) for s in seqs)
    rows = []
    for i in range(length):
        rows.append(SeqVal(tuple(c.items[i] if isinstance(c, SeqVal) else placement.host_element(an, c, node)
                                 for c in columns)))
    return SeqVal(tuple(rows), "tuple", view=True)


@handles("map")
def _map(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """``map(f, xs)`` calls ``f`` on each element (one from each iterable): it runs on one
    that stands for all of them, as a ``jax.tree.map`` callback does, and on one the
    analysis does not know where none does (its transfers are counted all the same)."""
    f = call.arg(0, "func")
    if not isinstance(f, FuncVal) or call.has_star or len(call.positional) < 2 or call.keywords:
        return UNKNOWN
    elements: list[Value] = []
    known = True
    for it, _ in call.positional[1:]:
        one = each(it.items) if isinstance(it, SeqVal) and it.items else None
        if isinstance(it, HostVal):
            one = placement.host_element(an, it, node)
        known = known and one is not None
        elements.append(one if one is not None else unknown(CONTAINER))
    result = an.call_with_leaves(f, elements, node)
    first = call.positional[1][0]
    if known and isinstance(first, SeqVal):
        return SeqVal(tuple(result for _ in first.items), "tuple", view=True)
    return UNKNOWN


@handles("setattr")
def _setattr(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """``setattr(obj, 'mesh', half)`` is ``obj.mesh = half`` (Classes.assign_attribute)."""
    if len(call.positional) != 3 or not an.assign_named_attribute(call.arg(0), call.arg(1, "name"), call.arg(2)):
        an.assign_some_attribute(call.arg(0))  # setattr(self, name, value) for each option
    return ConstVal(None)


@handles("vars")
def _vars(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """``vars(obj)`` is ``obj.__dict__``: whoever holds it may set any attribute."""
    if call.positional:
        an.assign_some_attribute(call.arg(0))
    return UNKNOWN


@handles("delattr")
def _delattr(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    if len(call.positional) == 2:
        an.assign_named_attribute(call.arg(0), call.arg(1, "name"), unknown(ATTRIBUTE))
    return ConstVal(None)


# isinstance(x, cls) decided where the value's kind is certain: a dict the analysis built
# (a literal, a comprehension, ``**kwargs``) is a dict; a mesh or a sharding is none of
# dict, list and tuple. A tuple or list the analysis holds may stand for another sequence
# (``d.values()``, ``d.items()``), so it is known only not to be a dict; an array value
# may stand for a pytree of arrays (``device_put`` of a dict, a jitted call's results).
_KINDS = {"builtins.dict": "dict", "builtins.list": "list", "builtins.tuple": "tuple"}


@handles(api.ISINSTANCE)
def _isinstance(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v, spec = call.arg(0), call.arg(1)
    if len(call.positional) != 2 or call.keywords or call.has_star:
        return unknown(UNFOLLOWED_CALL, "isinstance")
    specs = spec.items if isinstance(spec, SeqVal) and spec.kind == "tuple" else (spec,)
    kinds = {_KINDS.get(s.qual) if isinstance(s, QualVal) else None for s in specs}
    if None in kinds or not kinds:
        return unknown(UNFOLLOWED_CALL, "isinstance")
    if isinstance(v, (MeshVal, ShardingVal)):
        return ConstVal(False)
    if isinstance(v, SeqVal) and v.kind == "dict":
        return ConstVal("dict" in kinds)
    if isinstance(v, SeqVal) and v.kind in ("list", "tuple") and kinds == {"dict"}:
        return ConstVal(False)
    return unknown(UNFOLLOWED_CALL, "isinstance")


@handles("dict")
def _dict(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """``dict(w=a, b=b)``, ``dict()``: a dict of those keys."""
    if call.positional or call.has_star:
        return unknown(UNFOLLOWED_CALL, "dict")
    return SeqVal(tuple(v for v, _ in call.keywords.values()), "dict", tuple(call.keywords))
