"""The comparison: what the static analysis says at each transfer site against what
the concrete runs did there.

Kinds of finding (``Finding.kind``):

- ``false_positive``: a static ``crossing`` where every run that reached the site shows
  the same placement on both sides (or host data on the source side);
- ``wrong_verdict``: a static ``same_devices`` or ``host_data`` where a run shows a
  crossing (a committed array and a target on another device set or order);
- ``wrong_claim``: a diagnostic whose message claims an effect the run contradicts
  (RSH201: the device sets differ; RSH202: the per-device shard indices change; RSH203:
  JAX raised "incompatible devices" there; RSH204: the same devices in another order;
  RSH301 and RSH305: the array spans the simulated processes);
- ``fix_failed``: an offered fix whose program raises something new, or whose transfer
  still crosses;
- ``miss``: a concrete crossing the analysis left ``unresolved`` (a figure, not a failure).

Processes are simulated: with the 8 CPU devices split into 2 or 4 contiguous blocks (as
JAX enumerates CPU processes), device id ``i`` belongs to process ``i // (8 // n)``.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Iterable

N_DEVICES = 8
CROSSING = ("reordered", "different")
FAILURES = ("false_positive", "wrong_verdict", "wrong_claim", "fix_failed")
# static kind -> the concrete APIs (and which part of the record) that make the site
KIND_APIS = {
    "device_put": ("device_put",),
    "to_device": ("to_device",),
    "jit_in": ("jit",),
    "jit_out": ("jit",),
    "constraint": ("with_sharding_constraint",),
    "reshard": ("reshard",),
    "asarray": ("asarray",),
    "binop": ("binop",),
    "local_data": ("make_array_from_process_local_data",),
    "host_to_global": ("host_local_array_to_global_array",),
}


@dataclass
class Finding:
    kind: str
    path: str
    line: int
    col: int
    site_kind: str
    verdict: str
    detail: str
    codes: list[str] = field(default_factory=list)
    program: str = ""
    cause: str = ""

    def key(self, base: str = "") -> tuple:
        p = self.path[len(base):].lstrip("/") if base and self.path.startswith(base) else self.path
        return (p, self.line, self.kind)


def processes(ids: Iterable[int], n: int) -> set[int]:
    block = N_DEVICES // n
    return {int(i) // block for i in ids}


_BUILT = re.compile(r"built at ([\w/.\-]+:\d+)|\(([\w/.\-]+\.py:\d+),|\(line (\d+),")


def cause(detail: str) -> str:
    """A triage tag for a wrong verdict: both sides built at one place (one factory line
    called with different devices), or other."""
    places = [a or b or c for a, b, c in _BUILT.findall(detail.split(" || ")[0])]
    if len(places) >= 2 and places[0] == places[1]:
        return "both meshes built at one line (a factory called with different devices)"
    return "other"


def relation(src: dict, dst: dict) -> str:
    k = src.get("k")
    if k in ("host", "uncommitted"):
        return "host"
    if dst.get("k") == "none":
        return "same"
    sd, dd = src.get("devices"), dst.get("devices")
    if not sd or not dd or dst.get("k") in ("unknown", "spec-without-mesh"):
        return "unknown"
    if list(sd) == list(dd):
        return "same"
    if sorted(sd) == sorted(dd):
        return "reordered"
    return "different"


def indices_change(src: dict, dst: dict) -> bool | None:
    a, b = src.get("indices"), dst.get("indices")
    if not a or not b:
        return None
    return any(a.get(d) != b.get(d) for d in a)


def _inside(need: list, held: list) -> bool:
    return all(h[0] <= n[0] and n[1] <= h[1] for n, h in zip(need, held))


def order_moves(src: dict, dst: dict, own: dict | None) -> bool | None:
    """Some device must receive a piece (its target piece is not inside the one it holds)
    where the same spec on the array's own mesh needs nothing new on it; None when
    the run did not record the pieces."""
    a, b = src.get("indices"), dst.get("indices")
    if not a or not b or not own:
        return None
    return any(not _inside(b[d], a.get(d, [])) and d in own and _inside(own[d], a.get(d, [])) for d in b)


@dataclass
class Observed:
    """What the runs did at one site (all records, all platforms)."""

    relations: Counter = field(default_factory=Counter)
    platforms: dict = field(default_factory=lambda: defaultdict(set))
    errors: list = field(default_factory=list)
    index_changes: list = field(default_factory=list)  # for reordered pairs
    order_moves: list = field(default_factory=list)  # for reordered pairs: order_moves()
    spans: list = field(default_factory=list)  # (src processes 2, 4) for fetches and device targets
    pairs: list = field(default_factory=list)  # (platform, pair record)
    records: int = 0

    def add(self, rel: str, platform: str, src: dict | None = None, dst: dict | None = None,
            own: dict | None = None) -> None:
        self.relations[rel] += 1
        self.platforms[platform].add(rel)
        if rel == "reordered" and src is not None and dst is not None:
            self.index_changes.append(indices_change(src, dst))
            self.order_moves.append(order_moves(src, dst, own))

    @property
    def crossing(self) -> bool:
        return any(self.relations[r] for r in CROSSING)

    def summary(self) -> str:
        rels = ", ".join(f"{k} x{v}" for k, v in sorted(self.relations.items()))
        plats = "; ".join(f"{p}: {'/'.join(sorted(r))}" for p, r in sorted(self.platforms.items()))
        err = f"; raised {self.errors[0]}" if self.errors else ""
        return f"{rels} ({plats}){err}"


def _observe(records: list[tuple[str, dict]], kind: str) -> Observed:
    obs = Observed()
    for plat, rec in records:
        obs.records += 1
        obs.pairs += [(plat, p) for p in rec.get("pairs", [])]
        if plat in PARTIAL:
            continue  # a partial simulation: read for the process claims only
        if rec.get("error"):
            obs.errors.append(rec["error"])
        if kind == "jit_out":
            for out in rec.get("outs", []):
                for src in out.get("srcs", []):
                    obs.add(relation(src, out["dst"]), plat)
            continue
        for p in rec.get("pairs", []):
            src, dst = p["src"], p["dst"]
            obs.add(relation(src, dst), plat, src, dst, p.get("own"))
            if src.get("k") == "array" and src.get("devices"):
                obs.spans.append((len(processes(src["devices"], 2)), len(processes(src["devices"], 4)),
                                  src.get("indices"), src.get("shape")))
    return obs


def _fully_replicated(src_indices: dict | None, shape: list | None) -> bool:
    if not src_indices or shape is None:
        return False
    full = [[0, n, 1] for n in shape]
    return all(v == full for v in src_indices.values())


def check_claim(code: str, obs: Observed, kind: str) -> str | None:
    """None when the run agrees with what the message claims, else what it did."""
    rels = obs.relations
    if code == "RSH201":
        if not rels["different"]:
            return f"RSH201 claims different device sets; the runs show {obs.summary()}"
    elif code == "RSH202":
        if not rels["reordered"]:
            return f"RSH202 claims the same devices in another order; the runs show {obs.summary()}"
        if not any(c for c in obs.index_changes):
            return f"RSH202 claims shards are permuted; no device's shard index changes ({obs.summary()})"
        recorded = [m for m in obs.order_moves if m is not None]
        if recorded and not any(recorded):
            return ("RSH202 claims the order moves pieces the array's own mesh would keep in place; "
                    f"no device receives such a piece ({obs.summary()})")
    elif code == "RSH203":
        if not obs.crossing:
            return f"RSH203 claims another set or order; the runs show {obs.summary()}"
        if not obs.errors:
            return f"RSH203 claims JAX raises ('Received incompatible devices'); nothing raised ({obs.summary()})"
    elif code == "RSH204":
        if not rels["reordered"]:
            return f"RSH204 claims a reordering of the argument's devices; the runs show {obs.summary()}"
    elif code == "RSH301":
        if not any(s[0] > 1 for s in obs.spans):
            return f"RSH301 claims a global array; it lives on one simulated process of 2 ({obs.summary()})"
    elif code in ("RSH302", "RSH303", "RSH304", "RSH306"):
        if not any(_process_claim(code, plat, p) for plat, p in obs.pairs):
            return f"{code} claims a move between a process's own devices and others; no run shows one " \
                   f"(2 simulated processes; {obs.summary()})"
    return None


def _current_process(plat: str) -> int:
    """The process a run played: 1 for ``proc1of2``, k for a real job's ``mc<N>-p<k>``
    (tests/oracle/mc.py), else 0."""
    real = re.fullmatch(r"mc\d+-p(\d+)", plat)
    if real:
        return int(real.group(1))
    return 1 if plat == "proc1of2" else 0


def _process_claim(code: str, plat: str, pair: dict) -> bool:
    src, dst = pair["src"], pair["dst"]
    sp = processes(src.get("devices") or [], 2)
    dp = processes(dst.get("devices") or [], 2)
    if code == "RSH302":
        return src.get("k") == "array" and len(sp) == 1 and len(dp) > 1
    if code == "RSH303":
        return src.get("k") == "array" and len(sp) > 1 and len(dp) == 1
    if code == "RSH304":
        return len(dp) == 1
    if code == "RSH306":
        # A Device target, or one placing the result on a single device (a jitted call's
        # out_shardings=SingleDeviceSharding(d): RSH306 whatever the array).
        one = dst.get("k") == "device" or len(dst.get("devices") or []) == 1
        return one and dp != {_current_process(plat)}
    return False


# Simulated process 1 of 2: jax.local_devices() and jax.process_index() change, but
# what JAX computes (addressable shards, x.addressable_data) is still one process's:
# its placements are read only for the RSH3xx process claims, never for verdicts.
PARTIAL = ("proc1of2",)
SITE_CODES = ("RSH2", "RSH3")
CHECKED_CODES = ("RSH201", "RSH202", "RSH203", "RSH204", "RSH301", "RSH302", "RSH303", "RSH304", "RSH305",
                 "RSH306")
# A message that says the order differs only on another platform or topology than the
# 8 CPU devices (and their TPU builder orders) can show.
PLATFORM_CLAUSES = ("on multi-host TPU", "on GPU", "on multi-process GPU", "on TPU")


def compare(coverage: dict, diags: list[dict], concrete: dict[str, dict[str, dict]],
            programs_of: dict[str, str] | None = None) -> dict:
    """``concrete`` is {platform: {program id: result}}; returns findings and figures."""
    by_key: dict[tuple, list] = defaultdict(list)
    by_line: dict[tuple, list] = defaultdict(list)
    fetches: dict[tuple, list] = defaultdict(list)
    statuses: Counter = Counter()
    status_of: dict[str, str] = {}
    not_runnable: list = []
    for plat, results in concrete.items():
        for pid, res in results.items():
            if plat == "cpu":
                statuses[res["status"]] += 1
                status_of[pid] = res["status"]
                if res["status"] != "ok" and not res.get("sites"):
                    not_runnable.append((pid, res["error"][:160]))
            for rec in res.get("sites", []):
                k = (rec["path"], rec["line"], rec["col"])
                by_key[k].append((plat, rec))
                by_line[(rec["path"], rec["line"])].append((plat, rec))
                if rec["api"] in ("device_get", "np.asarray", "np.array"):
                    fetches[(rec["path"], rec["line"])].append((plat, rec))
    diag_at: dict[tuple, list] = defaultdict(list)
    for d in diags:
        diag_at[(d["filename"], d["location"]["row"], d["location"]["column"])].append(d)

    findings: list[Finding] = []
    unverified: list[str] = []
    raised_resolved: list[str] = []
    figures: Counter = Counter()
    misses: Counter = Counter()
    missed: list[str] = []  # each missed site with its reason and culprit, to read the programs
    matched_keys = set()
    for site in coverage.get("site_list", []):
        path, line, col, kind, verdict = site["path"], site["line"], site["col"], site["kind"], site["verdict"]
        apis = KIND_APIS.get(kind, ())
        recs = [(p, r) for p, r in by_key.get((path, line, col), []) if r["api"] in apis]
        if not recs:  # the same line, the same API, one call only
            cand = [(p, r) for p, r in by_line.get((path, line), []) if r["api"] in apis]
            if len({(r["col"]) for _, r in cand}) == 1:
                recs = cand
        figures["sites"] += 1
        figures[f"static_{verdict}"] += 1
        if not recs:
            figures["unreached"] += 1
            continue
        for _, r in recs:
            matched_keys.add((r["path"], r["line"], r["col"]))
        figures["reached"] += 1
        figures[f"reached_{verdict}"] += 1
        obs = _observe(recs, kind)
        codes = [d["code"] for d in diag_at.get((path, line, col), []) if d["code"].startswith(SITE_CODES)]
        f = None
        if verdict == "crossing":
            figures["crossing_reached"] += 1
            moves = [c for c in codes if c.startswith("RSH2")]
            if moves and obs.relations and set(obs.relations) <= {"same", "host"}:
                if any(w in site["detail"] for w in PLATFORM_CLAUSES):
                    # an order that differs on a topology the 8 CPU devices cannot show
                    figures["unverified_platform"] += 1
                    unverified.append(f"{path}:{line}:{col} {','.join(codes)}: {obs.summary()}")
                else:
                    f = Finding("false_positive", path, line, col, kind, verdict,
                                f"{site['detail'][:200]} || runs: {obs.summary()}", codes)
            elif obs.crossing or not moves:
                for code in codes:
                    if code not in CHECKED_CODES:
                        figures[f"claim_unchecked_{code}"] += 1
                        continue
                    why = check_claim(code, obs, kind)
                    if why:
                        findings.append(Finding("wrong_claim", path, line, col, kind, verdict, why, [code]))
        elif verdict in ("same_devices", "host_data"):
            if obs.errors:
                # JAX raised at a site the analysis calls harmless (a figure: the error
                # may be another one than a crossing's, e.g. Auto against Explicit axes)
                figures["raised_at_resolved_site"] += 1
                raised_resolved.append(f"{path}:{line}:{col} {verdict}: {obs.errors[0][:200]}")
            if obs.crossing:
                f = Finding("wrong_verdict", path, line, col, kind, verdict,
                            f"{site['detail'][:200]} || runs: {obs.summary()}", cause=cause(site["detail"]))
        elif verdict == "same_pieces":
            # the same devices in another order that moves nothing the own mesh would keep:
            # wrong if a run shows other devices, or a device receiving such a piece
            if obs.relations["different"] or any(m for m in obs.order_moves if m):
                f = Finding("wrong_verdict", path, line, col, kind, verdict,
                            f"{site['detail'][:200]} || runs: {obs.summary()}", cause=cause(site["detail"]))
        elif verdict == "unresolved":
            if obs.crossing:
                figures["misses"] += 1
                misses[site["detail"]] += 1
                missed.append(f"{path}:{line}:{col} {kind}: {site['detail']}: {site.get('culprit', '')}")
        if f:
            findings.append(f)
        if obs.crossing:
            figures["concrete_crossing"] += 1
    # fetches: RSH305 claims the array spans processes (and is not replicated)
    for d in diags:
        if d["code"] != "RSH305":
            continue
        recs = fetches.get((d["filename"], d["location"]["row"]), [])
        if not recs:
            continue
        obs = _observe(recs, "fetch")
        if not any(s[0] > 1 and not _fully_replicated(s[2], s[3]) for s in obs.spans):
            findings.append(Finding("wrong_claim", d["filename"], d["location"]["row"], d["location"]["column"],
                                    "fetch", "crossing", f"RSH305 claims a fetch of an array split across "
                                    f"processes; the runs fetch {obs.summary()}", ["RSH305"]))
    # RSH203 and RSH204 diagnostics away from a transfer site (operations under a context
    # mesh): confirmed where a run raised at that line; otherwise the line may not have
    # run (the oracle does not trace lines), so they are counted, not judged.
    site_keys = {(x["path"], x["line"], x["col"]) for x in coverage.get("site_list", [])}
    raised_at: dict[tuple, str] = {}
    for plat, results in concrete.items():
        if plat in PARTIAL:
            continue
        for res in results.values():
            if res.get("error_at"):
                raised_at[(res["error_at"][0], res["error_at"][1])] = res["error"]
            for rec in res.get("sites", []):
                if rec.get("error"):
                    raised_at.setdefault((rec["path"], rec["line"]), rec["error"])
    unconfirmed = []
    for d in diags:
        k = (d["filename"], d["location"]["row"], d["location"]["column"])
        if d["code"] not in ("RSH203", "RSH204") or k in site_keys:
            continue
        if (k[0], k[1]) in raised_at:
            figures["nonsite_claims_confirmed"] += 1
        else:
            figures["nonsite_claims_unconfirmed"] += 1
            unconfirmed.append(f"{k[0]}:{k[1]}:{k[2]} {d['code']}")
    causes = Counter(f.cause for f in findings if f.kind == "wrong_verdict")
    extra = Counter(r["api"] for k, recs in by_key.items() if k not in matched_keys for _, r in recs[:1])
    unmatched = sorted(f"{k[0]}:{k[1]}:{k[2]} {recs[0][1]['api']}" for k, recs in by_key.items()
                       if k not in matched_keys and recs[0][1]["api"] in ("device_put", "with_sharding_constraint"))
    return {
        "findings": [asdict(f) for f in findings],
        "figures": dict(figures),
        "misses_by_reason": dict(misses.most_common()),
        "missed_sites": missed,
        "unverified_platform": unverified,
        "wrong_verdict_causes": dict(causes),
        "nonsite_claims_unconfirmed": unconfirmed,
        "raised_at_resolved_site": raised_resolved,
        "program_status": dict(statuses),
        "status_of": status_of,
        "not_runnable": not_runnable,
        "concrete_sites_without_static_site": dict(extra),
        "unmatched_puts": unmatched,
    }


def line_map(old: str, new: str) -> dict[int, int]:
    """Old line number -> new line number, for lines a fix kept or changed in place."""
    a, b = old.splitlines(), new.splitlines()
    out = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for k in range(i2 - i1):
                out[i1 + k + 1] = j1 + k + 1
    return out
