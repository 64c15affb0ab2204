"""Iterators (models/iteration.py): what a generator yields, ``iter``/``next``, ``enumerate``
and ``zip`` of a generator, tuple targets unpacking each element, ``round``, ``/`` of
Python numbers, the clock's readings, ``x[..., None]`` of host data and ``jax.random``
functions of host data (``randint``). Each program also runs under JAX on 8 CPU devices
here: the run shows what the verdict claims (host data is a NumPy array or an uncommitted
jax.Array; a put between meshes lands on the other devices)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from reshard_lint.frontends.coverage import file_coverage

_HEAD = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    train = Mesh(np.array(jax.devices()[:4]), ("x",))
    rollout = Mesh(np.array(jax.devices()[4:]), ("x",))
    s = NamedSharding(train, P())


    def batches(n):
        for _ in range(n):
            yield np.ones((8, 2)), np.zeros(8)


    a = jax.device_put(np.arange(8.0), NamedSharding(train, P("x")))
    """)
_HEAD_LINES = _HEAD.count("\n")

# name: (body, the verdict of the body's last site, where the run finds what that site
# puts (`src`) and, for arrays already on devices, where it puts it (`out`))
CASES = {
    "generator-tuple-target": ("for x, y in batches(3):\n    src = x\n    out = jax.device_put(src, s)\n",
                               "host_data", "host"),
    "enumerate-nested-target": ("for i, (x, y) in enumerate(batches(3)):\n    src = x\n"
                                "    x, y = jax.device_put((src, y), s)\n    out = x\n", "host_data", "host"),
    "zip-of-generators": ("for (x, _), (y, _) in zip(batches(2), batches(2)):\n    src = y\n"
                          "    out = jax.device_put(src, s)\n", "host_data", "host"),
    "next-of-split-keys": ("keys = iter(jax.random.split(jax.random.key(0), 4))\n"
                           "src = jax.random.normal(next(keys), (8,))\nout = jax.device_put(src, s)\n",
                           "host_data", "uncommitted"),
    "next-of-generator": ("g = batches(2)\nsrc, _ = next(g)\nout = jax.device_put(src, s)\n", "host_data", "host"),
    "next-with-default": ("src = next(iter((a,)), a)\nout = jax.device_put(src, NamedSharding(train, P()))\n",
                          "same_devices", "train->train"),
    "next-of-a-tuple-of-one-array": ("src = next(iter((a, a)))\n"
                                     "out = jax.device_put(src, NamedSharding(rollout, P()))\n",
                                     "crossing", "train->rollout"),
    "clock-seeded-keys": ("import time\nkeys = iter(jax.random.split(jax.random.key(round(time.time())), 4))\n"
                          "q = jax.random.normal(next(keys), (8, 4))\nsrc = q / jnp.linalg.norm(q, axis=-1)[..., None]\n"
                          "out = jax.device_put(src, s)\n", "host_data", "uncommitted"),
    "randint-of-host-bounds": ("src = jax.random.randint(jax.random.key(1), (8,), -3, 3, dtype=jnp.int32)\n"
                               "out = jax.device_put(src, s)\n", "host_data", "uncommitted"),
    "round-of-a-division": ("n = 128 * 1024\nsrc = round(n / 8) * jnp.ones((8,))\nout = jax.device_put(src, s)\n",
                            "host_data", "uncommitted"),
}

# Not known: a list's iterator (the list may change before next reads it), a generator's
# element taken under a mesh context (made there, when asked: committed to the context mesh).
UNKNOWN_CASES = {
    "iterator-of-a-list": ("xs = [np.ones(8)]\nit = iter(xs)\nxs[0] = a\nsrc = next(it)\n"
                           "out = jax.device_put(src, NamedSharding(rollout, P()))\n", "train->rollout"),
    "under-a-context-mesh": ("def made():\n    yield jnp.zeros(8)\n\n\ng = made()\nwith jax.set_mesh(rollout):\n"
                             "    src = next(g)\nout = jax.device_put(src, s)\n", "rollout->train"),
    "loop-under-a-context-mesh": ("def made():\n    yield jnp.zeros(8)\n\n\ng = made()\nwith jax.set_mesh(rollout):\n"
                                  "    for src in g:\n        out = jax.device_put(src, s)\n", "rollout->train"),
}


def _run(source: str) -> str:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    probe = source + textwrap.dedent("""\
        def where(v):
            if isinstance(v, np.ndarray):
                return "host"
            if not v.committed:
                return "uncommitted"
            ids = sorted(d.id for d in v.sharding.device_set)
            return "train" if ids == [0, 1, 2, 3] else "rollout" if ids == [4, 5, 6, 7] else str(ids)


        print(where(src) if where(src) in ("host", "uncommitted") else where(src) + "->" + where(out))
        """)
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.split()[-1]


def _last(source: str) -> tuple[str, str]:
    sites = file_coverage(source, "t.py", {}).sites
    last = max(sites, key=lambda site: (site.line, site.col))
    assert last.line > _HEAD_LINES, [(x.line, x.verdict) for x in sites]
    return last.verdict, last.detail


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_an_element_of_an_iterator_is_what_stands_for_each(case: str) -> None:
    body, verdict, seen = CASES[case]
    source = _HEAD + body
    assert _last(source)[0] == verdict, _last(source)
    assert _run(source) == seen


@pytest.mark.parametrize("case", list(UNKNOWN_CASES), ids=list(UNKNOWN_CASES))
def test_an_element_the_analysis_cannot_stand_for_stays_unknown(case: str) -> None:
    body, seen = UNKNOWN_CASES[case]
    source = _HEAD + body
    assert _last(source)[0] == "unresolved", _last(source)
    assert _run(source) == seen
