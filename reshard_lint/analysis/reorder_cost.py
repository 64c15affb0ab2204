"""What a move between two orders of the same devices costs, device by device.

RSH202 blames the target mesh's device order only for the bytes it makes move: the
devices that must receive a piece (``shard_indices.receiving``) where the same spec on
the array's own mesh would need none (its piece lies inside what the device holds). A
replicated target, a spec change that moves the data anyway, or two meshes whose axes give every device the same piece
(``P('model')`` on one mesh, ``P('model_q')`` on another over the same positions) move
nothing because of the order. Decided on every model topology of a platform where the
orders differ; anything unknown (a spec or axis names not written as literals, a mesh
the topology cannot build) decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .context import FileContext
from .devarray import DevArr
from .partition import axis_names, spec_entries
from .shard_indices import Entries, Piece, inside, pieces, receiving
from .values import ArrayVal, ShardingVal, Value


@dataclass(frozen=True)
class OrderCost:
    platform: str
    moved: int  # devices receiving a piece that the array's own mesh would leave in place
    devices: int  # on the smallest topology of ``platform`` that decides
    decided: bool = True  # the same answer (moves or not) on every topology of the platform

    @property
    def every(self) -> bool:
        return self.moved == self.devices


def _own(src: DevArr, src_names: tuple[str, ...], held_spec: Entries, dst: DevArr,
         dst_names: tuple[str, ...], entries: Entries) -> Optional[dict[int, Piece]]:
    """The pieces the target's spec gives on the array's own mesh
    (``NamedSharding(x.sharding.mesh, spec)``), when the spec names only axes of that mesh,
    whatever their sizes there. Else, when the two shardings
    lay the array out alike position by position (``P('x')`` on 8 devices and
    ``P(('a', 'b'))`` on a 2 x 4 grid: the k-th device of each holds block k), the move
    only reorders that layout, and on the array's own mesh every device keeps its piece.
    Otherwise there is no such mesh to compare with (None): the spec's change is the move."""
    used = {a for e in entries for a in e}
    if used <= set(src_names):
        return pieces(src, src_names, entries)
    n = len(src.flat)
    if n != len(dst.flat):
        return None
    by_position_src = pieces(DevArr(tuple(range(n)), src.shape), src_names, held_spec)
    by_position_dst = pieces(DevArr(tuple(range(n)), dst.shape), dst_names, entries)
    if by_position_src is None or by_position_src != by_position_dst:
        return None
    return pieces(src, src_names, held_spec)


def order_cost(ctx: FileContext, array: ArrayVal, target: Value) -> Optional[OrderCost]:
    """The devices the order alone makes receive bytes, on the first platform where every
    topology that builds both meshes says some do; None when none is shown."""
    found = _costs(ctx, array, target)
    return None if found is None else next((c for c in found if c.moved and c.decided), None)


def order_moves_nothing(ctx: FileContext, array: ArrayVal, target: Value) -> bool:
    """On every topology of every platform where the two orders differ, every device
    holds or gets what the same spec on the array's own mesh gives it: decided, not
    merely unshown."""
    found = _costs(ctx, array, target)
    return found is not None and bool(found) and all(not c.moved and c.decided for c in found)


def _costs(ctx: FileContext, array: ArrayVal, target: Value) -> Optional[list[OrderCost]]:
    """Per platform where the orders differ, its cost (``moved`` 0: nothing, decided on
    every topology); None when some topology cannot decide."""
    src = array.mesh
    dst = target.mesh if isinstance(target, ShardingVal) else None
    if src is None or dst is None or not isinstance(target, ShardingVal):
        return None
    need_spec = spec_entries(target.spec) if target.spec is not None else None
    if need_spec is not None and not any(need_spec):
        # A replicated target: every device gets the whole array, as P() on the array's own
        # mesh gives it, whatever the array's layout (a computed one included).
        return [OrderCost(platform, 0, 0) for platform in ctx.reordered_on(src, dst)]
    if array.derived:
        return None
    if array.sharding.spec is None or target.spec is None:
        return None
    held_spec, need_spec = spec_entries(array.sharding.spec), spec_entries(target.spec)
    src_names, dst_names = axis_names(src), axis_names(dst)
    if held_spec is None or need_spec is None or src_names is None or dst_names is None:
        return None
    sizes = tuple(src.devices.sizes) + tuple(dst.devices.sizes)
    out: list[OrderCost] = []
    for platform in ctx.reordered_on(src, dst):
        found: Optional[OrderCost] = None
        every_topology_moves, seen = True, False
        for model in ctx.devices.models(sizes):
            if model.platform != platform:
                continue
            a, b = ctx.devices.run(src.devices.fn, model), ctx.devices.run(dst.devices.fn, model)
            if a is None or b is None or sorted(a.flat) != sorted(b.flat) or a.flat == b.flat:
                continue  # not this pair's reordering on this topology
            held, need = pieces(a, src_names, held_spec), pieces(b, dst_names, need_spec)
            own = _own(a, src_names, held_spec, b, dst_names, need_spec)
            moving = receiving(held, need) if held is not None and need is not None else None
            if moving is None or held is None or need is None or own is None:
                return None
            seen = True
            # Only devices that would keep what they hold on the array's own mesh: where
            # the spec's change moves the data anyway, the order adds nothing.
            cost = {d for d in moving if d in own and inside(own[d], held[d])}
            if not cost:
                every_topology_moves = False
            elif found is None or len(need) < found.devices:
                found = OrderCost(platform, len(cost), len(need))
        if found is None:
            out.append(OrderCost(platform, 0, 0, seen))
        else:  # moves on some topologies of the platform only: not decided there
            out.append(found if every_topology_moves else OrderCost(platform, found.moved, found.devices, False))
    return out
