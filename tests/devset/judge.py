"""What the runs of a development-set project show, against its labels and against
``reshard-lint coverage``.

Labels are judged on the real multi-controller runs (every process's record, from
tests/oracle/mc.py): an item holds when an event of its kind has one of the item's
locations on its user stack (the site's line, or a line that calls the helper holding
it, as the set's README allows):

- ``REORDERED-DEVICES``: a mesh built on every device in another order than ``jax.devices()``;
- ``SUBSET-DEVICES``: a mesh built on part of the devices (a ``jax.local_devices()`` mesh too);
- ``CROSS-MESH-PUT``: a site whose move crosses (another device set, or another order
  that changes some device's piece), a fetch or placement on devices this process does
  not own, or an error or crash there;
- ``NOT-A-MESH``: an ``AttributeError`` or ``TypeError`` raised there.

Every crossing or error that no expected or allowed item covers is a note: a finding
about the labels or the harness. A clean project must run without an error.

Standard library only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tests.oracle import compare as cmp

from .labels import Item, Project, rel

TABLE_HEADER = ("| project | labels | labels seen | real job (per process) | mode | sites reached "
                "| listed by coverage | resolved | wrong | misses by reason |")


def _locs(proj: Project, stack: list) -> set[tuple[str, int]]:
    return {(rel(proj.root, f), int(n)) for f, n in stack or []}


def crossing(site: dict) -> bool:
    """The site moved data across devices, or touched devices its process does not own."""
    if site.get("foreign"):
        return True
    for p in site.get("pairs", []):
        r = cmp.relation(p["src"], p["dst"])
        if r == "different" or (r == "reordered" and cmp.indices_change(p["src"], p["dst"]) is not False):
            return True
    return False


def _error_type(error: str) -> str:
    return error.split(":", 1)[0]


@dataclass
class Events:
    """Every process's meshes, crossing sites and errors, each with its user locations."""

    meshes: list = field(default_factory=list)  # (mesh record, locations)
    sites: list = field(default_factory=list)  # (site record, locations), crossing or raising
    errors: list = field(default_factory=list)  # (process, status, error text, locations)


def events(proj: Project, runs: list[dict]) -> Events:
    ev = Events()
    for rec in runs:
        ev.meshes += [(m, _locs(proj, m.get("stack"))) for m in rec.get("meshes", [])]
        ev.sites += [(s, _locs(proj, s.get("stack"))) for s in rec.get("sites", [])
                     if crossing(s) or s.get("error")]
        if rec["status"] != "ok":
            ev.errors.append((rec.get("process"), rec["status"], rec.get("error", ""),
                              _locs(proj, rec.get("error_stack"))))
    return ev


def seen(item: Item, ev: Events) -> bool:
    """Whether the runs show the item's effect at one of its locations."""
    at = set(item.locs)
    if item.kind == "REORDERED-DEVICES":
        return any(m["full"] and not m["natural"] and at & locs for m, locs in ev.meshes)
    if item.kind == "SUBSET-DEVICES":
        return any(not m["full"] and at & locs for m, locs in ev.meshes)
    if item.kind == "NOT-A-MESH":
        return any(_error_type(err) in ("AttributeError", "TypeError") and at & locs
                   for _, _, err, locs in ev.errors)
    return any(at & locs for _, locs in ev.sites) or any(
        at & locs and (status == "crash" or any(w in err for w in CROSSING_ERRORS))
        for _, status, err, locs in ev.errors)


# What multi-controller JAX raises for a move across device sets or orders (RUNTIME-FACTS.md).
CROSSING_ERRORS = ("same set of devices", "not fully addressable", "represents addressable devices",
                   "does not support cross-host", "Cross-host transfers are not supported",
                   "non-addressable", "incompatible devices", "Buffer passed to Execute",
                   "Invalid host data")


def _kinds_for(error: str) -> tuple[str, ...]:
    """The labels that may cover an error (the set's runtime check reads them so)."""
    if _error_type(error) in ("AttributeError", "TypeError"):
        return ("NOT-A-MESH",)
    return ("CROSS-MESH-PUT", "SUBSET-DEVICES")


def notes(proj: Project, ev: Events) -> list[str]:
    """Errors, crossings and placements on other processes' devices that no label (expected
    or allowed) of a fitting kind covers at their site; any error of a clean project."""
    covering = proj.expected + proj.allowed
    out = []
    for site, locs in ev.sites:
        kinds = _kinds_for(site["error"]) if site.get("error") else ("CROSS-MESH-PUT",)
        if any(i.kind in kinds and set(i.locs) & locs for i in covering):
            continue
        if site.get("error"):
            what = f"raised {site['error'][:120]}"
        elif site.get("foreign") and not any(cmp.relation(p["src"], p["dst"]) in cmp.CROSSING
                                             for p in site.get("pairs", [])):
            what = "placed on, or fetched from, devices of another process only (no error)"
        else:
            what = "crosses devices (no error)"
        out.append(f"{rel(proj.root, site['path'])}:{site['line']} {site['api']}: {what}; no label")
    for pid, status, err, locs in ev.errors:
        if proj.clean or not any(i.kind in _kinds_for(err) and set(i.locs) & locs for i in covering):
            where = ", ".join(f"{f}:{n}" for f, n in sorted(locs)[:3])
            out.append(f"process {pid} {status}: {err[:120]} at {where or '?'}; no label")
    return sorted(set(out))


def row_figures(result: dict) -> dict:
    """One project's figures from compare.compare: sites the runs reached (listed by
    coverage or not), listed, resolved, wrong, misses by reason ('not a site' for a
    reached site coverage does not list)."""
    fig = result["figures"]
    unlisted = result["concrete_sites_without_static_site"]
    listed = fig.get("reached", 0)
    misses = Counter(result["misses_by_reason"])
    for api, n in unlisted.items():
        misses[f"not a site ({api})"] += n
    wrong = sum(1 for f in result["findings"] if f["kind"] in ("wrong_verdict", "false_positive"))
    return {"reached": listed + sum(unlisted.values()), "listed": listed,
            "resolved": listed - fig.get("reached_unresolved", 0), "wrong": wrong,
            "claims": sum(1 for f in result["findings"] if f["kind"] == "wrong_claim"),
            "misses": dict(misses)}


def table_line(name: str, labels: str, seen_text: str, status: str, mode: str, fig: dict) -> str:
    misses = "; ".join(f"{k} {v}" for k, v in sorted(fig["misses"].items())) or "-"
    return (f"| {name} | {labels} | {seen_text} | {status} | {mode} | {fig['reached']} | {fig['listed']} "
            f"| {fig['resolved']} | {fig['wrong']} | {misses} |")
