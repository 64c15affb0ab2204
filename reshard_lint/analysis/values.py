"""The abstract values the analysis tracks: device lists, meshes, shardings, arrays.

Anything the analysis cannot pin down is ``UNKNOWN``; rules never fire on it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, NoReturn, Optional, Union

from .devices import DevFn, Model, ModelError

if TYPE_CHECKING:
    from .arguments import Call
    from .classes import Fields


class Value:
    __slots__ = ()


class Unknown(Value):
    """A value the analysis cannot pin down, with why (for ``reshard-lint coverage``).

    Each unknown binding gets its own object, so ``x.sharding`` of an unknown ``x`` can
    still be recognised as the sharding of that very ``x``: two unknowns are never the
    same value, whatever they carry. ``culprit`` names what stopped the analysis where
    it is known (``flax.nnx.state (flax, not modelled)``, ``cfg.mesh``, ``parameter 'mesh'
    of step``): information for the report only, read by nothing that decides.
    """

    __slots__ = ("reason", "culprit")

    def __init__(self, reason: str = "", culprit: str = "") -> None:
        self.reason = reason
        self.culprit = culprit

    def __repr__(self) -> str:
        if not self.reason:
            return "UNKNOWN"
        return f"UNKNOWN({self.reason}: {self.culprit})" if self.culprit else f"UNKNOWN({self.reason})"


UNKNOWN: Value = Unknown()


def unknown(reason: str, culprit: str = "") -> Unknown:
    return Unknown(reason, culprit)


def is_unknown(v: object) -> bool:
    return isinstance(v, Unknown)


def unknown_from(*sources: Value) -> Value:
    """What is computed or taken from values the analysis does not know: unknown for the
    first one's reason (and culprit), a binding of its own (``x.sharding`` of it is its
    own); the nameless ``UNKNOWN`` when none gives a reason."""
    first = next((v for v in sources if isinstance(v, Unknown) and v.reason), None)
    return Unknown(first.reason, first.culprit) if first is not None else UNKNOWN


def again(v: Unknown) -> Unknown:
    """A new binding for what ``v`` stands for: its reason and culprit, not its identity."""
    return Unknown(v.reason, v.culprit)


@dataclass(eq=False)
class QualVal(Value):
    """A module, function or class known by its qualified name (``jax.sharding.Mesh``)."""

    qual: str


@dataclass(eq=False)
class ConstVal(Value):
    value: object


@dataclass(eq=False)
class IntVal(Value):
    """An integer that may depend on the topology (``jax.device_count() // 2``)."""

    fn: Callable[[Model], int]
    literal: Optional[int] = None  # set when spelled out in the source


@dataclass(eq=False)
class SliceVal(Value):
    """``slice(lo, hi, step)``: what ``devs[sl]`` slices with, as ``devs[lo:hi:step]``
    (a bound not given is None)."""

    bounds: tuple[Optional[Value], Optional[Value], Optional[Value]]


@dataclass(eq=False)
class DeviceIdVal(Value):
    """A device's id (``d.id``, the N of ``"tpu:N"``), or a list of them (``many``).

    Ids are positions in ``jax.devices()`` only on one process: multi-process CPU numbers
    process p's devices from p * 2048, and multi-host TPU ids follow coordinates.
    """

    node: ast.AST  # where the id was read
    desc: str
    many: bool = False
    text: bool = False  # the digits of "tpu:2", before int()

    def one(self) -> "DeviceIdVal":
        return DeviceIdVal(self.node, self.desc)


@dataclass(eq=False)
class Shuffle:
    """A permutation applied to a device list, and whether every process agrees on it."""

    node: ast.AST
    how: str  # source text of the shuffle, e.g. 'random.shuffle(devs)'
    agreed: bool  # False: unseeded or seeded per process


@dataclass(eq=False)
class DevVal(Value):
    """A device list/array, or a single device (``single``)."""

    fn: DevFn
    desc: str  # how it was built, rendered for messages: 'jax.devices()[::-1]'
    node: Optional[ast.AST] = None
    reorders: tuple[str, ...] = ()  # order-changing steps applied, e.g. ('[::-1]',)
    shuffle: Optional[Shuffle] = None
    fresh: bool = True  # derived from jax.devices()/local_devices(), not from a mesh
    from_mesh: Optional["MeshVal"] = None
    single: bool = False
    any_device: bool = False  # a device of unknown index (a loop over devices)
    sizes: tuple[int, ...] = ()  # device counts the source spells out (reshape, shapes)
    is_set: bool = False  # a set of devices (no order): device_set, x.devices()
    # (outer, inner) nodes of each reordering step, e.g. (`devs[::-1]`, `devs`): a fix
    # that undoes a single step replaces outer with inner.
    steps: tuple[tuple[ast.AST, Optional[ast.AST]], ...] = ()
    # Platforms named in the source; 'default' is jax.devices() with no backend, which
    # may be any of them, so comparing it with a named platform is undecidable.
    platforms: frozenset[str] = frozenset({"default"})
    # What decides the order where platforms differ (docs/platforms.md): 'enumeration'
    # (jax.devices() as listed), 'id' (sorted by device id), 'builder' (a mesh builder's
    # order for ``builder_shape``), 'written' (a reordering in the code).
    order_by: str = "enumeration"
    builder_shape: tuple[int, ...] = ()
    builder_input: str = ""  # the device list a builder was given, as written ('' : jax.devices())

    def derive(self, fn: DevFn, desc: str, *, reorder: str | None = None,
               step: tuple[ast.AST, Optional[ast.AST]] | None = None, **kw: object) -> "DevVal":
        reorders = self.reorders + ((reorder,) if reorder else ())
        steps = self.steps + ((step,) if step else ())
        fields = dict(fn=fn, desc=desc, node=self.node, reorders=reorders, shuffle=self.shuffle,
                      fresh=self.fresh, from_mesh=self.from_mesh, single=False,
                      sizes=self.sizes, is_set=False, steps=steps, platforms=self.platforms,
                      order_by="written" if reorder else self.order_by, builder_shape=self.builder_shape,
                      builder_input=self.builder_input)
        fields.update(kw)
        return DevVal(**fields)  # type: ignore[arg-type]  # (fields: DevVal's own, of their types)


@dataclass(eq=False)
class MeshVal(Value):
    devices: DevVal
    node: ast.AST  # the construction call
    ctor: str  # 'Mesh', 'jax.make_mesh', ...
    name: Optional[str] = None  # the first name it was bound to
    sizes: tuple[int, ...] = ()
    axes: Optional[tuple[str, ...]] = None  # the axis names, when the program spells them
    # The type of every axis when the source tells and all are one (models/meshes.py:
    # 'Auto', 'Explicit', 'Manual'); None when unknown or mixed.
    axis_types: Optional[str] = None


# A description, or how to write it: most values are never named in a message, and
# writing a node's code back out is the costliest part of making them.
Text = Union[str, Callable[[], str]]


def text_of(t: Text) -> str:
    return t if isinstance(t, str) else t()


class LazyText:
    """An attribute set to a ``Text``: written out on its first read, kept from then on
    (in the slot named with a leading underscore)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj: object, owner: type | None = None) -> str:
        value = getattr(obj, self.slot)
        if not isinstance(value, str):
            value = value()
            setattr(obj, self.slot, value)
        return value


class SpecVal(Value):
    __slots__ = ("node", "_code", "entries")
    code = LazyText()

    def __init__(self, node: ast.AST, code: Text,
                 entries: Optional[tuple[tuple[str, ...], ...]] = None) -> None:
        self.node = node
        self._code = code
        # The mesh axes of each dimension, from the arguments' values (``P(axis)`` with
        # ``axis = "x"`` known: ``(("x",),)``); None where one is not a known string, None
        # or tuple of strings (partition.spec_entries then reads the literal).
        self.entries = entries


@dataclass(eq=False)
class ShardingVal(Value):
    node: Optional[ast.AST]
    mesh: Optional[MeshVal] = None  # NamedSharding
    device: Optional[DevVal] = None  # SingleDeviceSharding
    spec: Optional[SpecVal] = None
    name: Optional[str] = None
    from_context: bool = False  # a bare PartitionSpec under set_mesh/use_mesh


@dataclass(eq=False)
class ArrayVal(Value):
    """A committed jax.Array whose sharding (and so mesh) is known."""

    sharding: ShardingVal
    node: ast.AST  # where it was made
    name: Optional[str] = None
    # Computed from arrays on this sharding's devices (models/placement.py), layout
    # unknown: 'array', or 'tree' for a jitted call's result, which may be a pytree of them.
    derived: str = ""

    @property
    def mesh(self) -> Optional[MeshVal]:
        return self.sharding.mesh


class HostVal(Value):
    """Data that cannot be on a mesh: a NumPy array, a literal, or an uncommitted jax.Array.

    ``uncommitted`` marks a jnp or jax.random result computed without a device or
    sharding: JAX places it wherever it is first used, so it crosses no mesh.
    """

    __slots__ = ("_desc", "node", "uncommitted")
    desc = LazyText()  # for coverage evidence: 'np.arange(8.0)'

    def __init__(self, desc: Text, node: Optional[ast.AST] = None, uncommitted: bool = False) -> None:
        self._desc = desc
        self.node = node
        self.uncommitted = uncommitted

    def again(self) -> "HostVal":
        """The same data, from a method or attribute that keeps it on the host."""
        return HostVal(self._desc, self.node, self.uncommitted)


class RangeVal(HostVal):
    """``range(start, stop, step)`` with integer bounds the analysis knows, maybe per
    topology (``range(jax.device_count())``): host data like any range, whose ``start``,
    ``stop``, ``step``, length, elements and slices are known as Python computes them
    (models/ranges.py)."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, desc: Text, node: Optional[ast.AST], start: IntVal, stop: IntVal, step: IntVal) -> None:
        super().__init__(desc, node)
        self.start = start
        self.stop = stop
        self.step = step

    def ints(self, model: Model) -> range:
        """The range on one topology (``step`` 0 raises ValueError: the program cannot run)."""
        return range(self.start.fn(model), self.stop.fn(model), self.step.fn(model))

    def literal(self) -> Optional[range]:
        """The range where every bound is spelled out in the source (or computed from such)."""
        bounds = (self.start.literal, self.stop.literal, self.step.literal)
        if any(b is None for b in bounds) or bounds[2] == 0:
            return None
        return range(*bounds)  # type: ignore[arg-type]  # (ints: checked above)


@dataclass(eq=False)
class OwnShardingVal(Value):
    """``x.sharding`` (or its mesh) of a value the analysis does not know: same devices as ``of``."""

    of: Value
    mesh: bool = False  # x.sharding.mesh rather than x.sharding


@dataclass(eq=False)
class SeqVal(Value):
    """A tuple, list or dict literal (dict: its values), e.g. a pytree of arrays."""

    items: tuple[Value, ...]
    kind: str = "tuple"
    keys: tuple[object, ...] = ()  # a dict literal's constant keys, in order
    # Made by another module's summary, which every importer holds: never changed in
    # place (analysis/mutation.py), so one file's analysis cannot change another's.
    shared: bool = False
    # Changed in place (analysis/mutation.py): its length is no longer what ``items`` holds.
    changed: bool = False
    # The containers a store through one name made of this one (mutation.stored): the same
    # object at run time, so a change through another holder changes them too.
    later: Optional[list["SeqVal"]] = None
    # What iterating an object gives, not a tuple: ``d.values()``, ``d.items()``,
    # ``enumerate(...)``, ``zip(...)``, ``map(...)``. JAX takes such an object for one
    # leaf of a pytree (models/tree_map.py).
    view: bool = False
    # The containers a join (``join``) made this one from, or made from this one: at run
    # time it is one of them, so a change in place to one is a change to each
    # (mutation.changed). None: none.
    joined: Optional[list["SeqVal"]] = None


@dataclass(eq=False)
class GenVal(Value):
    """What a call of a generator function gives: an iterator whose every element is
    ``element`` (the values its body yields, where one stands for all of them; unknown
    otherwise)."""

    element: Value


@dataclass(eq=False)
class IndexPermutation(Value):
    """``np.random.permutation(n)`` or ``rng.permutation(n)``: a shuffled ``range(n)``.

    Indexing a device array with it (``np.array(devs)[perm]``) shuffles the devices
    exactly as ``rng.permutation(devs)`` does.
    """

    n: IntVal
    agreed: bool  # seeded with the same constant on every process
    how: str
    node: ast.AST


@dataclass(eq=False)
class RngVal(Value):
    agreed: bool  # seeded with the same constant on every process
    desc: str


@dataclass(eq=False)
class JitVal(Value):
    node: ast.AST
    in_shardings: Value = UNKNOWN
    out_shardings: Value = UNKNOWN
    func: Value = UNKNOWN  # the function it compiles, when known: its body sees the arguments
    # Given nothing that places its results (shardings, device, backend): they are
    # placed where its committed arguments are (models/placement.py).
    plain: bool = False
    # jax.shard_map without a mesh: the specs of its results, on the context mesh of each
    # call (models/shard_map.py).
    context_specs: Optional[Value] = None
    # The sharding keywords given (``in_shardings``, ``out_shardings``): each call is a
    # site for coverage, whatever the analysis knows of them (events.Site).
    sharded: tuple[str, ...] = ()


@dataclass(eq=False)
class TransformVal(Value):
    """``jax.grad(f)``, ``jax.value_and_grad(f)``, ``jax.vmap(f)`` (models/transforms.py)."""

    node: ast.AST
    kind: str  # 'grad' | 'value_and_grad' | 'vmap'
    func: Value = UNKNOWN
    has_aux: bool = False
    parts: int = 0  # argnums given as a tuple of this many positions: a tuple of gradients


@dataclass(eq=False)
class PartialVal(Value):
    func: Value
    args: tuple[Value, ...]
    kwargs: dict[str, Value]
    star: bool = False  # given *args or **kwargs: what it binds is not all known
    # ``functools.partial``'s own call (its first positional argument the function), for
    # the nodes of what it binds (arguments.Call.after).
    made_by: Optional["Call"] = None


@dataclass(eq=False)
class FuncVal(Value):
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    scope: object  # the Scope it closes over
    defaults: dict[str, Value] = field(default_factory=dict)  # evaluated where defined
    owner: Optional["ClassVal"] = None  # the class whose body defines it (a method)
    home: Optional[str] = None  # the file of another module that defines it (project/summaries.py)
    # The name a lambda is bound to (``put = lambda x: ...``): its calls are counted and
    # its body runs as a def's does.
    name: Optional[str] = None
    # A decorator runs it under jax.set_mesh and passes that mesh as ``mesh=``.
    context: Optional["MeshContextVal"] = None
    # A method under ``@property``: reading the attribute on an instance calls it.
    prop: bool = False
    # A generator under ``@contextlib.contextmanager``: a call gives the context it yields in.
    manager: bool = False


@dataclass(eq=False)
class ClassVal(Value):
    node: ast.ClassDef
    attrs: dict[str, Value] = field(default_factory=dict)
    instance: Optional["InstanceVal"] = None  # one abstract instance: attributes live on the class
    fields: Optional[Fields] = None  # a dataclass's
    home: Optional[str] = None  # the file of another module that defines it (project/summaries.py)
    # The attributes each construction gives its instance (instances.py): an InstanceVal's own.
    own: frozenset[str] = frozenset()


@dataclass(eq=False)
class InstanceVal(Value):
    cls: ClassVal
    # A construction's instance of a class of this file: what its __init__ assigned to the
    # class's ``own`` attributes (classes.py). None: the class's one abstract instance.
    attrs: Optional[dict[str, Value]] = None


@dataclass(eq=False)
class MeshContextVal(Value):
    """What ``jax.set_mesh(m)`` / ``use_mesh(m)`` returns: usable in ``with``."""

    mesh: MeshVal
    node: Optional[ast.AST] = None  # the set_mesh call, for messages


@dataclass(eq=False)
class MeshDecoratorVal(Value):
    """A decorator that runs the function under ``jax.set_mesh(context.mesh)`` and passes
    that mesh as the ``mesh`` keyword (jax's test helper ``jtu.with_explicit_mesh``)."""

    context: MeshContextVal


def func_name(func: FuncVal) -> str:
    """How a culprit names a function of the project: ``train_step``, ``Trainer.step``,
    ``lambda``."""
    node = func.node
    name = func.name or "lambda" if isinstance(node, ast.Lambda) else node.name
    return f"{func.owner.node.name}.{name}" if func.owner is not None else name


PATHS = "a name bound differently on different paths (branches, loops, handlers)"


def join(a: Value, b: Value, name: str = "") -> Value:
    """The value after two paths meet: the same value, or unknown (the first one that
    says why, else unknown because the paths differ, with ``name``, the name bound, as
    its culprit)."""
    if a is b:
        return a
    if isinstance(a, ConstVal) and isinstance(b, ConstVal) and a.value == b.value:
        return a
    if isinstance(a, QualVal) and isinstance(b, QualVal) and a.qual == b.qual:
        return a
    if isinstance(a, ArrayVal) and isinstance(b, ArrayVal):
        return _joined_arrays(a, b)
    if isinstance(a, SeqVal) and isinstance(b, SeqVal) and alike(a, b):
        return _joined_containers(a, b, name)
    if isinstance(a, InstanceVal) and isinstance(b, InstanceVal) and a.cls is b.cls and a.cls.instance is not None:
        # Two constructions of one class of this file: what holds for every instance of
        # it, the class's abstract instance (classes.py).
        return a.cls.instance
    if isinstance(a, HostVal) and isinstance(b, HostVal):
        # Host data either way: it crosses no mesh (the first one's description stands).
        return HostVal(a._desc, a.node, a.uncommitted or b.uncommitted)
    for v in (a, b):
        if isinstance(v, Unknown) and v.reason:
            # For its reason, not as that binding: the other path bound something else.
            return again(v)
    return Unknown(PATHS, f"'{name}'" if name else "")


def same_place(a: ShardingVal, b: ShardingVal) -> bool:
    """Both on one mesh object, or (meshless) on one device object."""
    if a.mesh is not None or b.mesh is not None:
        return a.mesh is b.mesh
    return a.device is not None and a.device is b.device


def _joined_arrays(a: "ArrayVal", b: "ArrayVal") -> Value:
    """Two arrays on one mesh (or one device) object are on its devices whichever path
    made them; their layout is known only when both have the same sharding."""
    sa, sb = a.sharding, b.sharding
    if not same_place(sa, sb):
        return Unknown(PATHS)
    tree = "tree" in (a.derived, b.derived)
    if sa is sb:
        return ArrayVal(sa, a.node, derived="tree" if tree else a.derived or b.derived)
    return ArrayVal(ShardingVal(sa.node, mesh=sa.mesh, device=sa.device, from_context=sa.from_context
                                and sb.from_context), a.node, derived="tree" if tree else "array")


def alike(a: "SeqVal", b: "SeqVal") -> bool:
    """Two containers of one shape: the same kind, length and constant keys in the same
    order, neither changed in place (so that their lengths are known)."""
    return a.kind == b.kind and a.view == b.view and len(a.items) == len(b.items) and a.keys == b.keys \
        and not a.changed and not b.changed


def _joined_containers(a: "SeqVal", b: "SeqVal", name: str) -> Value:
    """Two containers of one shape, whichever path made them: that shape, each element
    what both paths agree on (``join``: arrays on one mesh stay on it, the rest unknown).
    At run time it is one of the two objects: the three are linked, so that a change in
    place to any of them is a change to each (mutation.changed)."""
    items = tuple(join(x, y, name) for x, y in zip(a.items, b.items))
    made = SeqVal(items, a.kind, a.keys, view=a.view)
    made.joined = [a, b]
    for v in (a, b):
        if v.joined is None:
            v.joined = []
        v.joined.append(made)
    return made


def undecidable(_: Model) -> NoReturn:
    raise ModelError("undecidable device list")
