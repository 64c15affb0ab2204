"""Programs run as real multi-controller JAX jobs: N processes of 8/N CPU devices joined
by ``jax.distributed.initialize`` on loopback (tests/multicontroller/harness.py), each
process recording what it does at every site (tests/oracle/mc_child.py).

``run_jobs(programs, processes)`` returns, per program, one record per process: the
child's ``run_program`` result (status, error, ``error_at`` and ``error_stack``: the
user's frames, innermost first; ``sites`` with placements, errors and the user stack)
plus ``meshes`` built by user code. A process that crashed has status ``crash``, the
sites it streamed before the crash, and the user frames of faulthandler's dump.

``as_concrete`` shapes the records as the one-process oracle's ``{platform: {program:
result}}`` (one platform per process, ``mc2-p0``, ``mc2-p1``, ...), so that
tests/oracle/compare.py judges them unchanged.

Standard library only (the workers import jax).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Sequence

from tests.multicontroller import harness

from .run import ROOT, Program

_SNIPPET = """\
import sys
sys.path.insert(0, {repo!r})
from tests.oracle import mc_child
mc_child.run({job!r}, {out!r})
"""
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
# A program that says it runs as several processes runs as a real job too (oracle.oracle).
MULTI_WORDS = ("jax.distributed", "distributed.initialize", "process_index", "process_count",
               "local_devices", "multihost_utils", "make_array_from_process_local_data")


def multi_controller(prog: Program) -> bool:
    """Whether the program's root holds a file that uses a MULTI_WORDS name."""
    root = Path(prog.root)
    files = [Path(prog.path)] if not any(root.glob("*/__init__.py")) else sorted(root.rglob("*.py"))
    for f in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(w in text for w in MULTI_WORDS):
            return True
    return False


FETCHES = ("device_get", "np.asarray", "np.array", "tolist", "item", "process_allgather")


def _view(pl: dict, pos: dict, proc: dict, me: int) -> None:
    ids = pl.get("devices")
    if not ids:
        return
    mine = [proc.get(i) == me for i in ids]
    pl["procs"] = sorted({proc.get(i, -1) for i in ids})
    pl["owned"] = "all" if all(mine) else ("some" if any(mine) else "none")
    pl["real_devices"] = list(ids)
    pl["devices"] = [pos.get(i, i) for i in ids]
    if "owners" in pl:
        pl["owners"] = {"real": pl["procs"]}
    idx = pl.get("indices")
    if isinstance(idx, dict):
        # every distinct piece on a device of this process: it has the whole value
        pieces = {json.dumps(v) for v in idx.values()}
        pl["holds_all"] = pieces == {json.dumps(v) for k, v in idx.items() if proc.get(int(k)) == me}
        pl["indices"] = {str(pos.get(int(k), k)): v for k, v in idx.items()}


def annotate(res: dict, devices: dict, me: int) -> None:
    """This process's view of its sites and meshes (module docstring of mc_child)."""
    pos = {int(k): v[0] for k, v in devices.items()}
    proc = {int(k): v[1] for k, v in devices.items()}
    for rec in res["sites"]:
        pairs = rec.get("pairs", [])
        for p in pairs:
            for side in ("src", "dst", "out"):
                if isinstance(p.get(side), dict):
                    _view(p[side], pos, proc, me)
            if isinstance(p.get("own"), dict):
                p["own"] = {str(pos.get(int(k), k)): v for k, v in p["own"].items()}
        for o in rec.get("outs", []):
            for pl in [o.get("dst", {}), *o.get("srcs", [])]:
                _view(pl, pos, proc, me)
        if rec["api"] in FETCHES:  # reads a piece no device of this process holds
            rec["foreign"] = any(p["src"].get("owned") == "none" or (
                p["src"].get("owned") == "some" and not p["src"].get("holds_all", False)) for p in pairs)
        else:  # placed on devices none of which is this process's
            rec["foreign"] = any(p["dst"].get("owned") == "none" for p in pairs) or \
                any(o.get("dst", {}).get("owned") == "none" for o in rec.get("outs", []))
    for m in res.get("meshes", []):
        m["devices"] = [pos.get(i, i) for i in m["ids"]]
        m["procs"] = sorted({proc.get(i, -1) for i in m["ids"]})


def _crash_record(prog: Program, out: Path, pid: int, outcome: harness.ProcessOutcome) -> dict:
    """A process that left no record: the sites it streamed, the user frames of
    faulthandler's dump (innermost first), the harness's outcome."""
    lines = []
    stream = Path(f"{out}.p{pid}.jsonl")
    if stream.exists():
        lines = [json.loads(x) for x in stream.read_text().splitlines() if x.strip()]
    root = os.path.realpath(prog.root) + os.sep
    stack = [[f, int(n)] for f, n in _FRAME.findall(outcome.stderr) if os.path.realpath(f).startswith(root)]
    res = {"id": prog.id, "status": outcome.status, "error": outcome.error_text[:300],
           "error_at": stack[0] if stack else None, "error_stack": stack,
           "sites": [x["site"] for x in lines if "site" in x],
           "meshes": [x["mesh"] for x in lines if "mesh" in x],
           "process": pid}
    if lines:
        annotate(res, lines[0]["devices"], pid)
    if not stack and res["sites"]:
        # faulthandler showed no user frame (the process died in another thread while
        # the main one was not in user code): the crash follows the last site it reached
        res["error_stack"] = res["sites"][-1].get("stack", [])
        res["error_at"] = res["error_stack"][0] if res["error_stack"] else None
        res["error"] += " (after the last site recorded)"
    return res


def run_jobs(progs: Sequence[Program], processes: int = 2, timeout: float = 60.0) -> dict[str, list[dict]]:
    """{program id: [record of process 0, 1, ...]}; all programs share one set of
    processes (the harness reruns one that kills the set in a set of its own)."""
    with tempfile.TemporaryDirectory(prefix="oracle-mc-") as tmp:
        outs = [Path(tmp) / f"prog{i}" for i in range(len(progs))]
        snippets = [_SNIPPET.format(repo=str(ROOT), job=p.job(), out=str(o)) for p, o in zip(progs, outs)]
        results = harness.run_batch(snippets, mode="multi", processes=processes, devices=8 // processes,
                                    timeout=timeout)
        got: dict[str, list[dict]] = {}
        for prog, out, res in zip(progs, outs, results):
            recs = []
            for outcome in res.processes:
                path = Path(f"{out}.p{outcome.process_id}.json")
                if path.exists():
                    recs.append(json.loads(path.read_text()))
                else:
                    recs.append(_crash_record(prog, out, outcome.process_id, outcome))
            got[prog.id] = recs
    return got


def as_concrete(runs: dict[str, list[dict]], processes: int) -> dict[str, dict[str, dict]]:
    """The records as ``{"mc<N>-p<k>": {program id: record}}`` for compare.compare."""
    out: dict[str, dict[str, dict]] = {f"mc{processes}-p{k}": {} for k in range(processes)}
    for pid, recs in runs.items():
        for k, rec in enumerate(recs):
            out[f"mc{processes}-p{k}"][pid] = rec
    return out
