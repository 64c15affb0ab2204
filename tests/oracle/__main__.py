"""``python -m tests.oracle``: run programs under JAX and compare with reshard-lint.

  python -m tests.oracle run PATHS...        # files, fixture projects or directories
  python -m tests.oracle report [--generated N] [--seed S] [--heldout] [--json FILE]

``report`` runs the standard corpus (every fixture, rule example and fixture project),
plus N generated projects from seed S, and prints the summary as text (and JSON with
``--json``). Exit status 1 when there is a false positive, wrong verdict, wrong claim or
failed fix that tests/oracle/known.json does not list.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from . import oracle as orc
from .run import Program, project_programs, with_platforms


def _paths_corpus(paths: list[str]) -> orc.Corpus:
    c = orc.Corpus("paths")
    for p in map(Path, paths):
        p = p.resolve()
        if p.is_file():
            prog = Program(str(p), str(p.parent), p.name)
            c.programs += with_platforms([prog])
            c.roots.append(str(p))
        elif (p / "pyproject.toml").exists() or any(p.glob("*/__init__.py")):
            progs = project_programs(p, prefix=f"{p.name}/")
            c.programs += with_platforms(progs, p)
            c.roots.append(str(p))
        else:
            for f in sorted(p.rglob("*.py")):
                c.programs += with_platforms([Program(str(f), str(f.parent), f.name)])
            c.roots.append(str(p))
    return c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.oracle")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("paths", nargs="+")
    rep = sub.add_parser("report")
    rep.add_argument("--generated", type=int, default=0, help="how many generated projects")
    rep.add_argument("--seed", type=int, default=None, help="first seed (default: the dev range)")
    rep.add_argument("--heldout", action="store_true", help="use the held-out seed range")
    rep.add_argument("--no-standard", action="store_true", help="only the generated projects")
    for p in (r, rep):
        p.add_argument("--json", help="write the JSON report here")
        p.add_argument("--no-fixes", action="store_true")
        p.add_argument("-j", "--jobs", type=int, default=2)
        p.add_argument("--processes", type=int, action="append", default=None,
                       help="also run multi-controller programs as real jobs of N processes (repeatable; "
                            "run: 2 by default, report: none; 0 for none)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="oracle-") as tmp:
        work = Path(tmp)
        if a.cmd == "run":
            corpora = [_paths_corpus(a.paths)]
        else:
            corpora = [] if a.no_standard else orc.standard_corpora(work)
            if a.generated:
                from . import generator
                first = a.seed if a.seed is not None else (generator.HELDOUT_START if a.heldout else generator.DEV_START)
                corpora.append(generator.corpus(work / "generated", range(first, first + a.generated)))
        procs = a.processes if a.processes is not None else ([2] if a.cmd == "run" else [])
        result = orc.oracle(corpora, work, workers=a.jobs, fixes=not a.no_fixes,
                            processes=tuple(n for n in procs if n > 1))
        result["findings"] = orc.relative(result["findings"], work)
        from .known import unexplained
        new, gone = unexplained(result["findings"])
        result["new_vs_known"] = new
        result["fixed_vs_known"] = gone
        print(orc.text_report(result))
        print(f"not in tests/oracle/known.json: {len(new)}; listed there but not seen: {len(gone)}")
        if a.json:
            Path(a.json).write_text(json.dumps(result, indent=1, default=str))
    return 1 if (new if a.cmd == "report" else [f for f in result["findings"] if f["kind"] in orc.cmp.FAILURES]) else 0


if __name__ == "__main__":
    sys.exit(main())
