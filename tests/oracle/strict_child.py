"""The strict-mode oracle's child: runs programs with plain JAX on 8 CPU devices under
``reshard_lint.runtime.enable(processes=2, reorder="raise", ...)`` and records how each ends.

Run as ``python -m tests.oracle.strict_child JOB.json OUT.jsonl`` (tests/oracle/run.py's
``_run_child`` with ``module="tests.oracle.strict_child"``). Each program's ``platform`` is
an oracle platform mode (``cpu``, ``tpu-v4`` ...); tests/oracle/strict_run.py's
``STRICT_CONFIG`` gives the strict-mode settings that play it. None of the recording child's
wrappers or repairs is installed: JAX is JAX, strict mode is the only patch. The program
runs through the recording child's ``run_program`` (fresh imports, ``__main__``, a time
limit), whose result then holds ``reshard``: the ``ReshardError``'s code and user line.
"""

from __future__ import annotations

import json
import os
import sys

from . import child  # sets the 8-device XLA flag before jax is imported; installs nothing
from .strict_run import STRICT_CONFIG


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
            rt.enable(processes=None if platform else 2, reorder="raise", platform=platform, process=process)
            try:
                res = child.run_program(prog)
            finally:
                rt.disable()
                jax.clear_caches()
            res["platform"] = mode
            fh.write(json.dumps(res) + "\n")
            fh.flush()
    os._exit(0)  # no slow interpreter teardown of 8 devices' worth of buffers


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
