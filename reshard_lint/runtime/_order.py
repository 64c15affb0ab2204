"""What a move between two orders of the same devices makes move, on real shardings.

The runtime side of RSH202's placement semantics (reshard_lint/analysis/shard_indices.py
on the static side): JAX's own ``devices_indices_map`` gives each device's piece of the
array before and after; a device receives bytes when its new piece is not inside the
one it holds; the order is to blame for those that the same spec on the array's own mesh
would have left in place. The array's dimensions are taken as the device count each,
which every spec that fits the mesh divides, so the pieces depend on the layout only.
"""

from __future__ import annotations

from typing import Any, Sequence

from jax.sharding import NamedSharding


def _spans(index: Any, n: int) -> tuple[tuple[int, int], ...]:
    return tuple(s.indices(n)[:2] for s in index)


def _inside(need: tuple[tuple[int, int], ...], held: tuple[tuple[int, int], ...]) -> bool:
    return all(h0 <= a and b <= h1 for (a, b), (h0, h1) in zip(need, held))


def _by_position(s: NamedSharding, n: int, ndim: int) -> list[tuple[tuple[int, int], ...]]:
    index = s.devices_indices_map((n,) * ndim)
    return [_spans(index[d], n) for d in s.mesh.devices.flat]


def _own(src: NamedSharding, dst: NamedSharding, ndim: int) -> NamedSharding | None:
    """The target's spec on x's own mesh (by axis name, whatever the sizes); else x's own
    sharding when the two lay the array out alike position by position (the move only
    reorders it); else None: the spec's change is the move, not the order."""
    used: set[str] = set()
    for entry in dst.spec:
        if entry is None:
            continue
        used.update((entry,) if isinstance(entry, str) else tuple(entry))
    sm, tm = src.mesh, dst.mesh
    if used <= set(sm.axis_names):
        return NamedSharding(sm, dst.spec)
    n = sm.devices.size
    if n == tm.devices.size and _by_position(src, n, ndim) == _by_position(dst, n, ndim):
        return src
    return None


def _pair(src: Any, dst: Any, ndim: int) -> tuple[Any, int] | None:
    """(the target's spec on x's own mesh, the target's device count), or None where the
    order cannot be to blame; raises for shardings this cannot read."""
    if not (isinstance(src, NamedSharding) and isinstance(dst, NamedSharding)):
        raise TypeError("not two NamedShardings")
    own = _own(src, dst, ndim)
    return None if own is None else (own, dst.mesh.devices.size)


def order_moves(src: Any, dst: Any, ndim: int) -> tuple[int, int] | None:
    """(devices the order makes receive a piece, devices), or None when it makes none;
    raises for shardings this cannot read (the caller keeps its coarser test)."""
    pair = _pair(src, dst, ndim)
    if pair is None:
        return None
    own, n = pair
    shape = (n,) * ndim
    held = {d.id: _spans(i, n) for d, i in src.devices_indices_map(shape).items()}
    need = {d.id: _spans(i, n) for d, i in dst.devices_indices_map(shape).items()}
    kept = {d.id: _spans(i, n) for d, i in own.devices_indices_map(shape).items()}
    moved = 0
    for d, piece in need.items():
        # the order is to blame where the same spec on x's mesh needs nothing new
        if not _inside(piece, held[d]) and d in kept and _inside(kept[d], held[d]):
            moved += 1
    return (moved, len(need)) if moved else None


def order_moves_at(src: Any, dst: Any, ndim: int, src_at: Sequence[int],
                   dst_at: Sequence[int]) -> tuple[int, int] | None:
    """``order_moves`` with the two meshes' devices placed elsewhere: the device in slot i of
    x's mesh is ``src_at[i]``, of the target's ``dst_at[i]`` (another platform's order of the
    same devices, as positions). The pieces each slot holds are the shardings' own; only
    which device sits in the slot changes. Raises as ``order_moves`` does."""
    pair = _pair(src, dst, ndim)
    if pair is None:
        return None
    own, n = pair
    held = dict(zip(src_at, _by_position(src, n, ndim)))
    kept = dict(zip(src_at, _by_position(own, n, ndim)))
    need = dict(zip(dst_at, _by_position(dst, n, ndim)))
    moved = sum(1 for d, piece in need.items()
                if d in held and not _inside(piece, held[d]) and _inside(kept[d], held[d]))
    return (moved, len(need)) if moved else None
