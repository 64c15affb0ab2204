"""What ``explain`` draws for a diagnostic that is not a move between two laid-out meshes.

Every RSH1xx and RSH3xx finding, and RSH203 under a context mesh, is about one mesh or
device list set against another list of devices; each is drawn as two grids per
platform, from the analysis's own values evaluated on its model topologies
(analysis/devices.py), as the moves are (gather.py):

* a construction (RSH101, RSH102: the ``MeshBuilt`` event; RSH103: the device list
  handed to ``NamedSharding``, as the ``Mesh`` its fix wraps it in): the same devices in
  ``jax.devices()`` order, reshaped to the mesh's shape, beside the order it is built in.
  ``jax.devices()`` enumerates process by process, which on multi-host TPU is not id
  order, so each platform has its own natural order;
* a device id used as a position (RSH104): the devices by id beside what
  ``jax.devices()[k]`` picks for each ``k``;
* where the data is and which process can reach it (RSH3xx): both sides, each cell
  naming the process that owns the device, marked where the drawn process does not own
  it; drawn from a process the finding fails on (RSH306: one that does not own the
  device; otherwise process 0). Host data, an array whose devices are not known, and
  code that places its results whatever its operands (a ``Placement``: RSH306) are
  drawn as the job's list beside the device, the side saying which. A gather (RSH308)
  is drawn as a fetch;
* a mesh shaped by this process's device count (RSH307: a ``BuilderShape``): the
  devices laid out beside the first as many as the shape holds, seen from a process
  that owns none of those;
* two device lists that meet (RSH203 under ``jax.set_mesh``, a move whose layout is not
  known): marked where a device is in one of them only or at another position.

Each cell's second line is the process that owns the device on the drawn topology.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional, Sequence

from .shapes import (ABSENT, MOVES, PLATFORM_TITLES, PREFERRED_COUNTS, Explanation, Grid, Panel, Side,
                     merge_alike)

ORDER_LEGEND = "* at another position than in jax.devices() order   pN the process that owns the device"
INDEX_LEGEND = "* jax.devices()[k] is not the device with id k   pN the process that owns the device"
OWNER_LEGEND = "! a device the drawn process does not own   pN the process that owns the device"
MEET_LEGEND = ("* at another position than in the other list   ! in one of the two lists only   "
               "pN the process that owns the device")

_BASE = 100_000  # the model's id range per named platform (analysis/devices.py)


def explain_figure(ctx: Any, event: Any, diag: Any) -> Optional[Explanation]:
    """The figure of ``event``, the event ``diag`` is anchored at; None when the analysis
    does not know the devices of both sides on any model topology."""
    kind = type(event).__name__
    if kind == "MeshBuilt":
        built = _mesh_side(ctx, "built", event.mesh)
        return _order(ctx, diag, event.mesh.devices, built, _shuffle_note(event))
    if kind == "ShardingBuilt":
        from ...analysis.values import DevVal

        first = event.first
        if isinstance(first, DevVal) and not first.single:
            side = Side("built", ctx.code(event.first_node, 40),
                        f"{ctx.code(event.first_node, 60)} ({ctx.at(event.first_node)}, {first.desc}), "
                        "as the Mesh the fix wraps it in", None, None)
            return _order(ctx, diag, first, side, _shuffle_note(event))
        return None
    if kind == "IdAsIndex":
        return _index(ctx, diag, event)
    if kind in ("Fetch", "Gather"):
        # A gather reads the array on every process as a fetch does: drawn alike.
        return _fetch(ctx, diag, event)
    if kind == "BuilderShape":
        return _builder(ctx, diag, event)
    if kind == "ContextOp":
        return _context(ctx, diag, event)
    if kind == "Transfer":
        return _transfer(ctx, diag, event)
    if kind == "Placement":
        return _placement(ctx, diag, event)
    return None


# -- the sides --------------------------------------------------------------------------

def _mesh_side(ctx: Any, role: str, mesh: Any) -> Side:
    from ...analysis.render import describe_mesh, mesh_label
    from ...analysis.partition import axis_names

    return Side(role, mesh_label(ctx, mesh, 40), describe_mesh(ctx, mesh), axis_names(mesh), None)


def _devices_of(value: Any) -> Any:
    """The device list (DevVal) a value is on: a mesh's, a sharding's, an array's; None."""
    from ...analysis.values import ArrayVal, DevVal, MeshContextVal, MeshVal, ShardingVal

    if isinstance(value, ArrayVal):
        value = value.sharding
    if isinstance(value, MeshContextVal):
        value = value.mesh
    if isinstance(value, ShardingVal):
        value = value.mesh if value.mesh is not None else value.device
    if isinstance(value, MeshVal):
        return value.devices
    return value if isinstance(value, DevVal) else None


def _side_of(ctx: Any, role: str, value: Any, devs: Any) -> Side:
    from ...analysis.values import ArrayVal, MeshContextVal, MeshVal, ShardingVal

    mesh = value
    if isinstance(mesh, ArrayVal):
        mesh = mesh.sharding
    if isinstance(mesh, MeshContextVal):
        mesh = mesh.mesh
    if isinstance(mesh, ShardingVal):
        mesh = mesh.mesh
    if isinstance(mesh, MeshVal):
        return _mesh_side(ctx, role, mesh)
    where = f"{ctx.at(devs.node)}, " if devs.node is not None else ""
    return Side(role, devs.desc if len(devs.desc) <= 40 else devs.desc[:39] + "…", f"{where}{devs.desc}"
                .rstrip(", "), None, None)


def _shuffle_note(event: Any) -> str:
    devs = event.mesh.devices if hasattr(event, "mesh") else event.first
    shuffle = getattr(devs, "shuffle", None)
    if shuffle is not None and not shuffle.agreed:
        return ("the shuffled order drawn is one fixed permutation, the model's stand-in: with no seed "
                "shared by all processes, each process builds its own order")
    return ""


# -- the figures ------------------------------------------------------------------------

def _natural_fn(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The devices ``fn`` gives, in ``jax.devices()`` order, in the same shape."""
    from ...analysis.devarray import DevArr

    def natural(model: Any) -> Any:
        arr = fn(model)
        position = {d: i for i, d in enumerate(model.enumeration())}
        ids = sorted(arr.flat, key=lambda d: (d // _BASE, position.get(d % _BASE, d % _BASE)))
        return DevArr(tuple(ids), arr.shape, arr.is_list)
    return natural


def _order(ctx: Any, diag: Any, devs: Any, built: Side, note: str) -> Optional[Explanation]:
    natural = Side("natural", "jax.devices() order", "the same devices in the order jax.devices() lists "
                   "them, in the mesh's shape", built.names, None)

    def summary(p: Panel) -> str:
        n = len(p.target.ids)
        if not p.moved:
            return f"The mesh keeps jax.devices() order here: {n} devices, none at another position."
        return (f"{p.moved} of the {n} devices sit at another position than in jax.devices() order: an "
                "array laid out alike on this mesh and on a natural-order one puts another shard on each.")

    return _figure(ctx, diag, natural, built, _natural_fn(devs.fn), devs.fn, devs.sizes, "moved",
                   ORDER_LEGEND, summary, note=note, note_for=_builder_note(devs),
                   said=lambda p: f"the order jax.devices() gives on {_platforms(p)}, and the order built")


def _index(ctx: Any, diag: Any, event: Any) -> Optional[Explanation]:
    from ...analysis.devarray import DevArr

    devs = event.devices
    listed = Side("position k:", f"{ctx.code(event.base_node, 30)}[k]",
                  f"{devs.desc} ({ctx.at(event.base_node)}), indexed by position", None, None)
    by_id = Side("id k:", "the device with id k", f"the same devices by id: what {event.index.desc} "
                 f"({ctx.at(event.index.node)}) names", None, None)

    def by_id_fn(model: Any) -> Any:
        arr = devs.fn(model)
        return DevArr(tuple(sorted(arr.flat)), (len(arr.flat),), True)

    def flat(model: Any) -> Any:
        arr = devs.fn(model)
        return DevArr(tuple(arr.flat), (len(arr.flat),), True)

    def summary(p: Panel) -> str:
        if not p.moved:
            return ("Ids are positions here (one process, or ids in enumeration order): the index picks the "
                    "device with that id.")
        return (f"For {p.moved} of the {len(p.target.ids)} positions k, jax.devices()[k] is another "
                "device than id k.")

    note = ("multi-process CPU numbers process p's devices from p * 2048 (the model numbers them "
            "0 ... N-1): there an id past the first process's devices raises IndexError")
    return _figure(ctx, diag, by_id, listed, by_id_fn, flat, devs.sizes, "moved", INDEX_LEGEND, summary,
                   note_for=lambda platform: note if platform == "cpu" else "",
                   said=lambda p: f"device ids and positions on {_platforms(p)}")


def _fetch(ctx: Any, diag: Any, event: Any) -> Optional[Explanation]:
    from ...analysis.devices import local

    devs = _devices_of(event.value)
    if devs is None:
        return None
    here = Side("this process", "jax.local_devices()", "the devices the process reading the value owns",
                None, None)
    return _owners(ctx, diag, _side_of(ctx, "array", event.value, devs), here, devs.fn,
                   lambda m: local(m), devs.sizes)


def _context(ctx: Any, diag: Any, event: Any) -> Optional[Explanation]:
    other = event.array if event.array is not None else event.target
    a, b = _devices_of(event.context), _devices_of(other)
    if a is None or b is None:
        return None
    context = _side_of(ctx, "context mesh", event.context, a)
    meets = _side_of(ctx, "array" if event.array is not None else "target", other, b)
    return _meet(ctx, diag, context, meets, a, b)


def _transfer(ctx: Any, diag: Any, event: Any) -> Optional[Explanation]:
    from ...analysis.devarray import DevArr
    from ...analysis.devices import natural
    from ...analysis.models.host import is_host

    target = _devices_of(event.target)
    if target is not None:
        dst = _side_of(ctx, "target", event.target, target)
        dst_fn, dst_sizes = target.fn, tuple(target.sizes)
    elif event.untargeted and diag.code.startswith("RSH3"):
        # device_put(x) with no target: JAX's default device, the first of jax.devices().
        dst = Side("target", "jax.devices()[0]", "the default device: the first of jax.devices()", None, None)
        dst_fn, dst_sizes = (lambda m: DevArr.of(natural(m).flat[:1])), ()
    else:
        return None
    source = _devices_of(event.value)
    if source is not None:
        src = _side_of(ctx, "source", event.value, source)
        src_fn, sizes = source.fn, tuple(source.sizes) + dst_sizes
    elif diag.code.startswith("RSH3"):
        # Host data, or an array whose devices are not known: the finding is about the
        # target's devices alone; drawn beside the job's devices of the same platform.
        what = "host data" if is_host(event.value) else "an array whose devices the analysis does not know"
        src, src_fn = _job(dst_fn, f"{what} (drawn: every process's devices, the global list)")
        sizes = dst_sizes
    else:
        return None
    if diag.code.startswith("RSH3"):
        return _owners(ctx, diag, src, dst, src_fn, dst_fn, sizes, not_owning=diag.code == "RSH306")
    return None if target is None else _meet(ctx, diag, src, dst, source, target)


# What a placement puts on its device, whatever the operands are (events.Placement).
_PLACED = {
    "context": "where the block puts what it computes from no committed array",
    "jit_out": "where the jitted call puts its result, whatever its operands",
    "keyword": "where the array is made",
}


def _placement(ctx: Any, diag: Any, event: Any) -> Optional[Explanation]:
    """Code that places its results on one device (RSH306): no array moves, so the device
    is drawn beside the job's devices of its platform, seen from a process not owning it."""
    device = event.device
    spelled = event.target_node if event.target_node is not None else device.node
    where = f"{ctx.at(spelled)}, " if spelled is not None else ""
    dst = Side("target", device.desc if len(device.desc) <= 40 else device.desc[:39] + "…",
               f"{where}{device.desc}: {_PLACED.get(event.kind, 'where the results are placed')}", None, None)
    src, src_fn = _job(device.fn, "no array moves here (drawn: every process's devices, the global list)")
    return _owners(ctx, diag, src, dst, src_fn, device.fn, tuple(device.sizes),
                   not_owning=diag.code == "RSH306")


def _job(dst_fn: Callable[[Any], Any], said: str) -> tuple[Side, Callable[[Any], Any]]:
    """The left side when the array's devices are not drawn: ``jax.devices()`` of the
    target's platform, with what the array side is."""
    from ...analysis.devices import natural

    def src_fn(model: Any) -> Any:
        first = dst_fn(model).flat
        return natural(model, _platform_of(first[0]) if first else None)
    return Side("job", "jax.devices()", said, None, None), src_fn


def _builder(ctx: Any, diag: Any, event: Any) -> Optional[Explanation]:
    """A builder shaped by a count (RSH307): the devices it lays out beside the first as
    many as the shape holds, which ``jax.make_mesh`` takes (``create_device_mesh`` raises
    instead), seen from a process that owns none of those."""
    from ...analysis.devarray import DevArr

    def taken(model: Any) -> Any:
        return DevArr.of(event.devices(model).flat[:event.size(model)])

    laid = Side("laid out", "every process's devices", f"the devices {event.spelled}(...) lays out",
                None, None)
    built = ("what jax.make_mesh builds" if not event.exact
             else "what make_mesh would take; create_device_mesh raises instead")
    first = Side("shape", "the first of them", f"as many devices as the shape holds (this process's count): "
                 f"{built}", None, None)
    return _owners(ctx, diag, laid, first, event.devices, taken, event.sizes, not_owning=True)


def _builder_note(*devs: Any) -> Callable[[str], str]:
    """On TPU, a builder's order is the model's stand-in (gather._panel says the same)."""
    def note(platform: str) -> str:
        if platform == "tpu" and any(getattr(d, "order_by", "") == "builder" for d in devs):
            return ("the TPU builder order drawn is the model's stand-in (one fixed permutation per mesh "
                    "shape); JAX orders by the chips' coordinates (docs/platforms.md)")
        return ""
    return note


def _platform_of(device_id: int) -> Optional[str]:
    return {1: "cpu", 2: "gpu", 3: "tpu"}.get(device_id // _BASE)


def _meet(ctx: Any, diag: Any, a_side: Side, b_side: Side, a: Any, b: Any) -> Optional[Explanation]:
    def summary(p: Panel) -> str:
        parts = []
        if p.absent:
            parts.append(f"{p.absent} of the devices {'is' if p.absent == 1 else 'are'} in one list only")
        if p.moved:
            parts.append(f"{p.moved} sit at another position")
        return ("; ".join(parts) or "The two lists hold the same devices in the same order here") + "."
    return _figure(ctx, diag, a_side, b_side, a.fn, b.fn, tuple(a.sizes) + tuple(b.sizes), "meet",
                   MEET_LEGEND, summary, said=lambda p: f"the two device lists on {_platforms(p)}",
                   note_for=_builder_note(a, b))


def _owners(ctx: Any, diag: Any, a_side: Side, b_side: Side, a_fn: Any, b_fn: Any, sizes: Sequence[int],
            not_owning: bool = False) -> Optional[Explanation]:
    def summary(p: Panel) -> str:
        proc = p.topology.rsplit("process ", 1)[-1]
        a_out = sum(1 for m in p.source.marks if m == ABSENT)
        b_out = sum(1 for m in p.target.marks if m == ABSENT)
        return (f"Process {proc} does not own {a_out} of the {_count(len(p.source.ids))} on the left "
                f"and {b_out} of the {_count(len(p.target.ids))} on the right.")
    return _figure(ctx, diag, a_side, b_side, a_fn, b_fn, sizes, "owners", OWNER_LEGEND, summary,
                   not_owning=b_fn if not_owning else None,
                   said=lambda p: f"where the devices are, on {_platforms(p)}, seen from the process named")


# -- drawing ----------------------------------------------------------------------------

def _count(n: int) -> str:
    return f"{n} device{'s' * (n != 1)}"


def _platforms(panel: Panel) -> str:
    return " and ".join(dict.fromkeys(t.split(" (")[0] for t, _ in panel.kinds))


def _figure(ctx: Any, diag: Any, a_side: Side, b_side: Side, a_fn: Any, b_fn: Any, sizes: Sequence[int],
            marking: str, legend: str, summary: Callable[[Panel], str], *, said: Callable[[Panel], str],
            note: str = "", note_for: Callable[[str], str] = lambda platform: "",
            not_owning: Any = None) -> Optional[Explanation]:
    from ...analysis.devices import layouts

    panels: list[Panel] = []
    gpu_layouts = sum(1 for platform, _ in layouts(ctx.platforms) if platform == "gpu")
    for platform, scattered in layouts(ctx.platforms):
        picked = _pick(ctx, a_fn, b_fn, sizes, platform, scattered, marking == "owners", not_owning)
        if picked is None:
            continue
        model, a, b = picked
        title = PLATFORM_TITLES[platform]
        if platform == "gpu" and gpu_layouts > 1:
            title += " (ids by topology)" if scattered else " (ids by process)"
        panels.append(_panel(model, title, a, b, marking, note or note_for(platform)))
    if not panels:
        return None
    panels = [replace(p, said=said(p), summary_text=summary(p)) for p in merge_alike(panels)]
    return Explanation(ctx.path, diag.line, diag.col, diag.code, diag.message, a_side, b_side,
                       tuple(panels), (), False, legend, move=False)


def _pick(ctx: Any, a_fn: Any, b_fn: Any, sizes: Sequence[int], platform: str, scattered: bool,
          several_processes: bool, not_owning: Any) -> Optional[tuple[Any, Any, Any]]:
    """The topology drawn, as for a move (gather._pick): a count the program spells, else
    the smallest model's; hosts of four; process 0, or for ``not_owning`` a process that
    does not own that list's devices."""
    spelled = sorted({s for s in sizes if 2 <= s <= 4096})
    order = {n: i for i, n in enumerate(spelled + [n for n in PREFERRED_COUNTS if n not in spelled])}
    models = [m for m in ctx.devices.models(sizes) if m.platform == platform and m.scattered == scattered]
    models.sort(key=lambda m: (order.get(m.n, len(order) + m.n), m.per_process != 4, m.per_process, m.proc))
    for m in models:
        a, b = ctx.devices.run(a_fn, m), ctx.devices.run(b_fn, m)
        if a is None or b is None or not a.flat or not b.flat or a.order or b.order:
            continue
        if not_owning is not None and all(m.process_of(d) == m.proc for d in b.flat):
            continue
        return m, a, b
    return None


def _panel(model: Any, title: str, a: Any, b: Any, marking: str, note: str) -> Panel:
    def owner(d: int) -> str:
        return f"p{model.process_of(d)}"

    if marking == "owners":
        def marks(ids: Sequence[int], other: Sequence[int]) -> tuple[str, ...]:
            return tuple(ABSENT if model.process_of(d) != model.proc else "" for d in ids)
    else:
        # A position is compared only between two arrangements of one set in one shape.
        placed = a.shape == b.shape and set(a.flat) == set(b.flat)

        def marks(ids: Sequence[int], other: Sequence[int]) -> tuple[str, ...]:
            at = {d: i for i, d in enumerate(other)}
            mine = {d: i for i, d in enumerate(ids)}
            return tuple(ABSENT if d not in at else MOVES if placed and at[d] != mine[d] else "" for d in ids)
    a_marks, b_marks = marks(a.flat, b.flat), marks(b.flat, a.flat)
    moved = sum(1 for m in b_marks if m == MOVES)
    absent = len(set(a.flat) ^ set(b.flat))
    # Ids as JAX numbers them: a named platform's (jax.devices('cpu')) without the
    # model's base, which only keeps platforms apart.
    a_ids, b_ids = tuple(d % _BASE for d in a.flat), tuple(d % _BASE for d in b.flat)
    topology = f"{model.n} devices, {model.processes} processes of {model.per_process}"
    if marking == "owners":
        topology += f", seen from process {model.proc}"
    return Panel(
        ((title, "drawn"),), "", topology,
        Grid(a.shape or (len(a.flat),), a_ids, tuple(map(owner, a.flat)), a_marks, (), _count(len(a.flat))),
        Grid(b.shape or (len(b.flat),), b_ids, tuple(map(owner, b.flat)), b_marks, (), _count(len(b.flat))),
        moved, absent, note)
