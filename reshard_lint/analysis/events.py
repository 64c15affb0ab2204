"""What the analysis tells rules: the semantic events of a program.

One traversal of a file produces these events in program order; each rule looks only
at the event kinds it names, so all rules share one parse and one walk.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, Optional

from .values import DevVal, DeviceIdVal, MeshVal, Text, Value

if TYPE_CHECKING:
    from typing import Callable

    from .context import FileContext
    from .devarray import DevArr
    from .devices import Model


@dataclass(eq=False)
class Event:
    node: ast.AST  # the anchor: one diagnostic per anchor at most
    ctx: "FileContext"

    @property
    def spelled(self) -> str:
        """``func``, how the user spelled the operation, for messages: written out on the
        first read where it was left a callable (a transfer another module's function
        makes names that module's line, which costs a walk of its tree)."""
        func = getattr(self, "func")
        if not isinstance(func, str):
            func = func()
            setattr(self, "func", func)
        return func


@dataclass(eq=False)
class MeshBuilt(Event):
    """``Mesh(devs, names)`` or ``jax.make_mesh(...)`` with what is known of its devices."""

    mesh: MeshVal
    # Built inside another module's function that a call here ran (functions.relayed):
    # that construction, while ``node`` is the call that handed it the list.
    through: Optional[ast.AST] = None


@dataclass(eq=False)
class ShardingBuilt(Event):
    """``NamedSharding(first, spec)``: ``first`` should be a Mesh."""

    first: Value
    first_node: ast.AST
    spec_node: Optional[ast.AST]
    through: Optional[ast.AST] = None  # as MeshBuilt's


TransferKind = Literal[
    "device_put",  # jax.device_put(x, s)
    "to_device",  # x.to_device(s)
    "jit_in",  # jax.jit(f, in_shardings=s)(x)
    "jit_out",  # jax.jit(f, out_shardings=s)(x)
    "constraint",  # jax.lax.with_sharding_constraint(x, s)
    "reshard",  # jax.sharding.reshard(x, s)
    "asarray",  # jnp.asarray(x, device=s)
    "binop",  # x + y
    "local_data",  # jax.make_array_from_process_local_data(s, data, global_shape)
    "host_to_global",  # multihost_utils.host_local_array_to_global_array(x, mesh, spec)
    # Sites that only coverage counts (``Site``):
    "assembly",  # jax.make_array_from_callback(shape, s, cb), make_array_from_single_device_arrays
    "allgather",  # multihost_utils.process_allgather(x)
    "default_device",  # jax.default_device(d)
]
# The transfers that put an array on a target (no jit around them).
PUT_KINDS: tuple[TransferKind, ...] = ("device_put", "to_device")


@dataclass(eq=False)
class Transfer(Event):
    """An array (or pytree of arrays) meets a target sharding, mesh or device.

    ``value`` is the array side (an ArrayVal, a SeqVal pytree, or anything for the
    constructors of global arrays); ``target`` a ShardingVal, MeshVal, DevVal (a single
    device) or a SeqVal of those. ``call`` is the call node, ``func`` how the user
    spelled the function, for messages.
    """

    kind: TransferKind
    value: Value
    target: Value
    value_node: Optional[ast.AST]
    target_node: Optional[ast.AST]
    func: Text  # read it as ``spelled``
    has_global_shape: bool = False
    untargeted: bool = False  # device_put(x) with no target: uncommitted, crosses nothing
    # Run as the first thing a block expecting an error does (interpreter.exec_with):
    # coverage classifies it, no rule reads it.
    expected_error: bool = False
    # The transfer inside another module's function that this call of it runs with its
    # arguments (functions.py): ``node`` is the call here, ``through`` the transfer there.
    through: Optional[ast.AST] = None
    through_value: Optional[ast.AST] = None  # the value that transfer moves, as it spells it
    # The calls between the call here and that transfer, in order (functions.py): the
    # path a message's related locations step through.
    path: tuple[ast.AST, ...] = ()
    # Made in one of several runs of the same code (a loop or comprehension run per
    # element, a jax.tree.map callback run per leaf: unroll.py), each of which may give
    # the call other values: a fix written from this run's must hold for the others.
    repeated: bool = False
    # Made in a run whose arguments other modules' calls pass (analysis/foreign.py): each
    # such call reports it (its relay); coverage counts it here, no rule reads it here.
    fed: bool = False
    coverage_only: ClassVar[bool] = False  # a Site


@dataclass(eq=False)
class Site(Transfer):
    """A call that moves, assembles or places arrays where the analysis makes no
    ``Transfer`` (a jitted call with shardings whose arguments it does not know, an
    assembly from a callback, a gather, a default-device scope): a site for
    ``reshard-lint coverage`` only, with the values it knows, so that the site is counted
    and says what stopped it. No rule reads it (engine.analyse hands it to the observer
    alone), and a ``Transfer`` of the same call takes its place."""

    coverage_only: ClassVar[bool] = True


PlacementKind = Literal[
    "context",  # with jax.default_device(d): what the block computes from no committed operand
    "jit_out",  # jax.jit(f, out_shardings=SingleDeviceSharding(d))(...)
    "keyword",  # jnp.zeros(n, device=d), jnp.asarray(x, device=d)
]


@dataclass(eq=False)
class Placement(Event):
    """Code that places its results on one device whatever its operands are: ``device``
    is that device (a single ``DevVal``), ``target_node`` where the code writes it."""

    kind: PlacementKind
    device: DevVal
    target_node: Optional[ast.AST]
    func: Text  # read it as ``spelled``


@dataclass(eq=False)
class IdAsIndex(Event):
    """``devs[i]`` where ``devs`` is a device list and ``i`` a device id."""

    devices: DevVal
    index: DeviceIdVal
    base_node: ast.expr
    index_node: ast.expr


@dataclass(eq=False)
class ContextOp(Event):
    """A JAX computation under ``jax.set_mesh(m)`` that meets something off the context mesh.

    ``array`` is a committed operand on another device (set when an operand is the
    problem), ``target`` a jit's explicit sharding on another mesh (set when that is);
    ``context`` is the ``MeshContextVal`` in force, with the call that set it.
    """

    context: Value
    array: Optional[Value]
    target: Optional[Value]
    value_node: Optional[ast.AST]
    what: str  # the operation as written, for messages: 'a[1:3]', 'jnp.expand_dims(...)'


@dataclass(eq=False)
class Fetch(Event):
    """An array's value brought to this process's host: ``jax.device_get(x)``, ``np.asarray(x)``."""

    value: Value
    value_node: Optional[ast.AST]
    func: str
    coverage_only: ClassVar[bool] = False


@dataclass(eq=False)
class FetchSite(Fetch):
    """A read of a value that the rules do not judge (models/fetches.py): an array of
    unknown placement, ``float(x)``, ``int(x)``, ``x.item()`` of an array, what
    ``jax.device_get`` is given that is no array on a known mesh: a site for
    ``reshard-lint coverage`` only."""

    coverage_only: ClassVar[bool] = True


@dataclass(eq=False)
class BuilderShape(Event):
    """``jax.make_mesh(shape, ...)`` or ``mesh_utils.create_device_mesh(shape, ...)``: the
    size of the shape and the devices it lays out (the ones given, or ``jax.devices()``),
    each a function of the model topology (analysis/devices.py)."""

    size: "Callable[[Model], int]"
    devices: "Callable[[Model], DevArr]"
    sizes: tuple[int, ...]  # device counts the program spells (devices.models_for)
    exact: bool  # create_device_mesh needs every device given; make_mesh takes the first
    func: Text


@dataclass(eq=False)
class Gather(Event):
    """``multihost_utils.process_allgather(x, tiled=...)``, one event per array of ``x``
    with a known mesh; ``tiled`` is what the call passes (None: not a literal)."""

    value: Value
    value_node: Optional[ast.AST]
    tiled: Optional[bool]
    func: Text
