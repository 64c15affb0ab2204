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

from typing import Any, Mapping, Optional, Sequence

from .figures import explain_figure
from .shapes import (ABSENT, MOVE_LEGEND, MOVES, PLATFORM_TITLES, PREFERRED_COUNTS, Explanation, Grid,
                     Outcome, Panel, Side, merge_alike, shown_ids, verdict_text)
from .shards import Piece, label, parse_spec, pieces, positions

__all__ = ["ABSENT", "MOVES", "Explanation", "Grid", "Outcome", "Panel", "Side", "explain_source",
           "verdict_text"]


def explain_source(source: str, path: str, line: int, settings: Mapping[str, object]) -> Outcome:
    """Pictures of the meshes behind each diagnostic that covers ``line`` (1-based)."""
    from ...engine.engine import check_source, engine_for

    out = Outcome()
    seen: list[tuple[Any, list[Any], Mapping[int, Any]]] = []

    def observe(ctx: Any, transfers: list[Any], anchored: Mapping[int, Any]) -> None:
        seen.append((ctx, list(transfers), dict(anchored)))

    try:
        # The whole file, without the gate: the diagnostics and the events behind them.
        diagnostics = check_source(source, path, engine=engine_for(settings), imported=frozenset(),
                                   gate=False, slicing=False, observer=observe, raise_errors=True).diagnostics
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        out.error = f"could not parse the file: {type(exc).__name__}: {exc}"
        return out
    out.diagnostic_lines = sorted({d.line for d in diagnostics})
    if not seen:
        return out
    ctx, transfers, anchored = seen[0]
    # A call of another module's function is reported through the transfer it runs there
    # (Transfer.through); constructions, fetches and context operations are events of their own.
    observed = [*transfers, *ctx.relayed_transfers, *ctx.other_events]
    at_line = [d for d in diagnostics if d.line <= line <= max(d.line, d.end_line)]
    for diag in at_line:
        events = [ev for ev in observed if anchored.get(id(ev.node)) == diag]
        explained = None
        for ev in events:
            if type(ev).__name__ == "Transfer" and not diag.code.startswith("RSH3"):
                explained = _explain_event(ctx, ev, diag)
            if explained is None:
                explained = explain_figure(ctx, ev, diag)
            if explained is not None:
                break
        if explained is None:
            out.undrawn.append((diag.code, diag.line, _why_not(diag, events)))
        else:
            out.explanations.append(explained)
    return out


def _why_not(diag: Any, events: Sequence[Any]) -> str:
    if not events:
        return f"the analysis recorded no mesh or device list behind this {diag.code}"
    if all(type(ev).__name__ in ("MeshBuilt", "ShardingBuilt") for ev in events):
        # list(arr.devices()) of an array of unknown origin: the finding rests on how the
        # list was made (from a set), not on which devices it holds.
        return ("the analysis does not know which devices this mesh holds on any model topology: "
                "the finding rests on how its device list was made")
    return "the analysis does not know the devices of both sides on any model topology"


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
    panels = merge_alike(panels)
    if "GPU (ids by process)" in same_on and "GPU (ids by topology)" in same_on:
        same_on[same_on.index("GPU (ids by process)")] = "GPU"
        same_on.remove("GPU (ids by topology)")
    return Explanation(ctx.path, diag.line, diag.col, diag.code, diag.message, source, target,
                       tuple(panels), tuple(same_on), by_position, MOVE_LEGEND)


def _pick(ctx: Any, src_fn: Any, dst_fn: Any, sizes: Sequence[int], platform: str,
          scattered: bool) -> Optional[tuple[Any, Any, Any]]:
    """The topology a platform is drawn on: a device count the program spells out, else
    the smallest of the model's; hosts of four devices; seen from process 0."""
    spelled = sorted({s for s in sizes if 2 <= s <= 4096})
    order = {n: i for i, n in enumerate(spelled + [n for n in PREFERRED_COUNTS if n not in spelled])}
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
    a_ids, b_ids = shown_ids(a.flat, b.flat)
    return Panel(
        ((title, _verdict_kind(found)),), scope,
        f"{model.n} devices, {model.processes} processes of {model.per_process}",
        Grid(a.shape, a_ids, tuple(label(p) for p in pa), marks(a.flat, held_a, held_b), _split(pa)),
        Grid(b.shape, b_ids, tuple(label(p) for p in pb), marks(b.flat, held_b, held_a), _split(pb)),
        moved, absent, note)


def _split(held: list[Piece]) -> tuple[int, ...]:
    return tuple(blocks for _, blocks in held[0]) if held else ()
