#!/usr/bin/env python3
"""reshard-lint performance benchmark: one command, see docs/performance.md.

    python bench/run.py                 # full run: bench/.venv, corpus, 3 repetitions
    python bench/run.py --quick         # smoke run: small trees, 1 repetition
    python bench/run.py --no-venv --corpus DIR --no-peers --quick   # what the smoke test does

Only the standard library is used here, so any Python 3.10+ can drive it; the tools
under test run in the "tool environment": bench/.venv (made and kept up to date on
demand from `pip install -e .[bench]`), the interpreter given with --python, or this
interpreter with --no-venv. The peers (TorchFix, fixit) get an environment of their own,
bench/.venv-peers, with the same flake8: TorchFix pins libcst<1.6, and sharing one
environment would measure reshard-lint on a libcst no user of it gets.

The benchmark is split by what each part holds: trees.py (the trees: built from
installed packages, given, the jax repository with its tests, scaled copies), tools.py
(the environments and the commands compared), measure.py (running and measuring them,
reading their diagnostics), lsp_latency.py (the language server's time to diagnostics),
report.py (targets and tables), and this file (options and the order of the run).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import trees as _trees
from measure import Result, measure, run_all
from report import evaluate, render
from tools import (BENCH, compile_bytecode, detect, ensure_peer_venv, ensure_venv, machine_info, make_commands,
                   tool_versions, versions_text)
from lsp_latency import LspLatency, measure_lsp
from trees import (JAX_REPO_ENV, Tree, build_managed_corpus, examples_tree, given_corpus, heaviest_tree,
                   jax_repo_tree, project_tree)

DEFAULT_CORPUS = BENCH / "corpus"
DEFAULT_JSON = BENCH / "results" / "latest.json"


# ----------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="small trees, 1 repetition (smoke run)")
    p.add_argument(
        "--repeat", type=int, default=None, help="repetitions of every command (default 3; --quick 1)"
    )
    env = p.add_mutually_exclusive_group()
    env.add_argument("--python", type=Path, help="run the tools with that interpreter's environment")
    env.add_argument(
        "--no-venv", action="store_true", help="run the tools with this interpreter's environment"
    )
    p.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="corpus root (default bench/corpus/full, or bench/corpus/quick with --quick; built from "
        "installed packages). A directory of .py files without a manifest is used as it is: each "
        "subdirectory is a tree",
    )
    p.add_argument(
        "--rerender", type=Path, metavar="JSON", help="run nothing: report again from a results JSON"
    )
    p.add_argument("--rebuild-corpus", action="store_true", help="rebuild the corpus even if it is current")
    p.add_argument("--no-peers", action="store_true", help="skip TorchFix and fixit")
    p.add_argument("--peer-python", type=Path,
                   help="run TorchFix and fixit with that interpreter (default bench/.venv-peers)")
    p.add_argument("--peers", default="torchfix,fixit", help="which peers to run (default torchfix,fixit)")
    p.add_argument(
        "--no-examples",
        action="store_true",
        help="skip the tree of the rules' example programs (the agreement check with findings)",
    )
    p.add_argument(
        "--peer-repeat",
        type=int,
        default=1,
        help="repetitions of the peers (default 1: fixit alone takes ~5 min on the jax tree, "
        "and a reference number more than 10x off needs no median)",
    )
    p.add_argument("--timeout", type=float, default=None, help="seconds per run (default 600; --quick 120)")
    p.add_argument(
        "--peer-timeout", type=float, default=None, help="seconds per peer run (default 300; --quick 60)"
    )
    p.add_argument(
        "--scales",
        default=",".join(map(str, _trees.SCALE_FACTORS)),
        help="scale factors of the linearity trees, first one 1 (default 1,4,16)",
    )
    p.add_argument("--jax-repo", type=Path, default=None,
                   help=f"a checkout of the jax repository (with its tests) to use as a tree "
                        f"(default: ${JAX_REPO_ENV}, or one fetched before)")
    p.add_argument("--fetch-jax-repo", action="store_true",
                   help="download the pinned jax source archive into bench/corpus/ when no checkout is given")
    p.add_argument("--trees", default=None,
                   help="only these trees, comma-separated (e.g. jax-repo,heaviest,examples)")
    p.add_argument("--skip", default="",
                   help="commands not to run, comma-separated keys (e.g. flake8_j1_F: the memory baseline)")
    p.add_argument("--no-lsp", action="store_true", help="skip the language server latency")
    p.add_argument(
        "--short-repeat", type=int, default=None,
        help="repetitions on trees whose flake8 -j2 F run takes under 5 s "
        "(default 7, or --repeat when that is below 3)",
    )
    p.add_argument("--lsp-repeat", type=int, default=5, help="repetitions of the language server timing")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write the results JSON")
    return p.parse_args(argv)


def rerender(src: Path, dest: Path) -> int:
    """Targets and table again from a results JSON (e.g. after a change to the report)."""
    data = json.loads(src.read_text())
    trees = [Tree(**{**t, "path": Path(t["path"])}) for t in data["trees"]]
    fields = set(Result.__dataclass_fields__)
    results = {
        (r["tree"], r["command"]): Result(**{k: v for k, v in r.items() if k in fields})
        for r in data["results"]
    }
    _trees.SCALE_FACTORS = tuple(data["settings"].get("scale_factors", _trees.SCALE_FACTORS))
    lsp = LspLatency(**data["lsp"]) if data.get("lsp") else None
    targets = evaluate(trees, results, data["diagnostics"], lsp)
    report = render(trees, results, targets, data["diagnostics"], lsp)
    print(report)
    data["targets"] = [asdict(t) for t in targets]
    data["table"] = report
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(data, indent=2) + "\n")
    print(f"\nresults JSON: {dest}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.rerender:
        return rerender(args.rerender, args.json)
    _trees.SCALE_FACTORS = tuple(int(x) for x in args.scales.split(","))
    if _trees.SCALE_FACTORS[0] != 1:
        raise SystemExit("--scales must start with 1")
    started = time.time()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    def log(msg: str) -> None:
        print(f"[bench {time.time() - started:6.1f}s] {msg}", file=sys.stderr, flush=True)

    repeat = args.repeat or (1 if args.quick else 3)
    peer_repeat = min(repeat, args.peer_repeat)
    short_repeat = args.short_repeat if args.short_repeat is not None else (7 if repeat >= 3 else repeat)
    timeout = args.timeout or (120.0 if args.quick else 600.0)
    peer_timeout = args.peer_timeout or (60.0 if args.quick else 300.0)
    problems: list[str] = []
    if args.python:
        python = args.python.absolute()
    elif args.no_venv:
        python = Path(sys.executable)
    else:
        python, problems = ensure_venv(log)
    compiled = compile_bytecode(python, log)
    if compiled:
        problems.append(compiled)
    versions = tool_versions(python)
    log(f"tool environment: {versions_text(python, versions)}")

    scratch = Path(tempfile.mkdtemp(prefix="rsh-bench-"))
    try:
        corpus = (
            args.corpus.absolute() if args.corpus else DEFAULT_CORPUS / ("quick" if args.quick else "full")
        )
        managed = not corpus.exists() or (corpus / "manifest.json").exists() or not any(corpus.rglob("*.py"))
        if managed:
            trees, manifest = build_managed_corpus(corpus, python, args.quick, args.rebuild_corpus, log)
        else:
            trees, manifest = given_corpus(corpus, scratch)
        repo, note = jax_repo_tree(args.jax_repo, args.fetch_jax_repo, DEFAULT_CORPUS, log)
        log(note)
        if repo is not None:
            trees += [repo, heaviest_tree(repo, scratch)]
        trees.append(project_tree(scratch / "project-tree"))  # meshes that cross modules
        if args.trees:
            wanted = set(args.trees.split(","))
            trees = [t for t in trees if t.name in wanted or (t.scale and "scale" in wanted)]
        for t in trees:
            log(f"tree {t.name}: {t.files} files, {t.lines:,} lines")
        peers = frozenset() if args.no_peers else frozenset(x for x in args.peers.split(",") if x)
        peer_python, peer_versions = python, versions
        if peers and args.peer_python:
            peer_python = args.peer_python.absolute()
        elif peers and not args.no_venv:
            peer_python, peer_problems = ensure_peer_venv(versions.get("flake8"), log)
            problems += peer_problems
        if peer_python != python:
            peer_versions = tool_versions(peer_python)
            log(f"peer environment: {versions_text(peer_python, peer_versions)}")
        caps = detect(python, peers, peer_python)
        for note in caps.notes:
            log(note)
        examples = (
            examples_tree(python, scratch / "examples-tree")
            if (caps.rsh_cli or caps.rsh_plugin) and not args.no_examples
            else None
        )
        if examples is not None and (not args.trees or "examples" in args.trees.split(",")):
            trees.append(examples)
            log(f"tree examples: {examples.files} rule example programs")
        commands = make_commands(python, caps, scratch / "cache", peer_python)
        commands = [c for c in commands if c.key not in set(args.skip.split(","))]
        # Byte-compiles each tool and fails fast on a broken command before the timed runs;
        # a --quick run measures nothing worth that.
        warm_tree = Tree("warmup", scratch / "warmup")
        (warm_tree.path / "pkg").mkdir(parents=True)
        (warm_tree.path / "pkg" / "mod.py").write_text(
            # A finding, so that the warm-up goes through the whole engine, libcst and rules.
            "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n\n"
            "mesh = Mesh(np.array(jax.devices()[::-1]), ('x',))\n"
        )
        for cmd in commands if not args.quick else ():
            measure(cmd.argv(warm_tree), warm_tree.path, timeout)
        load_before = os.getloadavg()
        if load_before[0] > 0.5 * (os.cpu_count() or 1):
            log(
                f"warning: load average {load_before[0]:.2f} before the run: other work on this machine "
                "makes wall times noisy (CPU seconds are reported too)"
            )
        results, diags = run_all(trees, commands, repeat, peer_repeat, timeout, peer_timeout, log,
                                 short_repeat)
        lsp = None
        if not args.no_lsp:
            log("language server: didOpen and didChange on a generated document")
            lsp = measure_lsp(python, scratch / "lsp", args.lsp_repeat)
            log(f"language server: open {lsp.open_ms} ms, change {lsp.change_ms} ms [{lsp.status}]")
        load_after = os.getloadavg()
        targets = evaluate(trees, results, diags, lsp)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    report = render(trees, results, targets, diags, lsp)
    envs = f"Tools: {versions_text(python, versions)}"
    if peer_python != python:
        envs += f"\nPeers: {versions_text(peer_python, peer_versions)}"
    report = envs + "\n\n" + report
    print(report)
    payload = {
        "schema": 1,
        "when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "tool_python": str(python),
        "versions": versions,
        "peer_python": str(peer_python),
        "peer_versions": peer_versions,
        "load_average": {"before": load_before, "after": load_after},
        "settings": {
            "repeat": repeat,
            "peer_repeat": peer_repeat,
            "short_repeat": short_repeat,
            "quick": args.quick,
            "timeout_s": timeout,
            "peer_timeout_s": peer_timeout,
            "peers": sorted(peers),
            "corpus": str(corpus),
            "scale_factors": list(_trees.SCALE_FACTORS),
        },
        "capabilities": {k: v for k, v in asdict(caps).items() if k != "rsh_cli_help"},
        "setup_problems": problems,
        "corpus": manifest,
        "trees": [{**asdict(t), "path": str(t.path)} for t in trees],
        "results": [asdict(r) for r in results.values()],
        "diagnostics": diags,
        "lsp": asdict(lsp) if lsp is not None else None,
        "targets": [asdict(t) for t in targets],
        "table": report,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"\nresults JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
