"""A move between two meshes judged on every platform the project targets. Imports jax.

The run has one device order (this CPU's, or the simulated platform's), but the project's
meshes are built by code whose order depends on the platform: on TPU ``jax.make_mesh`` and
``mesh_utils.create_device_mesh`` order the chips by their coordinates and the requested
shape, on GPU by id, on CPU as given; a list sorted by id is enumeration order on CPU and
not on multi-host TPU. Two meshes that agree here can order the same devices differently
there, and a move between them then permutes shards (RSH202) on that platform only.

So each mesh the program builds is given a *placement* per catalogue topology
(runtime/platforms.py) of the run's device count: which of that topology's devices (its
position in that platform's ``jax.devices()``) sits where each device of this run sits.

- a builder's mesh: JAX's own builder is run on the topology's device descriptions (as
  ``_platform_patch`` does for a simulated platform) with the same shape and arguments;
  only a builder over all of the job's devices (or its default) is followed: on a subset
  the set itself depends on how the list was made;
- ``Mesh(devices, ...)`` of the user's code: from how the list was made (``_recipes``): a
  positional list keeps its positions everywhere, an id-sorted one is each platform's id
  order; ``Mesh`` over a builder's array (or a view of it: ``.reshape``, ``.T``, a mesh's
  ``.devices``) keeps that array's placement;
- anything else is unknown. A mesh object is interned by JAX (same devices, names and axis
  types: one object), so one built twice with two different placements is unknown too.

A move whose two meshes have the same devices in the same order on this run, and different
orders that move data on *every* catalogue topology of a target platform, is reported
(RSH202, warned or raised as ``reorder`` says) naming that platform and the topologies. Every
topology, not some: a platform whose topologies disagree (TPU v5e 2x4 gives every shape of 8
chips one order, TPU v4 2x2x2 does not) makes no claim, as the linter does (docs/platforms.md).
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from types import FrameType
from typing import Any, Sequence

import numpy as np
from jax._src import mesh_utils as _mesh_utils
from jax._src import xla_bridge as _xb
from jax.sharding import NamedSharding

from . import _checks, _jit, _recipes
from ._checks import Finding, ids
from ._format import fmt_ids
from ._order import order_moves_at
from ._where import from_library
from .platforms import CATALOGUE, Platform

_FAMILY_NAMES = {"tpu": "TPU", "gpu": "GPU", "cpu": "CPU"}
_V5E_KINDS = ("TPU v5 lite", "TPU v5e")
_MESH_FIX = "build the target on x's mesh: NamedSharding(x.sharding.mesh, spec)"


@dataclass(frozen=True, eq=False)
class Placement:
    """Where each device of this run sits on each catalogue topology: ``at[name][device]``
    is that topology's position (None: unknown there); ``how`` says who ordered it."""

    how: str
    at: dict[str, dict[Any, int] | None]


_UNKNOWN = Placement("unknown", {})
# Mesh -> its placement (_UNKNOWN when built twice with different ones): JAX interns meshes
# weakly, so they can go.
_meshes: "weakref.WeakKeyDictionary[Any, Placement]" = weakref.WeakKeyDictionary()
# id(owner ndarray) -> (the owner, its placement): builders' results and meshes' device
# arrays, so that Mesh(...) over them or a view of them (.reshape, .T) keeps the placement.
_arrays: dict[int, tuple["weakref.ref[Any]", Placement]] = {}


def forget() -> None:
    """A new program. Meshes keep their placements (they are facts about how they were
    built, and JAX keeps the objects across programs)."""
    _recipes.forget()


@functools.lru_cache(maxsize=8)
def _positions(platform: str) -> dict[Any, int]:
    return {d: i for i, d in enumerate(_xb.devices(platform))}


@functools.lru_cache(maxsize=16)
def topologies(family: str, size: int) -> tuple[Platform, ...]:
    """The catalogue's topologies of a platform family with ``size`` devices."""
    return tuple(p for p in CATALOGUE.values()
                 if p.devices and p.devices[0].platform == family and p.size == size)


def _every_topology(size: int) -> tuple[Platform, ...]:
    return tuple(p for family in _FAMILY_NAMES for p in topologies(family, size))


def _owner(array: Any) -> Any:
    base = getattr(array, "base", None)
    return base if isinstance(base, np.ndarray) else array


def _tag(array: Any, placement: Placement) -> None:
    owner = _owner(array)
    if len(_arrays) > 4096:
        _arrays.clear()
    try:
        _arrays[id(owner)] = (weakref.ref(owner), placement)
    except TypeError:  # not weak-referenceable: leave it untagged
        pass


def _tagged(array: Any) -> Placement | None:
    if not isinstance(array, np.ndarray):
        return None
    owner = _owner(array)
    found = _arrays.get(id(owner))
    if found is None or found[0]() is not owner:
        return None
    return found[1]


# --------------------------------------------------------------------------- builders

@functools.lru_cache(maxsize=256)
def _built_on(shape: tuple[int, ...], given: tuple[int, ...], options: tuple[tuple[str, Any], ...],
              make_mesh: bool) -> dict[str, tuple[int, ...] | None]:
    """JAX's builder on each catalogue topology of ``len(given)`` devices, handed that
    topology's devices at the positions ``given``: the positions of its result, flattened
    (None where JAX refuses the shape there)."""
    out: dict[str, tuple[int, ...] | None] = {}
    builder = _mesh_utils.create_device_mesh
    original = getattr(builder, "__wrapped__", builder)  # strict mode's wrapper: JAX's own
    for topo in _every_topology(len(given)):
        kwargs = dict(options)
        if make_mesh and topo.devices[0].device_kind in _V5E_KINDS:
            kwargs["allow_split_physical_axes"] = True  # what jax.make_mesh asks for on v5e
        index = {d: i for i, d in enumerate(topo.devices)}
        try:
            built = original(shape, [topo.devices[p] for p in given], **kwargs)
            out[topo.name] = tuple(index[s] for s in np.asarray(built).flat)
        except Exception:  # the shape does not fit this topology: unknown there
            out[topo.name] = None
    return out


def note_builder(shape: Sequence[int], devices: Sequence[Any] | None, options: dict[str, Any],
                 built: Any, caller: FrameType) -> None:
    """After ``create_device_mesh(shape, devices, **options)`` (``jax.make_mesh`` calls it)
    returned ``built``: tag it with its placement on every topology."""
    try:
        flat = list(np.asarray(built).flat)
        run = _positions(flat[0].platform)
        everything = list(_xb.devices(flat[0].platform))
        given = everything if devices is None else list(devices)
        if len(given) != len(run) or set(given) != set(run):
            return  # a subset: which devices it holds there depends on how it was made
        shape_key = tuple(int(s) for s in shape)
        options_key = tuple(sorted(options.items()))
        hash(options_key)
    except Exception:
        return
    from_make_mesh = caller.f_code.co_name == "make_mesh" and from_library(caller)
    placed = _built_on(shape_key, tuple(run[d] for d in given), options_key, from_make_mesh)
    at: dict[str, dict[Any, int] | None] = {
        name: dict(zip(flat, positions)) if positions is not None else None
        for name, positions in placed.items()}
    spelled = "jax.make_mesh" if from_make_mesh else "create_device_mesh"
    _tag(built, Placement(f"{spelled}({shape_key})", at))


# --------------------------------------------------------------------------- meshes


def _is_devices(func: Any, frame: FrameType) -> bool:
    """``jax.devices`` (however imported), evaluated in the frame."""
    parts: list[str] = []
    node = func
    while hasattr(node, "attr") and hasattr(node, "value"):
        parts.append(node.attr)
        node = node.value
    name = getattr(node, "id", None)
    if name is None:
        return False
    value = frame.f_locals.get(name, frame.f_globals.get(name))
    for attr in reversed(parts):
        value = getattr(value, attr, None)
    return getattr(value, "__name__", None) == "devices" and \
        (getattr(value, "__module__", "") or "").startswith("jax")


def _from_recipe(flat: list[Any], recipe: str) -> Placement | None:
    run = _positions(flat[0].platform)
    if not all(d in run for d in flat):
        return None
    here = [run[d] for d in flat]
    at: dict[str, dict[Any, int] | None] = {}
    for topo in _every_topology(len(run)):
        if recipe == _recipes.POSITIONAL:
            at[topo.name] = dict(zip(flat, here))
        else:  # the same devices, in that platform's id order
            order = sorted(here, key=lambda p: topo.devices[p].id)
            at[topo.name] = dict(zip(flat, order))
    return Placement("", at)


def note_mesh(mesh: Any, devices: Any, caller: FrameType) -> None:
    """After ``Mesh(devices, ...)`` returned ``mesh``: remember its placement."""
    placement = _tagged(devices)
    if placement is None and (from_library(caller)
                              or caller.f_globals.get("__name__", "").startswith("reshard_lint.")):
        # JAX's own code (or strict mode's) making a mesh it was not given a builder's array
        # for: the user's meshes it re-makes keep what they are; a new one is unknown.
        try:
            _meshes.setdefault(mesh, _UNKNOWN)
        except TypeError:  # not weak-referenceable: nothing to remember
            pass
        return
    if placement is None:
        recipe = _recipes.mesh_recipe(caller, _is_devices)
        if recipe is not None:
            try:
                flat = list(np.asarray(devices, dtype=object).flat)
                found = _from_recipe(flat, recipe[0]) if flat and hasattr(flat[0], "platform") else None
            except Exception:
                found = None
            if found is not None:
                how = f"sorted by id ({recipe[1]})" if recipe[0] == _recipes.ID_SORTED \
                    else f"positions of jax.devices() ({recipe[1]})"
                placement = Placement(how, found.at)
    placement = placement or _UNKNOWN
    known = _meshes.get(mesh)
    if known is not None and known is not placement and known.at != placement.at:
        placement = _UNKNOWN  # one object, two placements: which one a sharding meant is unknown
        if known is not _UNKNOWN:
            _checks.forget_verdicts()  # verdicts made with the placement it had
    try:
        _meshes[mesh] = placement
    except TypeError:
        return
    if placement is not _UNKNOWN:
        _tag(mesh.devices, placement)


# --------------------------------------------------------------------------- the move


def _quoted(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _effect(moved: tuple[int, ...], total: int) -> str:
    if min(moved) == total:
        return "every shard is permuted (about a full copy, over the network across hosts)"
    count = str(min(moved)) if min(moved) == max(moved) else f"{min(moved)} to {max(moved)}"
    return (f"{count} of the {total} devices receive a shard (over the network across hosts) that "
            "the same spec on x's mesh leaves in place")


Claims = list[tuple[str, list[tuple[Platform, Any]]]]  # (family, [(topology, what cost said)])


def _differ(src: Any, dst: Any, targets: tuple[str, ...],
            cost: Any) -> tuple[Placement, Placement, Claims, str] | None:
    """The target platforms on every catalogue topology of which the two shardings' meshes,
    one order on this run, order the same devices differently and ``cost(s_pos, t_pos)``
    says something (None: nothing there): (x's placement, the target's, the platforms with
    what each topology said, an example topology's two orders)."""
    if not (isinstance(src, NamedSharding) and isinstance(dst, NamedSharding)):
        return None
    sm, tm = src.mesh, dst.mesh
    if sm is tm:
        return None
    left, right = _meshes.get(sm), _meshes.get(tm)
    if left is None or right is None or left is _UNKNOWN or right is _UNKNOWN:
        return None
    s_flat, t_flat = list(sm.devices.flat), list(tm.devices.flat)
    if s_flat != t_flat:
        return None  # another order (or set) on this run: this run's own check judges it
    claims: Claims = []
    example = ""
    for family in targets:
        results: list[tuple[Platform, Any]] = []
        for topo in topologies(family, len(s_flat)):
            s_at, t_at = left.at.get(topo.name), right.at.get(topo.name)
            if s_at is None or t_at is None:
                break
            s_pos, t_pos = [s_at[d] for d in s_flat], [t_at[d] for d in t_flat]
            if set(s_pos) != set(t_pos) or s_pos == t_pos:
                break
            try:
                said = cost(s_pos, t_pos)
            except Exception:
                break
            if said is None:
                break
            results.append((topo, said))
            if not example:
                example = (f" (on {topo.name}, {topo.description}: x's mesh holds devices "
                           f"{fmt_ids([topo.devices[p].id for p in s_pos])}, the target "
                           f"{fmt_ids([topo.devices[p].id for p in t_pos])})")
        else:
            if results:
                claims.append((family, results))
    if not claims:
        return None
    return left, right, claims, example


def _platforms_named(family: str, results: list[tuple[Platform, Any]]) -> str:
    return f"on {_FAMILY_NAMES[family]} ({', '.join(t.name for t, _ in results)})"


def finding(src: Any, dst: Any, ndim: int, targets: tuple[str, ...]) -> Finding | None:
    """RSH202 for a move between two meshes that agree on this run and order the same
    devices differently, moving data, on every catalogue topology of a target platform."""
    found = _differ(src, dst, targets, lambda s_pos, t_pos: order_moves_at(src, dst, ndim, s_pos, t_pos))
    if found is None:
        return None
    left, right, claims, example = found
    said = "; ".join(
        f"{_platforms_named(family, results)} the two meshes order the same devices differently, "
        f"so jax permutes shards: {_effect(tuple(c[0] for _, c in results), results[0][1][1])}"
        for family, results in claims)
    s_ids = ids(src.mesh.devices.flat)
    # str.format fills in {what} later: the source text quoted here keeps its braces.
    detail = (f"moves {{what}} from devices {fmt_ids(s_ids)} to {fmt_ids(s_ids)}: "
              f"{_quoted(said + example)}; x's mesh is ordered by {_quoted(left.how)}, the "
              f"target's by {_quoted(right.how)}, which agree on this run; {_MESH_FIX}")
    return Finding("RSH202", s_ids, s_ids, detail)


def jit_finding(src: Any, dst: Any, ndim: int, targets: tuple[str, ...]) -> Finding | None:
    """RSH204 for an argument whose mesh and in_sharding's agree on this run and order the
    same devices differently on every catalogue topology of a target platform."""
    effect = _jit.reorder_effect(src, dst, ndim)
    if effect is None:
        return None
    found = _differ(src, dst, targets, lambda s_pos, t_pos: True)
    if found is None:
        return None
    left, right, claims, example = found
    said = "; ".join(f"{_platforms_named(family, results)} the argument's mesh and the "
                     f"in_sharding's order the same devices differently" for family, results in claims)
    s_ids = ids(src.mesh.devices.flat)
    detail = (f"takes {{what}} on devices {fmt_ids(s_ids)} through in_shardings on the same "
              f"devices: {_quoted(said + example)}; the argument's mesh is ordered by "
              f"{_quoted(left.how)}, the in_sharding's by {_quoted(right.how)}, which agree on "
              f"this run; there {_quoted(effect)}")
    return Finding("RSH204", s_ids, s_ids, detail)
