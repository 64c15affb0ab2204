"""What ``reshard-lint explain`` draws: the two meshes behind a diagnostic, per platform.

Everything comes from the analysis's own results: the engine's observer hands over each
transfer event with the diagnostic anchored at its call (as ``reshard-lint coverage``
reads them), ``crossing.pairs`` lines the moved array up with its target, and each
mesh's device list is evaluated on the model topologies of every target platform
(analysis/devices.py). No syntax node is walked here: positions and labels come from the
analysis context's ``at`` and ``analysis.render``'s ``mesh_label``/``describe_mesh``,
axis names from ``analysis.partition.axis_names``, the layout from the recorded spec
(``render.spec_label``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from .shards import Piece, label, parse_spec, pieces, positions

PLATFORM_TITLES = {"tpu": "multi-host TPU", "gpu": "GPU", "cpu": "CPU"}
# The device counts a picture prefers, after the ones the program spells out: small
# enough to read, the model's smallest multi-host size.
_PREFERRED_COUNTS = (8, 16, 64)
# What a device's mark says, for both renderers.
MOVES = "moves"
ABSENT = "absent"


@dataclass(frozen=True)
class Side:
    role: str  # "source" (the array's mesh) or "target"
    label: str  # 'mesh', or the call that made an unnamed mesh
    description: str  # describe_mesh: "'mesh' (line 19, jax.devices())"
    names: Optional[tuple[str, ...]]  # axis names when spelled as literals
    spec: Optional[str]  # the PartitionSpec's text, when known


@dataclass(frozen=True)
class Grid:
    shape: tuple[int, ...]
    ids: tuple[int, ...]  # row-major, as the mesh's device array holds them
    shards: tuple[str, ...]  # the piece each position holds (shards.label)
    marks: tuple[str, ...]  # "", MOVES or ABSENT, per position
    split: tuple[int, ...] = ()  # blocks per array dimension; () replicated

    @property
    def shard_count(self) -> str:
        """``8 shards``, ``2 × 4 shards``, or that every device holds the whole array."""
        if not any(n > 1 for n in self.split):
            return "the whole array on each device"
        return " × ".join(str(n) for n in self.split) + " shards"


@dataclass(frozen=True)
class Panel:
    """Two grids on one topology, for every platform (layout) that draws them alike."""

    kinds: tuple[tuple[str, str], ...]  # (platform title, what the analysis concluded there)
    scope: str  # which topologies decided: "" (all of them) or " of 8 devices"
    topology: str  # "8 devices, 2 processes of 4"
    source: Grid
    target: Grid
    moved: int  # devices in both meshes whose shard differs
    absent: int  # devices in one mesh only
    note: str = ""  # a caveat about what the drawing stands for

    @property
    def title(self) -> str:
        titles = [t for t, _ in self.kinds]
        if "GPU (ids by process)" in titles and "GPU (ids by topology)" in titles:
            # Both numberings draw alike: the numbering does not matter here.
            titles[titles.index("GPU (ids by process)")] = "GPU"
            titles.remove("GPU (ids by topology)")
        return ", ".join(titles)

    @property
    def verdict(self) -> str:
        return verdict_text(self.kinds, self.scope)


@dataclass(frozen=True)
class Explanation:
    path: str
    line: int
    col: int  # 0-based, as the diagnostic has it
    code: str
    message: str
    source: Side
    target: Side
    panels: tuple[Panel, ...]
    same_on: tuple[str, ...]  # platform titles where both orders agree on the drawn topology
    by_position: bool  # layout unknown: a device's shard is taken as its mesh position


@dataclass
class Outcome:
    """What explain found at a line: pictures, and for each diagnostic it could not draw, why."""

    explanations: list[Explanation] = field(default_factory=list)
    undrawn: list[tuple[str, int, str]] = field(default_factory=list)  # (code, line, why)
    diagnostic_lines: list[int] = field(default_factory=list)  # every line with a diagnostic
    error: Optional[str] = None  # the file could not be parsed


def explain_source(source: str, path: str, line: int, settings: Mapping[str, object]) -> Outcome:
    """Pictures of the meshes behind each diagnostic that covers ``line`` (1-based)."""
    from ...engine.engine import check_source, engine_for

    out = Outcome()
    seen: list[tuple[Any, list[Any], Mapping[int, Any]]] = []

    def observe(ctx: Any, transfers: list[Any], anchored: Mapping[int, Any]) -> None:
        seen.append((ctx, list(transfers), dict(anchored)))

    try:
        # The whole file, without the gate: the diagnostics and the events behind them.
        diagnostics = check_source(source, path, engine=engine_for(settings), imported=frozenset(), gate=False,
                                   slicing=False, observer=observe, raise_errors=True).diagnostics
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        out.error = f"could not parse the file: {type(exc).__name__}: {exc}"
        return out
    out.diagnostic_lines = sorted({d.line for d in diagnostics})
    if not seen:
        return out
    ctx, transfers, anchored = seen[0]
    at_line = [d for d in diagnostics if d.line <= line <= max(d.line, d.end_line)]
    for diag in at_line:
        events = [ev for ev in transfers if anchored.get(id(ev.node)) == diag]
        explained = None
        for ev in events:
            explained = _explain_event(ctx, ev, diag)
            if explained is not None:
                break
        if explained is None:
            out.undrawn.append((diag.code, diag.line, _why_not(diag, events)))
        else:
            out.explanations.append(explained)
    return out


def _why_not(diag: Any, events: Sequence[Any]) -> str:
    from ...analysis.values import DevVal
    from ...rules.helpers.crossing import pairs

    if not events:
        return (f"this {diag.code} is not a transfer between two meshes; explain draws the two meshes "
                "of a device_put, a jit sharding, a constraint or an operation (RSH201-RSH204)")
    found = [pair for ev in events for pair in pairs(ev)]
    if found and all(isinstance(p.target, DevVal) for p in found):
        return "the target is one device, not a mesh: there is no second grid to draw"
    return "the analysis does not know both meshes of this transfer on any model topology"


# Which comparison each crossing rule reports: the pair it flagged among a pytree's leaves.
_WANTED = {"RSH201": ("different",), "RSH202": ("reordered",), "RSH204": ("reordered",)}


def _explain_event(ctx: Any, event: Any, diag: Any) -> Optional[Explanation]:
    from ...rules.helpers.crossing import pairs

    candidates = []
    for pair in pairs(event):
        if pair.src is None or pair.dst is None:
            continue
        verdict = ctx.compare(pair.src, pair.dst)
        if verdict != "same":
            candidates.append((verdict not in _WANTED.get(diag.code, (verdict,)), pair))
    for _, pair in sorted(candidates, key=lambda c: c[0]):
        explained = _explain_pair(ctx, pair, diag)
        if explained is not None:
            return explained
    return None


def _side(ctx: Any, role: str, mesh: Any, sharding: Any, layout_known: bool) -> Side:
    from ...analysis.render import describe_mesh, mesh_label, spec_label
    from ...analysis.partition import axis_names

    spec = getattr(sharding, "spec", None)
    return Side(role, mesh_label(ctx, mesh, 40), describe_mesh(ctx, mesh), axis_names(mesh),
                spec_label(spec) if spec is not None and layout_known else None)


def _explain_pair(ctx: Any, pair: Any, diag: Any) -> Optional[Explanation]:
    from ...analysis.values import ShardingVal

    target_sharding = pair.target if isinstance(pair.target, ShardingVal) else None
    # A computed array's layout is not known (ArrayVal.derived): only its mesh is.
    source = _side(ctx, "source", pair.src, pair.array.sharding, not pair.array.derived)
    target = _side(ctx, "target", pair.dst, target_sharding, True)
    src_fn, dst_fn = pair.src.devices.fn, pair.dst.devices.fn
    sizes = tuple(pair.src.devices.sizes) + tuple(pair.dst.devices.sizes)
    verdicts, scope = _verdicts(ctx, src_fn, dst_fn, sizes)
    from ...analysis.devices import layouts

    drawn: list[tuple[Any, Any, Any]] = []  # (model, source DevArr, target DevArr)
    for platform, scattered in layouts(ctx.platforms):
        picked = _pick(ctx, src_fn, dst_fn, sizes, platform, scattered)
        if picked is not None:
            drawn.append(picked)
    if not drawn:
        return None
    by_position = False
    panels: list[Panel] = []
    same_on: list[str] = []
    gpu_layouts = sum(1 for m, _, _ in drawn if m.platform == "gpu")
    for model, a, b in drawn:
        title = PLATFORM_TITLES[model.platform]
        if model.platform == "gpu" and gpu_layouts > 1:
            title += " (ids by topology)" if model.scattered else " (ids by process)"
        if a.flat == b.flat:
            same_on.append(title)
            continue
        pa = pieces(a.shape, source.names, parse_spec(source.spec))
        pb = pieces(b.shape, target.names, parse_spec(target.spec))
        if pa is None or pb is None:
            pa, pb, by_position = positions(a.shape), positions(b.shape), True
        panel = _panel(model, title, verdicts.get(model.platform, set()), scope, a, b, pa, pb, pair)
        panels.append(panel)
    panels = _merge_alike(panels)
    if "GPU (ids by process)" in same_on and "GPU (ids by topology)" in same_on:
        same_on[same_on.index("GPU (ids by process)")] = "GPU"
        same_on.remove("GPU (ids by topology)")
    return Explanation(ctx.path, diag.line, diag.col, diag.code, diag.message, source, target,
                       tuple(panels), tuple(same_on), by_position)


def _pick(ctx: Any, src_fn: Any, dst_fn: Any, sizes: Sequence[int], platform: str,
          scattered: bool) -> Optional[tuple[Any, Any, Any]]:
    """The topology a platform is drawn on: a device count the program spells out, else
    the smallest of the model's; hosts of four devices; seen from process 0."""
    spelled = sorted({s for s in sizes if 2 <= s <= 4096})
    order = {n: i for i, n in enumerate(spelled + [n for n in _PREFERRED_COUNTS if n not in spelled])}
    models = [m for m in ctx.devices.models(sizes) if m.platform == platform and m.scattered == scattered]
    models.sort(key=lambda m: (order.get(m.n, len(order) + m.n), m.per_process != 4, m.per_process, m.proc))
    for m in models:
        a, b = ctx.devices.run(src_fn, m), ctx.devices.run(dst_fn, m)
        # (Not a set whose order the analysis does not know: there is no order to draw.)
        if a is not None and b is not None and a.flat and b.flat and not a.order and not b.order:
            return m, a, b
    return None


def _verdict_kind(found: set[str]) -> str:
    if found in ({"reordered"}, {"different"}):
        return next(iter(found))
    return "undecided" if found else "uncompared"


def verdict_text(kinds: Sequence[tuple[str, str]], scope: str = "") -> str:
    """What the analysis concluded, grouping the titles that share a conclusion:
    ``kinds`` is (title, kind) per drawn platform."""
    groups: dict[str, list[str]] = {}
    for title, kind in kinds:
        groups.setdefault(kind, []).append(title)
    every = "on every {} topology" + scope + " the analysis tries"
    say = {"reordered": "the same devices in another order " + every,
           "different": "other devices " + every,
           "undecided": "not decided on {} (its topologies disagree): no claim there",
           "uncompared": "not compared on {}"}
    return "; ".join(say[k].format(" and ".join(dict.fromkeys(t.split(" (")[0] for t in ts)))
                     for k, ts in groups.items())


def _verdicts(ctx: Any, src_fn: Any, dst_fn: Any, sizes: Sequence[int]) -> tuple[dict[str, set[str]], str]:
    """The verdicts per platform as the analysis decides them: on the device counts the
    program spells out when those decide (``make_mesh((8,), ...)`` is written for eight
    devices: on sixty-four it is a subset), else on every topology; and how to say which."""
    spelled = sorted({s for s in sizes if 2 <= s <= 4096})
    if spelled:
        found = ctx.devices.by_platform(src_fn, dst_fn, sizes, spelled)
        if any(v in ({"reordered"}, {"different"}) for v in found.values()):
            return found, f" of {' or '.join(map(str, spelled))} devices"
    return ctx.devices.by_platform(src_fn, dst_fn, sizes), ""


def _panel(model: Any, title: str, found: set[str], scope: str, a: Any, b: Any,
           pa: list[Piece], pb: list[Piece], pair: Any) -> Panel:
    held_a = dict(zip(a.flat, pa))
    held_b = dict(zip(b.flat, pb))

    def marks(ids: Sequence[int], mine: dict[int, Piece], other: dict[int, Piece]) -> tuple[str, ...]:
        return tuple(ABSENT if d not in other else MOVES if mine[d] != other[d] else "" for d in ids)

    moved = sum(1 for d in held_a if d in held_b and held_a[d] != held_b[d])
    absent = len(set(held_a) ^ set(held_b))
    note = ""
    if model.platform == "tpu" and "builder" in (pair.src.devices.order_by, pair.dst.devices.order_by):
        note = ("the TPU builder order drawn is the model's stand-in (one fixed permutation per mesh "
                "shape); JAX orders by the chips' coordinates, so the claim is that the two orders "
                "differ, not these ids (docs/platforms.md)")
    a_ids, b_ids = _shown_ids(a.flat, b.flat)
    return Panel(
        ((title, _verdict_kind(found)),), scope,
        f"{model.n} devices, {model.processes} processes of {model.per_process}",
        Grid(a.shape, a_ids, tuple(label(p) for p in pa), marks(a.flat, held_a, held_b), _split(pa)),
        Grid(b.shape, b_ids, tuple(label(p) for p in pb), marks(b.flat, held_b, held_a), _split(pb)),
        moved, absent, note)


# The model numbers the devices of a platform named in the code (jax.devices('cpu')) from
# a base of its own, so that two platforms never share an id (analysis/devices.py).
_PLATFORM_ID_BASE = 100_000


def _shown_ids(a: Sequence[int], b: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids as a user would see them: without the model's platform base when both
    meshes are on one named platform (100003 is device 3 of jax.devices('cpu'))."""
    bases = {d // _PLATFORM_ID_BASE for d in (*a, *b)}
    if len(bases) != 1:
        return tuple(a), tuple(b)
    base = bases.pop() * _PLATFORM_ID_BASE
    return tuple(d - base for d in a), tuple(d - base for d in b)


def _split(held: list[Piece]) -> tuple[int, ...]:
    return tuple(blocks for _, blocks in held[0]) if held else ()


def _merge_alike(panels: list[Panel]) -> list[Panel]:
    """One panel for the platforms that draw the same two grids (a reordering written in
    the code looks the same wherever enumeration is the same)."""
    out: list[Panel] = []
    for p in panels:
        at = next((i for i, q in enumerate(out)
                   if (q.source, q.target, q.topology) == (p.source, p.target, p.topology)), None)
        if at is None:
            out.append(p)
        else:
            q = out[at]
            out[at] = Panel(q.kinds + p.kinds, q.scope, q.topology, q.source, q.target, q.moved, q.absent,
                            q.note or p.note)
    return out
