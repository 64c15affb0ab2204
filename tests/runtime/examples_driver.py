"""Runs programs under strict mode in this one process; called by test_strict_rule_examples.py.

Usage: python examples_driver.py CASES.json OUT.jsonl START (8 CPU devices:
JAX_NUM_CPU_DEVICES=8). CASES.json is a list of {"key", "code", "platform", "process"}. Each
program runs once, from case START on, in a fresh namespace, under ``rt.enable(processes=2,
reorder='raise', platform=..., process=...)`` (or, for a case with ``"plain": true``, with plain
JAX). The global generators' seeds are followed from the driver's start
(``rt.watch_seeds()``), and each program starts with them seeded from the operating system's
entropy, as in a process of its own: a seed one program sets does not carry into the next.
One JSON line per program is appended to OUT.jsonl as soon as it is known, so a crash (a
SIGSEGV from an unchecked jit) loses only that program: the parent restarts the driver after it.
"""

from __future__ import annotations

import contextlib
import linecache
import io
import json
import os
import random
import sys
import traceback
import warnings
from typing import Any


def _line_in(tb: Any, filename: str) -> int | None:
    """The innermost line of the program in a traceback: where the user's code was."""
    line = None
    for frame, lineno in traceback.walk_tb(tb):
        if frame.f_code.co_filename == filename:
            line = lineno
    return line


def run_one(rt: Any, key: str, code: str, platform: str | None, plain: bool = False,
            process: int = 0) -> dict[str, Any]:
    import jax
    import numpy as np

    filename = f"<program {key}>"
    # A program run from a file has its source on hand (strict mode reads the lines a step
    # runs under to judge it as every process); an exec'd string gets it the way IPython's do.
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    result: dict[str, Any] = {"key": key, "status": "ok", "code": None, "line": None, "error": None}
    random.seed()  # entropy, as a new process starts (the seed watch sees it)
    np.random.seed()
    if not plain:
        rt.enable(processes=None if platform else 2, reorder="raise", platform=platform, process=process)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            exec(compile(code, filename, "exec"), namespace)
    except BaseException as exc:  # recorded, judged by the test
        # The line the error names (a constraint inside jit: its own line), else the traceback's.
        named = getattr(exc, "lineno", None) if getattr(exc, "filename", None) == filename else None
        result.update(status="error", code=getattr(exc, "code", None),
                      line=named or _line_in(exc.__traceback__, filename),
                      error=f"{type(exc).__name__}: {str(exc)[:2000]}")
    finally:
        rt.disable()
        jax.set_mesh(None)  # a program's global mesh must not leak into the next one
    return result


def main() -> None:
    cases_path, out_path, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
    import reshard_lint.runtime as rt

    rt.watch_seeds()  # before any program's code: the global generators' whole history is seen
    import jax

    assert len(jax.devices()) == 8, jax.devices()
    with open(cases_path) as f:
        cases: list[dict[str, Any]] = json.load(f)
    with open(out_path, "a") as out:
        for n in range(start, len(cases)):
            case = cases[n]
            result = run_one(rt, case["key"], case["code"], case.get("platform"), case.get("plain", False),
                             case.get("process", 0))
            out.write(json.dumps({"index": n, **result}) + "\n")
            out.flush()
            jax.clear_caches()
    out.close()
    os._exit(0)  # no slow interpreter teardown of 8 devices' worth of buffers


if __name__ == "__main__":
    main()
