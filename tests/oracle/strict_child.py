"""The strict-mode oracle's child: runs programs with plain JAX on 8 CPU devices under
``reshard_lint.runtime.enable(processes=2, reorder="raise", ...)`` and records how each ends.

Run as ``python -m tests.oracle.strict_child JOB.json OUT.jsonl`` (tests/oracle/run.py's
``_run_child`` with ``module="tests.oracle.strict_child"``). Each program's ``platform`` is
an oracle platform mode (``cpu``, ``tpu-v4`` ...); tests/oracle/strict_run.py's
``STRICT_CONFIG`` gives the strict-mode settings that play it. None of the recording child's
wrappers or repairs is installed: JAX is JAX, strict mode is the only patch. The program
runs through the recording child's ``run_program`` (fresh imports, ``__main__``, a time
limit), whose result then holds ``reshard``: the ``ReshardError``'s code and user line.

A program with ``skip`` (``[[file, line], ...]``, lines strict mode stopped at in earlier
runs) runs its transfers and reads from those lines with strict mode suspended, so that
the run reaches the next one (tests/oracle/strict_run.py's ``every_bug``).
"""

from __future__ import annotations

import json
import os
import sys

from . import child  # sets the 8-device XLA flag before jax is imported; installs nothing
from .strict_run import STRICT_CONFIG


def _user_line() -> tuple[str, int] | None:
    """The innermost frame of the program's own code (under its root) calling in."""
    f = sys._getframe(2)
    while f is not None:
        if any(f.f_code.co_filename.startswith(r) for r in child.ROOTS):
            return os.path.realpath(f.f_code.co_filename), f.f_lineno
        f = f.f_back
    return None


_WRAPPER = """
def call(*args, **kw):
    if where() in skip:
        with rt.suspended():
            return inner(*args, **kw)
    return inner(*args, **kw)
"""


def _skipping(rt, skip: set) -> list:
    """Calls of ``jax.device_put``, ``Array.to_device``, ``np.asarray`` and ``np.array`` from
    the lines in ``skip`` run under ``rt.suspended()``: plain JAX, as in the recording run,
    so that the run goes on to the next place strict mode stops at. Returns the undo list."""
    import jax
    import numpy as np

    undo = []

    def wrap(owner, name):
        inner = getattr(owner, name)
        # compiled under a "<frozen ...>" name, which strict mode's user_location skips as it
        # skips the standard library: an error still names the program's line, not this one
        ns = {"__name__": "strict_oracle_skip", "inner": inner, "rt": rt, "skip": skip, "where": _user_line}
        exec(compile(_WRAPPER, "<frozen strict-oracle skip>", "exec"), ns)
        setattr(owner, name, ns["call"])
        undo.append(lambda: setattr(owner, name, inner))

    wrap(jax, "device_put")
    wrap(type(jax.numpy.zeros(1)), "to_device")
    wrap(np, "asarray")
    wrap(np, "array")
    return undo


def main(argv: list[str]) -> int:
    import jax
    import reshard_lint.runtime as rt

    assert len(jax.devices()) == 8, jax.devices()
    job = json.loads(open(argv[0]).read())
    with open(argv[1], "a") as fh:
        for prog in job["programs"]:
            mode = prog.get("platform", "cpu")
            fh.write(json.dumps({"id": prog["id"], "platform": mode, "started": True}) + "\n")
            fh.flush()
            platform, process = STRICT_CONFIG[mode]
            # The truth of a mode is one topology's run: strict mode judges that one only
            # (platforms=(): no other platform's order; the TPU modes are their own runs).
            rt.enable(processes=None if platform else 2, reorder="raise", platform=platform,
                      process=process, platforms=())
            undo = _skipping(rt, {(os.path.realpath(p), ln) for p, ln in prog["skip"]}) if prog.get("skip") else []
            try:
                res = child.run_program(prog)
            finally:
                while undo:
                    undo.pop()()
                rt.disable()
                jax.clear_caches()
            res["platform"] = mode
            fh.write(json.dumps(res) + "\n")
            fh.flush()
    os._exit(0)  # no slow interpreter teardown of 8 devices' worth of buffers


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
