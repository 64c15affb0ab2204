"""What the analysis knows of one transfer site: a crossing, same devices, host data, or why not.

A resolved verdict is a claim like a diagnostic, so it is made only on evidence:
``same_devices`` where both sides provably hold the same devices in the same order (one
mesh, or a target built from the array's own sharding), ``same_pieces`` where a put goes
to the same devices in another order that makes no device receive anything the same
spec on the array's own mesh would not (``reorder_cost``), ``host_data`` where the value
cannot be on a mesh (NumPy data, literals, uncommitted arrays). Anything less is
unresolved, with the reason the value is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .context import FileContext
from .render import describe_mesh
from .events import PUT_KINDS, Fetch, Transfer
from .models.commitments import single_device
from .models.host import is_host
from .partition import split_across_processes, whole_on_every_process
from .reorder_cost import order_moves_nothing
from .reasons import (
    COMPUTED_LAYOUT, EXPECTED_ERROR, IMPORTED, NOT_COMPARABLE, NOT_OWN_DEVICE, OTHER, SPLIT_UNKNOWN,
    SPLIT_UNREPORTED, UNMODELLED_JAX, named,
)
from .values import (
    ArrayVal, DevVal, HostVal, MeshVal, OwnShardingVal, QualVal, SeqVal, ShardingVal, Unknown, Value,
)

VERDICTS = ("crossing", "same_devices", "same_pieces", "host_data", "unresolved")


@dataclass(frozen=True)
class Verdict:
    verdict: str  # one of VERDICTS
    detail: str  # evidence for a resolved site, the reason for an unresolved one
    # For an unresolved one, what stopped the analysis where it is known (values.Unknown):
    # ``flax.nnx.state (flax, not modelled)``, ``parameter 'mesh' of train_step``.
    culprit: str = ""


# Evidence that holds whatever values reach the call: a target built from the array's own
# sharding, no target at all (coverage across files keeps these, coverage_modules.py).
OWN_TARGET = "the target is built from "
NO_TARGET = "no target: "
CALLER_FREE = (OWN_TARGET, NO_TARGET)


def _unresolved(ctx: FileContext, v: Value) -> Verdict:
    """Unresolved, for the reason ``v`` is unknown, and what stopped the analysis there."""
    if isinstance(v, Unknown):
        return Verdict("unresolved", v.reason or OTHER, v.culprit if v.reason else "")
    if isinstance(v, QualVal):
        return Verdict("unresolved", UNMODELLED_JAX if v.qual.split(".")[0] == "jax" else IMPORTED,
                       named(v.qual, ctx.project))
    if isinstance(v, SeqVal):
        for item in v.items:
            if not isinstance(item, (ArrayVal, HostVal)):
                return _unresolved(ctx, item)
    return Verdict("unresolved", OTHER)


def _leaves(v: Value) -> list[Value]:
    if isinstance(v, SeqVal):
        return [x for i in v.items for x in _leaves(i)]
    return [v]


def _target_mesh(t: Value) -> Optional[MeshVal]:
    if isinstance(t, ShardingVal):
        return t.mesh
    if isinstance(t, MeshVal):
        return t
    return None


def _device(t: Value) -> Optional[DevVal]:
    """The one device of a single-device target or sharding."""
    if isinstance(t, ShardingVal) and t.mesh is None:
        d = t.device
        return d if isinstance(d, DevVal) and d.single else None
    return t if isinstance(t, DevVal) and t.single else None


def classify(ctx: FileContext, event: Transfer, code: Optional[str]) -> Verdict:
    """The verdict on one transfer event; ``code`` is the diagnostic anchored at its call."""
    if code is not None:
        return Verdict("crossing", f"{code} fires")
    verdict = _classify(ctx, event)
    if event.expected_error and verdict.detail == NOT_COMPARABLE:
        # The block expects a failure, maybe this very one: no rule reads this transfer.
        return Verdict("unresolved", EXPECTED_ERROR)
    return verdict


def _classify(ctx: FileContext, event: Transfer) -> Verdict:
    value, target = event.value, event.target
    if event.kind == "default_device":
        return _default_device(ctx, target)
    x = ctx.code(event.value_node, 30) if event.value_node is not None else "the value"
    if is_host(value):
        made = next((leaf for leaf in _leaves(value) if isinstance(leaf, HostVal)), None)
        where = f"{made.desc} ({ctx.at(made.node)})" if made is not None and made.node is not None \
            else "a literal"
        return Verdict("host_data", f"'{x}' is host data or uncommitted: {where}")
    if event.untargeted:
        # No other devices: in one process a committed array stays where it is; in
        # multi-controller JAX a global one raises instead (the Device path, RSH301's error).
        return Verdict("same_devices", f"{NO_TARGET}device_put moves '{x}' to no other devices")
    if isinstance(target, OwnShardingVal) and target.of is value:
        return Verdict("same_devices", f"{OWN_TARGET}'{x}'s own sharding")
    arrays = _leaves(value)
    if not all(isinstance(a, ArrayVal) for a in arrays):
        return _unresolved(ctx, value)
    targets = _leaves(target) if isinstance(target, SeqVal) else [target] * len(arrays)
    if len(targets) != len(arrays):
        return Verdict("unresolved", OTHER)
    evidence, kind = "", "same_devices"
    for a, t in zip(arrays, targets):
        assert isinstance(a, ArrayVal)
        on, to = _device(a.sharding), _device(t)
        if a.mesh is None and on is not None and to is not None:
            # An array committed to one device, put on one device: the same one, or unresolved.
            if ctx.compare(on, to) != "same":
                return Verdict("unresolved", NOT_COMPARABLE,
                               f"device {on.desc} ({ctx.at(on.node)}) vs {to.desc} ({ctx.at(to.node)})")
            evidence = f"'{x}' is on device {on.desc} ({ctx.at(on.node)}) and the target on " \
                       f"{to.desc} ({ctx.at(to.node)}): the same device"
            continue
        dst = _target_mesh(t)
        if dst is None:
            if isinstance(t, (ShardingVal, DevVal)):
                return Verdict("unresolved", NOT_COMPARABLE)
            return _unresolved(ctx, t)
        if a.mesh is None:
            return Verdict("unresolved", NOT_COMPARABLE)
        relation = ctx.compare(a.mesh, dst)
        if relation == "different":
            # Another device set on every topology, and no rule claims a failure: the
            # file sets the cross-host transfer flag (RSH201 stays silent there), or no
            # rule reads this kind of call.
            apart = ctx.different_on(a.mesh, dst)
            where = "every topology" if set(apart) >= set(ctx.platforms) \
                else f"every {' and '.join(apart)} topology"
            return Verdict("crossing", f"'{x}' is on mesh {describe_mesh(ctx, a.mesh)} and the target on "
                                       f"{describe_mesh(ctx, dst)}: different device sets on {where}, "
                                       "which no rule reports here")
        if relation == "reordered" and event.kind in PUT_KINDS \
                and order_moves_nothing(ctx, a, t):
            kind = "same_pieces"
            evidence = f"'{x}' is on mesh {describe_mesh(ctx, a.mesh)} and the target on " \
                       f"{describe_mesh(ctx, dst)}: the same devices in another order, in which every " \
                       "device holds or gets the piece the same spec on the array's own mesh gives it"
            continue
        if relation == "reordered" and event.kind in PUT_KINDS and a.derived:
            # Which pieces the order moves depends on the layout the computation gave it.
            return Verdict("unresolved", COMPUTED_LAYOUT, f"'{x}' on {describe_mesh(ctx, a.mesh)}")
        if relation != "same":
            return Verdict("unresolved", NOT_COMPARABLE,
                           f"{describe_mesh(ctx, a.mesh)} vs {describe_mesh(ctx, dst)}")
        evidence = evidence or f"'{x}' is on mesh {describe_mesh(ctx, a.mesh)} and the target on " \
                               f"{describe_mesh(ctx, dst)}: the same devices in the same order"
    return Verdict(kind, evidence)


def _default_device(ctx: FileContext, target: Value) -> Verdict:
    """``jax.default_device(d)`` moves nothing itself; what its scope makes is placed on
    ``d``: harmless on every process only where ``d`` is the process's own device."""
    device = _device(target)
    if device is None:
        return _unresolved(ctx, target) if not isinstance(target, (DevVal, ShardingVal)) \
            else Verdict("unresolved", NOT_OWN_DEVICE)
    if ctx.locality(device) == "local":
        return Verdict("same_devices", f"the default device {device.desc} ({ctx.at(device.node)}) is this "
                                       "process's own")
    return Verdict("unresolved", NOT_OWN_DEVICE, f"device {device.desc} ({ctx.at(device.node)})")


def classify_fetch(ctx: FileContext, event: Fetch) -> Verdict:
    """The verdict on a read of a value to this process's host (``jax.device_get``,
    ``np.asarray``, ``.tolist()``, ``.item()``, ``float``), where no rule fires: resolved
    only where the analysis knows that every process can read the whole value."""
    value = event.value
    x = ctx.code(event.value_node, 30) if event.value_node is not None else "the array"
    if is_host(value):
        made = next((leaf for leaf in _leaves(value) if isinstance(leaf, HostVal)), None)
        where = f"{made.desc} ({ctx.at(made.node)})" if made is not None and made.node is not None \
            else "a literal"
        return Verdict("host_data", f"'{x}' is host data or uncommitted: {where}")
    if not isinstance(value, ArrayVal):
        return _unresolved(ctx, value)
    if value.mesh is None:
        device = single_device(value)
        if device is not None and ctx.locality(device) == "local":
            return Verdict("same_devices", f"'{x}' is on {device.desc} ({ctx.at(device.node)}), a device of this "
                                           "process: it reads its own device")
        if device is not None:
            return Verdict("unresolved", SPLIT_UNKNOWN, f"device {device.desc} ({ctx.at(device.node)})")
        return Verdict("unresolved", SPLIT_UNKNOWN, f"'{x}'")
    mesh = describe_mesh(ctx, value.mesh)
    if whole_on_every_process(ctx, value):
        return Verdict("same_devices", f"'{x}' is on mesh {mesh}, whole on every process that reads it (this "
                                       "process's devices, or every piece on every process)")
    if split_across_processes(ctx, value):
        return Verdict("unresolved", SPLIT_UNREPORTED, f"'{x}' on {mesh}")
    return Verdict("unresolved", SPLIT_UNKNOWN, f"'{x}' on {mesh}")
