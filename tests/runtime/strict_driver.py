"""Runs example programs with and without strict mode; called by test_strict_examples.py.

Usage: python strict_driver.py CASES.json  (writes CASES.json.out). Needs 8 CPU devices
(JAX_NUM_CPU_DEVICES=8). Each program runs in a fresh namespace, once per mode:
  plain  before strict mode was ever switched on: what JAX alone does;
  p1, p2, auto, raise  under strict(processes=1), strict(processes=2), strict(),
         strict(processes=2, reorder='raise');
  off    after every strict block has exited: must equal plain.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import jax
import numpy as np
from jax._src import pjit
from jax.experimental import multihost_utils

MODES: dict[str, dict[str, Any]] = {
    "p1": {"processes": 1},
    "p2": {"processes": 2},
    "auto": {},
    "raise": {"processes": 2, "reorder": "raise"},
}

ORIGINALS = {
    "device_put": jax.device_put,
    "make_array_from_process_local_data": jax.make_array_from_process_local_data,
    "host_local_array_to_global_array": multihost_utils.host_local_array_to_global_array,
    "to_device": type(jax.numpy.zeros(1)).__dict__["to_device"],
    "jit": jax.jit,
    "jit_miss_path": pjit._run_python_pjit,
}
# numpy's functions that strict mode replaces once something is put on another process's device
NUMPY_READS = ("asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray", "frombuffer")
ORIGINALS.update({f"np.{name}": getattr(np, name) for name in NUMPY_READS})


def restored() -> bool:
    now = {
        "device_put": jax.device_put,
        "make_array_from_process_local_data": jax.make_array_from_process_local_data,
        "host_local_array_to_global_array": multihost_utils.host_local_array_to_global_array,
        "to_device": type(jax.numpy.zeros(1)).__dict__["to_device"],
        "jit": jax.jit,
        "jit_miss_path": pjit._run_python_pjit,
    }
    now.update({f"np.{name}": getattr(np, name) for name in NUMPY_READS})
    return all(now[k] is v for k, v in ORIGINALS.items())


def summarize(out: Any) -> dict[str, Any]:
    leaves = jax.tree_util.tree_leaves(out)
    values = [np.asarray(leaf).tolist() for leaf in leaves]
    devices = [[d.id for d in getattr(getattr(leaf, "sharding", None), "_device_assignment", [])]
               for leaf in leaves]
    return {"values": values, "devices": devices}


def run_one(name: str, code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"case_{name}"}
    result: dict[str, Any] = {"status": "ok", "exc_type": None, "code": None, "message": None,
                              "source": None, "target": None, "out": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(code, f"<case {name}>", "exec"), namespace)
            from reshard_lint.runtime import suspended

            with suspended():  # the driver reads every value; on a pod it could not
                result["out"] = summarize(namespace.get("out"))
        except Exception as exc:  # recorded, compared by the tests
            result.update(status="error", exc_type=type(exc).__name__, message=str(exc),
                          code=getattr(exc, "code", None),
                          source=list(getattr(exc, "source", ()) or ()) or None,
                          target=list(getattr(exc, "target", ()) or ()) or None)
    result["warnings"] = [
        {"category": w.category.__name__, "code": getattr(w.message, "code", None),
         "message": str(w.message), "filename": w.filename, "lineno": w.lineno}
        for w in caught if getattr(w.message, "code", None) is not None
    ]
    return result


def main() -> None:
    path = sys.argv[1]
    with open(path) as f:
        cases: list[dict[str, Any]] = json.load(f)
    assert len(jax.devices()) == 8, jax.devices()
    out: dict[str, Any] = {"plain": {}, "off": {}, "restored_after": {}}
    for case in cases:
        out["plain"][case["name"]] = run_one(case["name"], case["code"])
    from reshard_lint.runtime import strict

    for mode, kwargs in MODES.items():
        out[mode] = {}
        for case in cases:
            with strict(**kwargs):
                out[mode][case["name"]] = run_one(case["name"], case["code"])
            out["restored_after"][f"{mode}:{case['name']}"] = restored()
    for case in cases:
        out["off"][case["name"]] = run_one(case["name"], case["code"])
    with open(path + ".out", "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
