"""Expression evaluation: names, literals, attributes, subscripts, operators (comprehensions:
comprehensions.py)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Optional, Sequence, cast

from ..core import vocabulary as api
from . import contextmesh, devices as dv, library
from .events import Transfer
from .interpreter_base import InterpreterBase
from .scope import Scope
from .tree import subscript_items
from .valueops import (
    NO_KEY, const_int, constant, dotted, each, element, int_arith, label, mesh_label, ordered,
)
from .models import commitments, device_ids, placement, ranges
from .models.numpy import index_grid
from .models.randomness import permute_rows
from .values import (
    UNKNOWN, ArrayVal, ClassVal, ConstVal, DeviceIdVal, DevVal, FuncVal, IndexPermutation, InstanceVal, IntVal, MeshVal,
    QualVal, RangeVal, SeqVal, SliceVal,
    HostVal, OwnShardingVal, ShardingVal, Unknown, Value, is_unknown, join, undecidable, unknown, unknown_from,
)
from .reasons import ATTRIBUTE, ATTRIBUTE_ELSEWHERE, ATTRIBUTE_LATER, CONTAINER, UNKNOWN_OBJECT


# Attributes that are Python ints (or tuples of them) on arrays and meshes.
_SIZES = frozenset({"shape", "ndim", "size"})

if TYPE_CHECKING:
    from .interpreter import Analyzer


class Expressions(InterpreterBase):
    """The ``eval_*`` methods of the interpreter, one per expression node type of Python's
    tree; a type with none (a set display, ``yield``, a newer Python's) is unknown."""

    def eval(self, node: Optional[ast.expr], scope: Scope) -> Value:
        if node is None:
            return UNKNOWN
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            return UNKNOWN
        return method(node, scope)

    def eval_Compare(self, node: ast.Compare, scope: Scope) -> Value:
        left = self.eval(node.left, scope)
        sides = [(left, node.left)]
        for comparator in node.comparators:
            sides.append((self.eval(comparator, scope), comparator))
        if all(isinstance(op, contextmesh.ARITHMETIC_COMPARISONS) for op in node.ops):
            contextmesh.operands(cast("Analyzer", self), node, sides)
        return UNKNOWN

    def eval_BoolOp(self, node: ast.BoolOp, scope: Scope) -> Value:
        for value in node.values:
            self.eval(value, scope)
        return UNKNOWN

    def eval_Await(self, node: ast.Await, scope: Scope) -> Value:
        self.eval(node.value, scope)
        return UNKNOWN

    def eval_JoinedStr(self, node: ast.JoinedStr, scope: Scope) -> Value:
        if self.ctx.module.concatenation(node):
            return UNKNOWN  # 'a' f'{b}': several literals, not read
        for part in node.values:
            if type(part) is ast.FormattedValue:
                self.eval(part.value, scope)
        return UNKNOWN

    def eval_Name(self, node: ast.Name, scope: Scope) -> Value:
        found = scope.lookup(node.id)
        if type(found) is QualVal and self.ctx.project is not None:
            return self.ctx.project.value(found.qual) or found  # from mypkg.mesh import MESH
        return found

    def eval_Constant(self, node: ast.Constant, scope: Scope) -> Value:
        v = node.value
        if type(v) in (str, bytes) and self.ctx.module.concatenation(node):
            return UNKNOWN  # 'a' 'b', several literals, not read
        return constant(v)

    def eval_UnaryOp(self, node: ast.UnaryOp, scope: Scope) -> Value:
        v = self.eval(node.operand, scope)
        arithmetic = isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert))
        if arithmetic and isinstance(v, ArrayVal):
            if contextmesh.operands(cast("Analyzer", self), node, [(v, node.operand)]):
                return UNKNOWN  # the computation fails here
            return placement.derived(v, node)  # -x is computed on x's devices, as x * 2 is
        if arithmetic and isinstance(v, HostVal):
            return HostVal(self.ctx.lazy_code(node, 40), node, v.uncommitted)
        if type(node.op) is ast.USub and isinstance(v, IntVal):
            f = v.fn
            return IntVal(lambda m: -f(m), literal=-v.literal if v.literal is not None else None)
        return unknown_from(v) if arithmetic else UNKNOWN

    def eval_Tuple(self, node: ast.Tuple, scope: Scope) -> Value:
        return self._seq(node.elts, scope, "tuple")

    def eval_List(self, node: ast.List, scope: Scope) -> Value:
        return self._seq(node.elts, scope, "list")

    def _seq(self, elements: Sequence[ast.expr], scope: Scope, kind: str) -> Value:
        items: list[Value] = []
        starred = False
        for el in elements:
            if type(el) is ast.Starred:
                starred = True
                el = el.value
            items.append(self.eval(el, scope))
        return UNKNOWN if starred else SeqVal(tuple(items), kind)

    def eval_Dict(self, node: ast.Dict, scope: Scope) -> Value:
        items: list[Value] = []
        keys: list[object] = []
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is not None:
                key = self.eval(key_node, scope)
                keys.append(key.value if isinstance(key, ConstVal) else NO_KEY)
                items.append(self.eval(value_node, scope))
            else:  # **m
                self.eval(value_node, scope)
                return UNKNOWN
        return SeqVal(tuple(items), "dict", tuple(keys))

    def eval_Yield(self, node: ast.Yield, scope: Scope) -> Value:
        """``yield v`` in a generator run for a call (functions.py): ``v`` is one of the
        elements its iterator gives; what is sent back in is not known."""
        v = self.eval(node.value, scope) if node.value is not None else ConstVal(None)
        self._yielded(v)
        return UNKNOWN

    def eval_YieldFrom(self, node: ast.YieldFrom, scope: Scope) -> Value:
        self.eval(node.value, scope)
        self._yielded(unknown(CONTAINER))
        return UNKNOWN

    def _yielded(self, v: Value) -> None:
        if self.yields and self.inline_stack and self.yields[-1][0] is self.inline_stack[-1]:
            self.yields[-1][1].append(v)
            if self.managing is not None and self.managing[0] is self.inline_stack[-1]:
                self.managing[1].append((v, self.context_site))  # functions.managed

    def eval_IfExp(self, node: ast.IfExp, scope: Scope) -> Value:
        taken = none_test(node.test, scope)
        tested = self.eval(node.test, scope)
        if taken is None:
            taken = truth(tested)
        if taken is not None:
            # ``devices if devices is not None else jax.devices()``, decided by this run's
            # value of the name, as the ``if`` statement's form is (interpreter.py): only
            # the branch Python runs is evaluated.
            return self.eval(node.body if taken else node.orelse, scope)
        # Both branches, their values joined. An expression cannot leave the function: what
        # follows it runs on either path, so the run stays decided (functions.relayed) unless
        # a branch held a transfer of its own, which only one path makes.
        held = len(self.relay_held)
        joined = join(self.eval(node.body, scope), self.eval(node.orelse, scope))
        self.undecided += len(self.relay_held) > held
        return joined

    def eval_NamedExpr(self, node: ast.NamedExpr, scope: Scope) -> Value:
        v = self.eval(node.value, scope)
        self.bind(node.target, v, scope)
        return v

    def eval_Lambda(self, node: ast.Lambda, scope: Scope) -> Value:
        # Made inside another module's function (a factory returning
        # ``jax.jit(lambda x, w: x @ w, ...)``): that module's, so a call of it here runs
        # as another module's function does, its transfers relayed to the call.
        fn = FuncVal(node, scope, self.defaults(node.args, scope), home=self.home_now)
        self.made.append(fn)
        return fn

    def eval_Attribute(self, node: ast.Attribute, scope: Scope) -> Value:
        base = self.eval(node.value, scope)
        attr = node.attr
        if attr in commitments.SHARD_ATTRS:
            shard = commitments.attribute(cast("Analyzer", self), base, attr, node)
            if shard is not None:
                return shard
        if attr == "__dict__":
            # Whoever holds an object's __dict__ may set any attribute of it
            # (``vars(t)["mesh"] = m``, ``t.__dict__.update(...)``).
            self.assign_some_attribute(base)
            return UNKNOWN
        if isinstance(base, QualVal):
            qual = f"{base.qual}.{attr}"
            if self.ctx.project is not None:
                return self.ctx.project.value(qual) or QualVal(qual)  # import mypkg.mesh as m; m.MESH
            return QualVal(qual)
        if isinstance(base, library.HolderVal) \
                and (kept := library.attribute(cast("Analyzer", self), base, attr, node)) is not None:
            return kept  # encoder.params: what another package's object keeps
        if attr in _SIZES and (is_unknown(base) or isinstance(base, (ArrayVal, HostVal, MeshVal))):
            # An array's (or a mesh's) shape, rank and size are Python ints, whatever the
            # array: host data (``jnp.array([x.shape[0]])`` is uncommitted).
            return HostVal(self.ctx.lazy_code(node, 40), node)
        if isinstance(base, MeshVal):
            if attr == api.DEVICES_WORD:
                d = base.devices
                return DevVal(fn=d.fn, desc=f"{mesh_label(base)}.devices", node=node,
                              reorders=(), fresh=False, from_mesh=base, sizes=d.sizes)
            if attr == api.AXIS_NAMES_WORD and base.axes is not None:
                # Mesh.axis_names: the tuple of names it was built with.
                return SeqVal(tuple(ConstVal(a) for a in base.axes), "tuple")
            return UNKNOWN
        if isinstance(base, ShardingVal):
            if attr == "mesh" and base.mesh is not None:
                return base.mesh
            if attr == "spec" and base.spec is not None:
                return base.spec
            if attr == api.DEVICE_SET_WORD:
                src = base.mesh.devices if base.mesh is not None else base.device
                if src is not None:
                    return DevVal(fn=src.fn, desc=f"{label(base)}.device_set", node=node,
                                  fresh=False, from_mesh=base.mesh, sizes=src.sizes, is_set=True)
            return UNKNOWN
        if isinstance(base, ArrayVal):
            if attr == "sharding":
                return base.sharding
            if attr in placement.ARRAY_ATTRS:
                return placement.derived(base, node)
            return UNKNOWN
        if (dev_id := device_ids.attribute_id(base, attr, node, cast("Analyzer", self))) is not None:
            return dev_id
        if ordered(base):
            base_fn = base.fn
            if attr == "T":
                return base.derive(lambda m: base_fn(m).transpose(), f"{base.desc}.T",
                                   reorder=".T", step=(node, node.value))
            if attr == "flat":
                return base.derive(lambda m: base_fn(m).ravel(), base.desc)
            if attr == "size":
                return IntVal(lambda m: len(base_fn(m).flat))
            return UNKNOWN
        if isinstance(base, InstanceVal):
            if base.attrs and attr in base.attrs:
                return base.attrs[attr]  # what this construction's __init__ assigned (classes.py)
            fields = base.cls.fields
            if fields is not None and attr in fields.names:
                return self.field_value(base.cls, attr)
            if attr == "__sites__":
                return UNKNOWN
            found = base.cls.attrs.get(attr)
            if isinstance(found, FuncVal) and found.prop:
                return self.read_property(found, base, node)
            return found if found is not None else unknown(_unset_attribute(base.cls, attr),
                                                           f"{base.cls.node.name}.{attr}")
        if isinstance(base, ClassVal):
            return base.attrs.get(attr, UNKNOWN) if attr != "__sites__" else UNKNOWN
        if isinstance(base, RangeVal) and (bound := ranges.attribute(base, attr)) is not None:
            return bound
        if isinstance(base, HostVal):
            return base.again() if attr in ("T", "mT", "real", "imag") \
                else UNKNOWN
        if isinstance(base, OwnShardingVal):
            return OwnShardingVal(base.of, mesh=True) if attr == "mesh" and not base.mesh else UNKNOWN
        if is_unknown(base) and base is not UNKNOWN and attr == "sharding":
            # The sharding of this very value (one binding): same devices, whatever they are.
            return OwnShardingVal(base)
        if (of_unknown := placement.of_unknown(base, attr)) is not None:
            return of_unknown  # a.T of an array the analysis does not know: for its reason
        if is_unknown(base):
            return unknown(UNKNOWN_OBJECT, dotted(node) or f"(...).{attr}")
        return UNKNOWN

    def eval_Subscript(self, node: ast.Subscript, scope: Scope) -> Value:
        base = self.eval(node.value, scope)
        parts: list[object] = []
        for s in subscript_items(node):
            if isinstance(s, ast.Slice):
                parts.append((self.eval(s.lower, scope) if s.lower else None,
                              self.eval(s.upper, scope) if s.upper else None,
                              self.eval(s.step, scope) if s.step else None))
            else:
                v = self.eval(s.value if isinstance(s, ast.Starred) else s, scope)
                # sl = slice(0, 4); devs[sl] slices as devs[0:4] does.
                parts.append(v.bounds if isinstance(v, SliceVal) and not isinstance(s, ast.Starred) else v)
        shard = commitments.subscript(base, parts, node)
        if shard is not None:
            return shard
        if isinstance(base, RangeVal) and (got := ranges.subscript(
                base, parts, node, lambda: self.ctx.code(node, 40))) is not None:
            return got
        if isinstance(base, ArrayVal):
            if contextmesh.operands(cast("Analyzer", self), node, [(base, node.value)]):
                return UNKNOWN  # the computation fails under the context mesh
            return placement.derived(base, node)
        if isinstance(base, HostVal):
            return placement.host_element(cast("Analyzer", self), base, node, parts)
        if isinstance(base, SeqVal) and base.kind == "dict" and len(parts) == 1 \
                and isinstance(parts[0], ConstVal) and NO_KEY not in base.keys:
            key = parts[0].value
            hits = [i for i, k in enumerate(base.keys) if k == key]
            return base.items[hits[-1]] if hits else UNKNOWN
        if isinstance(base, DeviceIdVal) and base.many and len(parts) == 1 and isinstance(parts[0], IntVal):
            return base.one()
        if isinstance(base, SeqVal) and base.kind != "dict" and len(parts) == 1 \
                and isinstance(parts[0], IntVal):
            i = const_int(parts[0])
            if i is not None and -len(base.items) <= i < len(base.items):
                return base.items[i]
            if i is None and base.items and (one := each(base.items)) is not None:
                return one  # arrays[i] in a loop: whichever i, one of them
            return UNKNOWN
        if isinstance(base, SeqVal) and base.kind == "dict" and len(parts) == 1 and base.items \
                and not isinstance(parts[0], (ConstVal, tuple)) and (one := each(base.items)) is not None:
            return one  # params[k] for k in params: whichever key, one of the values
        if ordered(base):
            return self._index_devices(base, parts, node)
        if isinstance(base, Unknown):
            return unknown(CONTAINER, base.culprit or dotted(node.value) or "")
        return UNKNOWN

    def _index_devices(self, base: DevVal, parts: list[object], node: ast.Subscript) -> Value:
        text = ", ".join(self.ctx.code(item, 30) for item in subscript_items(node))
        f = base.fn
        if len(parts) != 1:
            return index_grid(cast("Analyzer", self), base, parts, node, text)
        part = parts[0]
        if (picked := device_ids.index_by_id(base, part, node, cast("Analyzer", self))) is not None:
            return picked
        if isinstance(part, IndexPermutation):
            return permute_rows(cast("Analyzer", self), base, part, node)
        if isinstance(part, tuple):
            # devs[:n] with n None (a default) is the whole list, as Python slices it.
            lo, hi, st = (None if isinstance(p, ConstVal) and p.value is None else p for p in part)
            fns: list[Optional[Callable[[dv.Model], int]]] = []
            for p in (lo, hi, st):
                if p is None:
                    fns.append(None)
                elif isinstance(p, IntVal):
                    fns.append(p.fn)
                else:
                    return DevVal(fn=undecidable, desc=f"{base.desc}[{text}]", node=node,
                                  fresh=base.fresh, from_mesh=base.from_mesh)

            def sliced(m: dv.Model) -> dv.DevArr:
                a = f(m)
                vals = [fn(m) if fn is not None else None for fn in fns]
                return a.slice0(vals[0], vals[1], vals[2])

            step = const_int(st) if st is not None else 1
            reorder = f"[{text}]" if (step is not None and step < 0) else None
            if st is not None and step is None:
                reorder = f"[{text}]"
            sizes = base.sizes
            return base.derive(sliced, f"{base.desc}[{text}]", reorder=reorder, sizes=sizes,
                               step=(node, node.value) if reorder else None)
        if isinstance(part, IntVal):
            return element(base, part.fn, text, node, self.ctx.devices)
        return UNKNOWN

    def eval_BinOp(self, node: ast.BinOp, scope: Scope) -> Value:
        left = self.eval(node.left, scope)
        right = self.eval(node.right, scope)
        return self.binop(node, left, right, node.op, node.left, node.right)

    def binop(self, node: ast.AST, left: Value, right: Value, op: ast.operator,
              lnode: ast.AST, rnode: ast.AST) -> Value:
        if isinstance(left, IntVal) and isinstance(right, IntVal):
            out = int_arith(op, left, right, augmented=type(node) is ast.AugAssign)
            if out is not UNKNOWN:
                return out
        if _number(left) and _number(right) and type(node) is not ast.AugAssign:
            # Python numbers either way (``n / 8`` is a float): host data.
            return HostVal(self.ctx.lazy_code(node, 40), node)
        if type(op) is ast.Add and ordered(left) and ordered(right):
            f, g = left.fn, right.fn
            joined = left.derive(lambda m: f(m).as_list().concat(g(m).as_list()),
                                 f"{left.desc} + {right.desc}")
            # d[k:] + d[:k] is a rotation: same devices, other order.
            joined.reorders = left.reorders + right.reorders + ("rotation",)
            joined.shuffle = left.shuffle or right.shuffle
            joined.sizes = left.sizes + right.sizes
            joined.platforms = left.platforms | right.platforms
            return joined
        if (isinstance(left, ArrayVal) or isinstance(right, ArrayVal)) and contextmesh.operands(
                cast("Analyzer", self), node, [(left, lnode), (right, rnode)]):
            return UNKNOWN  # the computation fails here
        if isinstance(left, ArrayVal) and isinstance(right, ArrayVal):
            self.emit(Transfer(node=node, ctx=self.ctx, kind="binop", value=left,
                               target=right.sharding, value_node=lnode, target_node=rnode,
                               func=self.ctx.code(node, 40)))
            if left.mesh is not None and right.mesh is not None and \
                    self.ctx.compare(left.mesh, right.mesh) == "same":
                return left
            return UNKNOWN
        if isinstance(left, ArrayVal) and isinstance(right, (IntVal, ConstVal)):
            return left
        if isinstance(right, ArrayVal) and isinstance(left, (IntVal, ConstVal)):
            return right
        if isinstance(left, ArrayVal) and isinstance(right, HostVal):
            return placement.derived(left, node)  # host data and uncommitted arrays follow it
        if isinstance(right, ArrayVal) and isinstance(left, HostVal):
            return placement.derived(right, node)
        host = [v for v in (left, right) if isinstance(v, HostVal)]
        if host and all(isinstance(v, (HostVal, IntVal, ConstVal)) for v in (left, right)):
            # Host data with host data stays on the host; an uncommitted operand keeps
            # the result uncommitted.
            return HostVal(self.ctx.lazy_code(node, 40), node, any(h.uncommitted for h in host))
        if host:
            return placement.unknown_operand([left, right])
        if all(isinstance(v, (Unknown, IntVal, ConstVal)) for v in (left, right)):
            return unknown_from(left, right)  # ``x * 2`` of a parameter nobody passes: for that reason
        return UNKNOWN


def _unset_attribute(cls: ClassVal, attr: str) -> str:
    """Why ``self.attr`` has no value here: its class's methods assign it in several
    statements, in one that has not run yet (a function run before the class's
    ``__init__``), or nowhere (a base class, a property, code outside the class)."""
    sites = cls.attrs.get("__sites__")
    if not isinstance(sites, ConstVal) or not isinstance(sites.value, dict):
        return ATTRIBUTE
    count = sites.value.get(attr, 0)
    return ATTRIBUTE if count > 1 else ATTRIBUTE_LATER if count == 1 else ATTRIBUTE_ELSEWHERE


def _number(v: Value) -> bool:
    """A Python int, float or bool the analysis holds."""
    return isinstance(v, IntVal) or (isinstance(v, ConstVal) and type(v.value) in (int, float, bool))


# Values that are never None: a device list, a mesh, a sharding, an array.
_NOT_NONE = (DevVal, MeshVal, ShardingVal, ArrayVal)


def none_test(test: ast.expr, scope: Scope) -> Optional[bool]:
    """``if name is None`` / ``if name is not None`` where the name's value decides it: a
    mesh factory's ``if devices is None: devices = jax.devices()`` run for one call's
    device list keeps that list (functions.py evaluates a helper per argument context),
    not a join of it with jax.devices(); and the same test of a conditional expression
    (``devices if devices is not None else jax.devices()``). None: not decided, both
    branches run."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.left) is not ast.Name:
        return None
    op, right = test.ops[0], test.comparators[0]
    if type(op) not in (ast.Is, ast.IsNot) or type(right) is not ast.Constant or right.value is not None:
        return None
    v = scope.lookup(test.left.id)
    if isinstance(v, ConstVal) and v.value is None:
        is_none = True
    elif isinstance(v, _NOT_NONE):
        is_none = False
    else:
        return None
    return is_none if type(op) is ast.Is else not is_none


def truth(v: Value) -> Optional[bool]:
    """Whether a test whose value is a constant the run knows (a configuration's flag,
    ``if CONFIG.reverse_rollout:``) is true, as Python decides it; None: not known."""
    if isinstance(v, ConstVal) and type(v.value) in (bool, str, type(None)):
        return bool(v.value)
    if isinstance(v, IntVal) and v.literal is not None:
        return bool(v.literal)
    return None

