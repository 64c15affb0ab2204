"""Strict mode against the oracle: does ``rt.enable(processes=2, reorder="raise")`` stop a
program at the line where a multi-host job would fail, and only there?

Each program runs twice, in child processes with 8 CPU devices:

- the oracle's recording run (tests/oracle/child.py), which gives the ground truth: every
  transfer site in execution order with its concrete placements; ``bugs()`` reads from
  them the sites where multi-controller JAX fails or reshuffles (the same notion of a
  crossing as tests/oracle/compare.py, its process claims and its piece-move check);
- the strict run (tests/oracle/strict_child.py): plain JAX under strict mode, which
  records a clean finish, the first ``ReshardError`` (code, file, line) or another
  exception (type, file, line).

Platform modes pair up: the oracle's ``tpu-v4`` (mock TPU v4 2x2x2, 2 hosts) is strict
mode's ``tpu-v4-16``, ``tpu-v5e`` (2x4, 2 hosts) is ``tpu-v5e-8``, ``gpu-scattered`` (ids by
a global topology numbering) is ``gpu-2x4-topology-ids``, ``proc1of2`` is ``process=-1``.
A program that asks which process it is (``local_devices``, ``process_index``,
``process_count``) gets its ground truth from ``proc0of2`` instead of ``cpu``: the plain
CPU run is one process of 8 devices, strict mode's process 0 owns 4.

Standard library only: the children import jax.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from . import compare as cmp
from .run import Program, run_concrete

# oracle platform mode -> (strict mode's simulated platform, the process the run plays)
STRICT_CONFIG: dict[str, tuple[str | None, int]] = {
    "cpu": (None, 0),
    "proc0of2": (None, 0),
    "proc1of2": (None, -1),
    "tpu-v4": ("tpu-v4-16", 0),
    "tpu-v5e": ("tpu-v5e-8", 0),
    "gpu-scattered": ("gpu-2x4-topology-ids", 0),
}
PLATFORM_MODES = ("tpu-v4", "tpu-v5e", "gpu-scattered")
FETCHES = ("device_get", "np.asarray", "np.array")
BLAMED = " (raised by the enclosing jitted call)"
# a reorder with pieces that change where the order's share is unknown: not a bug of the
# ground truth, and a raise there is counted apart (neither a catch nor a false raise)
AMBIGUOUS = "RSH202?"


def modes_of(prog: Program) -> tuple[str, ...]:
    """The oracle modes a program is judged in (from the modes the oracle runs it in,
    ``Program.platforms``): its base mode, ``cpu`` or, for a program that asks for its
    process, ``proc0of2`` (and ``proc1of2``), and the platform modes. A program that asks
    for its process gets no platform modes: the mock platforms do not simulate processes."""
    if "proc1of2" in prog.platforms:
        return ("proc0of2", "proc1of2")
    return ("cpu",) + tuple(m for m in prog.platforms if m in PLATFORM_MODES)


# ---------------------------------------------------------------- the ground truth

@dataclass
class Bug:
    """A place where multi-controller JAX fails or reshuffles: the first record's index in
    execution order, the lines that count as its line (a jitted call and the constraints
    traced in it that JAX blamed), the rule strict mode has for it and the API."""

    index: int
    path: str
    line: int
    code: str
    api: str
    lines: list = field(default_factory=list)  # [path, line] pairs
    detail: str = ""


def _procs(p: dict) -> set[int]:
    return cmp.processes(p.get("devices") or [], 2)


def pair_code(api: str, p: dict, current: int, local: bool = False) -> str | None:
    """The rule for one (source, target) pair of a device_put / to_device, or None.
    ``local``: the program asked for its process's devices (a ``proc`` mode): a move
    between two meshes on them is each process moving its own data, and a mesh on them is
    process-local (RSH302, RSH303; elsewhere a device subset is RSH201, as for the linter)."""
    src, dst = p["src"], p["dst"]
    sp, dp = _procs(src), _procs(dst)
    if dst.get("k") == "device":
        if src.get("k") == "array" and len(sp) > 1:
            return "RSH301"
        if dp != {current} or (src.get("k") == "array" and sp != dp):
            return "RSH306"
        return None
    if src.get("k") != "array":
        return None
    if dst.get("k") == "none":
        return "RSH301" if len(sp) > 1 else None
    rel = cmp.relation(src, dst)
    if rel == "different":
        if local and sp == dp == {current}:
            return None
        if local and sp == {current} and len(dp) > 1:
            return "RSH302"
        if local and len(sp) > 1 and dp == {current}:
            return "RSH303"
        return "RSH201"
    if rel == "reordered":
        moves = cmp.order_moves(src, dst, p.get("own"))
        if moves is None:
            if src.get("type") == dst.get("type") == "NamedSharding":
                # the target's spec has no counterpart on x's own mesh: what moves is the
                # spec's doing, the order's share cannot be told apart
                return AMBIGUOUS if cmp.indices_change(src, dst) else None
            moves = cmp.indices_change(src, dst)  # (other shardings: any piece that changes)
        return "RSH202" if moves else None
    return None


def fetch_code(p: dict, current: int) -> str | None:
    src = p["src"]
    if src.get("k") != "array":
        return None
    sp = _procs(src)
    if len(sp) > 1 and not cmp._fully_replicated(src.get("indices"), src.get("shape")):
        return "RSH305"
    if sp and current not in sp:
        return "RSH306"
    return None


def record_code(rec: dict, current: int, local: bool = False) -> tuple[str | None, str]:
    """(rule, detail) of one recorded call, or (None, '')."""
    api, err = rec["api"], rec.get("error") or ""
    if api in ("device_put", "to_device"):
        for p in rec.get("pairs", []):
            code = pair_code(api, p, current, local)
            if code:
                return code, f"{p['src'].get('devices')} -> {p['dst'].get('devices')}"
        return (("raised", err) if err else (None, ""))
    if api in FETCHES:
        for p in rec.get("pairs", []):
            code = fetch_code(p, current)
            if code:
                return code, f"fetch of {p['src'].get('devices')}"
        return None, ""
    if api in ("jit", "jit-plain"):
        if err:
            return "RSH203", err
        for p in rec.get("pairs", []):
            rel = cmp.relation(p["src"], p["dst"])
            if rel == "reordered":
                return "RSH204", f"{p['src'].get('devices')} -> {p['dst'].get('devices')}"
            if rel == "different":
                return "RSH203", f"{p['src'].get('devices')} -> {p['dst'].get('devices')}"
        return None, ""
    if api == "host_local_array_to_global_array":
        if any(len(_procs(p["dst"])) == 1 for p in rec.get("pairs", [])):
            return "RSH304", "a global array on one process's devices"
    if err:  # constraints, reshard, eager operators, asarray(device=), assembly
        return "RSH203", err
    return None, ""


def bugs(result: dict, mode: str) -> list[Bug]:
    """Every place in the run (``result``: the recording child's result in ``mode``) where a
    multi-host job fails or reshuffles, in execution order; a constraint that JAX blamed on
    its enclosing jitted call is one bug with that call."""
    current = 1 if mode == "proc1of2" else 0
    sites = result.get("sites", [])
    out: dict[int, Bug] = {}
    for i, rec in enumerate(sites):
        code, detail = record_code(rec, current, mode.startswith("proc"))
        if code:
            out[i] = Bug(i, rec["path"], rec["line"], code, rec["api"], [[rec["path"], rec["line"]]], detail[:200])
    # a constraint traced in a jitted call that raised: the call's error, either line
    for i, rec in enumerate(sites):
        err = rec.get("error") or ""
        if not err.endswith(BLAMED) or i not in out:
            continue
        base = err[: -len(BLAMED)]
        calls = [j for j, r in enumerate(sites) if r["api"] in ("jit", "jit-plain") and r.get("error") == base]
        if not calls:
            continue
        j = min(calls, key=lambda k: abs(k - i))
        if j in out:
            first, second = sorted((i, j))
            out[first].lines += out[second].lines
            out[first].api = "jit+constraint"
            del out[second]
    return [out[k] for k in sorted(out)]


# ---------------------------------------------------------------- the comparison

def _norm(path: str | None) -> str:
    return os.path.realpath(path) if path else ""


def _at(bug: Bug, where: list | None) -> bool:
    if not where:
        return False
    return any(_norm(p) == _norm(where[0]) and ln == where[1] for p, ln in bug.lines)


def outcome(found: list[Bug], strict: dict, truth: dict | None = None) -> str:
    """One (program, mode): ``catch`` (a ReshardError at the first bug's line),
    ``other_bug`` (at another bug's line), ``false_raise`` (a ReshardError elsewhere, or on a
    program without bugs), ``jax_error`` (JAX's own exception at a bug's line), ``error``
    (another exception elsewhere), ``miss`` (ran to the end), ``clean`` (no bug, ran),
    ``crash`` / ``timeout``."""
    st = strict.get("status")
    truth_bugs = [b for b in found if b.code != AMBIGUOUS]
    if st in ("crash", "timeout"):
        return st
    rs = strict.get("reshard")
    if rs:
        if truth_bugs and _at(truth_bugs[0], rs["at"]):
            return "catch"
        if any(_at(b, rs["at"]) for b in truth_bugs[1:]):
            return "other_bug"
        if any(_at(b, rs["at"]) for b in found if b.code == AMBIGUOUS):
            return "ambiguous"
        return "false_raise"
    if st == "error":
        if any(_at(b, strict.get("error_at")) for b in truth_bugs):
            return "jax_error"
        if truth and truth.get("status") == "error" and truth.get("error_at") == strict.get("error_at") \
                and truth.get("error", "").split(":")[0] == strict.get("error", "").split(":")[0]:
            return "broken"  # the program fails so in this mode without strict mode too
        return "error"
    return "miss" if truth_bugs else "clean"


@dataclass
class Row:
    program: str
    mode: str
    outcome: str
    bugs: list = field(default_factory=list)  # asdict(Bug)
    strict: dict = field(default_factory=dict)  # status, error, error_at, reshard
    truth_status: str = "ok"
    ambiguous: list = field(default_factory=list)  # asdict(Bug) of AMBIGUOUS reorders


def compare(progs: Sequence[Program], truth: dict, strict: dict) -> list[Row]:
    """One row per (program, mode); ``Program.platforms`` are the modes (``modes_of``)."""
    rows = []
    for p in progs:
        for mode in p.platforms:
            t, s = truth.get(mode, {}).get(p.id), strict.get(mode, {}).get(p.id)
            if t is None or s is None:
                continue
            found = bugs(t, mode)
            keep = {k: s.get(k) for k in ("status", "error", "error_at", "reshard")}
            keep["error"] = (keep["error"] or "")[:300]
            rows.append(Row(p.id, mode, outcome(found, s, t), [asdict(b) for b in found if b.code != AMBIGUOUS],
                            keep, t["status"], [asdict(b) for b in found if b.code == AMBIGUOUS]))
    return rows


def summary(rows: list[Row]) -> dict:
    """Per program: its base mode if that run has a bug, else the first platform mode with
    one (a platform-only bug), else clean (every mode must run without a ReshardError)."""
    by_prog: dict[str, list[Row]] = {}
    for r in rows:
        by_prog.setdefault(r.program, []).append(r)
    programs: Counter = Counter()
    misses_by: Counter = Counter()
    first_by: Counter = Counter()
    codes_differ: Counter = Counter()
    false_raises: list[str] = []
    per_mode: dict[str, Counter] = {}
    for r in rows:
        per_mode.setdefault(r.mode, Counter())["bug " + r.outcome if r.bugs else "clean " + r.outcome] += 1
    for pid, rs in by_prog.items():
        base = rs[0]
        with_bug = [r for r in rs if r.bugs]
        if base.truth_status != "ok":
            programs["ground truth did not run"] += 1
            continue
        if with_bug:
            r = with_bug[0]
            group = "bug" if r is base else "platform bug"
            first_by[f"{r.bugs[0]['code']} {r.bugs[0]['api']}"] += 1
            programs[f"{group} programs"] += 1
            programs[f"{group} {r.outcome}"] += 1
            if r.outcome == "catch":
                same = (r.strict.get("reshard") or {}).get("code") == r.bugs[0]["code"]
                programs["catch with the expected rule" if same else "catch with another rule"] += 1
                if not same:
                    codes_differ[f"{r.bugs[0]['code']} -> {r.strict['reshard']['code']}"] += 1
            if r.outcome == "miss":
                b = r.bugs[0]
                misses_by[f"{b['code']} {b['api']}" + ("" if r is base else f" ({r.mode})")] += 1
        else:
            programs["clean programs"] += 1
            programs[f"clean {base.outcome}"] += 1
        for r in rs:
            if r.outcome == "false_raise" or (not r.bugs and r.outcome not in ("clean", "broken")):
                false_raises.append(f"{pid} [{r.mode}] {r.outcome}: {r.strict.get('reshard') or ''} "
                                    f"{r.strict.get('error', '')[:200]} at {r.strict.get('error_at')}")
    bug_n = programs["bug programs"] + programs["platform bug programs"]
    caught = programs["bug catch"] + programs["platform bug catch"]
    return {
        "programs": dict(programs),
        "catch_rate": round(caught / bug_n, 4) if bug_n else None,
        "caught": caught,
        "bug_programs": bug_n,
        "false_raises_on_clean": sum(1 for r in rows if not r.bugs and r.outcome == "false_raise"),
        "false_raises": false_raises,
        "misses_by_kind": dict(misses_by.most_common()),
        "first_bug_by_kind": dict(first_by.most_common()),
        "catch_rule_differs": dict(codes_differ.most_common()),
        "per_mode": {m: dict(c) for m, c in per_mode.items()},
    }


def text_summary(s: dict) -> str:
    pr = s["programs"]
    lines = [
        f"programs: {pr.get('bug programs', 0)} with a bug on CPU, {pr.get('platform bug programs', 0)} with a "
        f"bug only on a simulated platform, {pr.get('clean programs', 0)} clean"
        + (f", {pr['ground truth did not run']} whose ground-truth run failed" if pr.get("ground truth did not run") else ""),
        f"caught at the first bug's line: {s['caught']}/{s['bug_programs']} ({(s['catch_rate'] or 0) * 100:.1f}%)",
        "bug programs (CPU): " + ", ".join(f"{k[4:]} {v}" for k, v in sorted(pr.items())
                                           if k.startswith("bug ") and k != "bug programs"),
        "bug programs (platform only): " + ", ".join(f"{k[13:]} {v}" for k, v in sorted(pr.items())
                                                     if k.startswith("platform bug ") and k != "platform bug programs"),
        "clean programs: " + ", ".join(f"{k[6:]} {v}" for k, v in sorted(pr.items())
                                       if k.startswith("clean ") and k != "clean programs"),
        f"false raises on clean runs (any mode): {s['false_raises_on_clean']}",
        f"catches with the expected rule: {pr.get('catch with the expected rule', 0)}; with another: "
        f"{dict(s['catch_rule_differs'])}",
        "first bug by rule and API: " + ", ".join(f"{k} {v}" for k, v in s["first_bug_by_kind"].items()),
        "per mode: " + "; ".join(f"{m}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
                                 for m, c in s["per_mode"].items()),
    ]
    if s["misses_by_kind"]:
        lines.append("misses by the first bug's rule and API:")
        lines += [f"  {n:4d}  {k}" for k, n in s["misses_by_kind"].items()]
    if s["false_raises"]:
        lines.append(f"raises away from a bug, or errors on clean runs ({len(s['false_raises'])}):")
        lines += [f"  {x}" for x in s["false_raises"][:30]]
    return "\n".join(lines)


def strict_oracle(progs: Sequence[Program], workers: int = 2, every: bool = False) -> dict[str, Any]:
    """Ground truth and strict runs of ``progs`` in every mode of theirs; rows and summary;
    with ``every``, strict mode at every bug site of the CPU runs too (``every_bug``)."""
    t0 = time.time()
    progs = [Program(p.id, p.root, p.file, p.module, p.timeout, modes_of(p), p.argv) for p in progs]
    modes = tuple(STRICT_CONFIG)
    truth = run_concrete(progs, workers=workers, platforms=modes)
    t1 = time.time()
    strict = run_concrete(progs, workers=workers, platforms=modes, module="tests.oracle.strict_child")
    t2 = time.time()
    rows = compare(progs, truth, strict)
    out = {"rows": [asdict(r) for r in rows], "summary": summary(rows),
           "seconds": {"truth": round(t1 - t0, 1), "strict": round(t2 - t1, 1)}}
    if every:
        out["every_bug"] = every_bug(progs, truth, workers=workers)
        out["seconds"]["every_bug"] = round(time.time() - t2, 1)
    return out


# ---------------------------------------------------------------- every bug, not only the first

def every_bug(progs: Sequence[Program], truth: dict, workers: int = 2, rounds: int = 60) -> dict[str, Any]:
    """Strict mode at every bug site of the CPU runs, not only the first: a program stopped
    at a line runs again with that line's transfers and reads under ``rt.suspended()`` (plain
    JAX, as in the recording run) until it ends; ``truth`` is the recording runs
    ({mode: {id: result}}). Per site: stopped, passed (the run went on past it), or not
    reached again; and the lines strict mode stopped at where the recording run shows none."""
    stops: dict[str, list] = {p.id: [] for p in progs}
    final: dict[str, dict] = {}
    pending = [Program(p.id, p.root, p.file, p.module, p.timeout, ("cpu",), p.argv) for p in progs]
    used = 0
    while pending and used < rounds:
        used += 1
        res = run_concrete(pending, workers=workers, platforms=("cpu",), module="tests.oracle.strict_child")["cpu"]
        nxt = []
        for p in pending:
            r = res.get(p.id, {"status": "crash"})
            at = (r.get("reshard") or {}).get("at")
            if at and tuple(at) not in {tuple(x) for x in p.skip}:
                stops[p.id].append({"code": r["reshard"]["code"], "at": at})
                nxt.append(Program(p.id, p.root, p.file, p.module, p.timeout, ("cpu",), p.argv, p.skip + (tuple(at),)))
            else:
                final[p.id] = {k: r.get(k) for k in ("status", "error", "error_at", "reshard")}
        pending = nxt
    for p in pending:
        final[p.id] = {"status": "rounds exhausted"}
    sites: Counter = Counter()
    passed: Counter = Counter()
    missed: list[str] = []
    false: list[str] = []
    for p in progs:
        t = truth.get("cpu", {}).get(p.id)
        if t is None:
            continue
        found = bugs(t, "cpu")
        real = [b for b in found if b.code != AMBIGUOUS]
        seen: set = set()
        for b in real:
            key = tuple(tuple(x) for x in b.lines)
            if key in seen:
                continue
            seen.add(key)
            sites["bug sites"] += 1
            hit = [st for st in stops[p.id] if _at(b, st["at"])]
            if hit:
                sites["stopped"] += 1
                sites["stopped with the expected rule" if hit[0]["code"] == b.code else "stopped with another rule"] += 1
            elif final[p.id].get("status") == "ok":
                sites["passed"] += 1
                passed[f"{b.code} {b.api}"] += 1
                missed.append(f"{p.id} {b.path}:{b.line} {b.code} {b.api} {b.detail[:120]}")
            else:
                sites["not reached again"] += 1
        for st in stops[p.id]:
            if not any(_at(b, st["at"]) for b in found):
                sites["stops at no bug"] += 1
                false.append(f"{p.id} {st['at'][0]}:{st['at'][1]} {st['code']}")
        sites["programs ended " + str(final[p.id].get("status"))] += 1
    return {"sites": dict(sites), "passed_by_kind": dict(passed.most_common()), "passed": missed,
            "stops_at_no_bug": false, "rounds": used, "stops": stops}


def text_every_bug(e: dict) -> str:
    s = e["sites"]
    lines = [f"every bug site (CPU, {e['rounds']} rounds): {s.get('bug sites', 0)} sites, stopped at "
             f"{s.get('stopped', 0)} ({s.get('stopped with the expected rule', 0)} with the expected rule), "
             f"passed {s.get('passed', 0)}, not reached again {s.get('not reached again', 0)}; stops at a line "
             f"with no bug {s.get('stops at no bug', 0)}; "
             + ", ".join(f"{k} {v}" for k, v in sorted(s.items()) if k.startswith("programs ended"))]
    if e["passed_by_kind"]:
        lines.append("sites passed, by rule and API: " + ", ".join(f"{k} {v}" for k, v in e["passed_by_kind"].items()))
        lines += [f"  {x}" for x in e["passed"][:15]]
    lines += [f"  stop at no bug: {x}" for x in e["stops_at_no_bug"][:15]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import tempfile
    from pathlib import Path

    from . import generator as gen

    ap = argparse.ArgumentParser(prog="python -m tests.oracle.strict_run")
    ap.add_argument("--generated", type=int, default=20, help="how many generated projects")
    ap.add_argument("--seed", type=int, default=None, help="first seed (default: the dev range, from 1000)")
    ap.add_argument("--heldout", action="store_true", help="the held-out seed range (from 1,000,000)")
    ap.add_argument("--json", help="write the rows and the summary here")
    ap.add_argument("--every", action="store_true", help="also every bug site, not only the first")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    first = a.seed if a.seed is not None else (gen.HELDOUT_START if a.heldout else gen.DEV_START + 1000)
    with tempfile.TemporaryDirectory(prefix="strict-oracle-") as tmp:
        corpus = gen.corpus(Path(tmp) / "generated", range(first, first + a.generated))
        result = strict_oracle(corpus.programs, workers=a.jobs, every=a.every)
    result["seeds"] = [first, first + a.generated]
    print(f"seeds {first}..{first + a.generated - 1}, seconds {result['seconds']}")
    print(text_summary(result["summary"]))
    if "every_bug" in result:
        print(text_every_bug(result["every_bug"]))
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
