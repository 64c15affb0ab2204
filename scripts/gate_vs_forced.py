"""Check the gate against the engine itself, over real code.

The prefilter and the ast gate may say yes too often but never no to a file with a
finding (gate.py). The fixture suite and the rules' examples check that on known
spellings; this checks it on every `.py` file of the given directories: each file the
gate skips is analysed anyway (`force=True`, whole, not sliced) and must have no finding;
each file the gate lets through gets the same diagnostics sliced as whole. The engine on
every file: 60 s for the eight repositories of docs/usage/coverage.md (5,160 files) on 2
cores (about 4 minutes for the jax repository alone while the engine parsed with libcst).

    python scripts/gate_vs_forced.py [--jobs N] DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from reshard_lint.engine.engine import Engine

# Sliced files would hide nothing from this check, but "whole" must mean whole.
_WHOLE = 10**9


def _check(path: str) -> tuple[str, str | None]:
    from reshard_lint.core.sources import SourceError, decode, read_bytes

    try:
        text = decode(read_bytes(path), path).text
    except SourceError:
        return path, None
    engine = Engine()
    gated = engine.lint_source(text, path)
    forced = engine.lint_source(text, path, force=True, slice_min_lines=_WHOLE)
    got = [d.sort_key for d in gated.diagnostics]
    want = [d.sort_key for d in forced.diagnostics if d.code not in ("RSH001", "RSH002")]
    if gated.stage != "analysed" and want:
        return path, f"skipped at the {gated.stage}, forced: {[d.code for d in forced.diagnostics]}"
    if gated.stage == "analysed" and [k for k in got if k[2] not in ("RSH001", "RSH002")] != want:
        return path, f"sliced {[d.code for d in gated.diagnostics]} != whole {[d.code for d in forced.diagnostics]}"
    return path, None


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("dirs", nargs="+")
    args = p.parse_args(argv)
    paths = sorted(str(f) for d in args.dirs for f in Path(d).rglob("*.py"))
    bad = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        for path, problem in pool.map(_check, paths, chunksize=8):
            if problem:
                bad += 1
                print(f"{path}: {problem}", flush=True)
    print(f"{len(paths)} files checked, {bad} where the gate or the slicing changed the diagnostics")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
