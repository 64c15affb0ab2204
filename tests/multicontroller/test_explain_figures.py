"""What ``reshard-lint explain`` draws for findings other than moves (figures.py), set
against real multi-controller JAX: two processes of four CPU devices on loopback.

The CPU panels name the process that owns each device, mark the devices the drawn
process does not own, and say that multi-process CPU numbers process 1's devices from
2048. Each process prints what JAX says of the same lists, and the pictures of the rule
examples must agree with every process's view (ids aside: the model numbers process 1's
devices 4-7, JAX 2048-2051, which the RSH104 note says)."""

from __future__ import annotations

import pytest

from reshard_lint.frontends.explain.gather import ABSENT, explain_source
from reshard_lint.rules import rule_by_code

from .harness import run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_explain_figures")]

SNIPPET = """
import jax, numpy as np
from jax.sharding import Mesh
d = jax.devices()
me = jax.process_index()
print("natural", ",".join(f"p{x.process_index}" for x in d))
rev = Mesh(np.array(d[::-1]), ('x',))
print("reversed", ",".join(f"p{x.process_index}" for x in rev.devices.flat))
print("foreign", ",".join("!" if x.process_index != me else "-" for x in d))
cpu0 = jax.devices('cpu')[0]
print("cpu0", f"p{cpu0.process_index}", "mine" if cpu0.process_index == me else "not mine")
try:
    [d[i] for i in [x.id for x in d]]
    print("byid ok")
except IndexError:
    print("byid IndexError")
import jax.numpy as jnp
from jax.sharding import SingleDeviceSharding
with jax.default_device(cpu0):
    placed = [jnp.stack([jnp.ones(3), jnp.zeros(3)])]
placed.append(jax.jit(lambda v: v * 2, out_shardings=SingleDeviceSharding(d[0]))(np.ones(4)))
placed.append(jnp.zeros(3, device=d[0]))
print("placed", ",".join(f"p{x.process_index}" for a in placed for x in a.devices()))
print("placed_readable", ",".join(str(a.is_fully_addressable) for a in placed))
made = jax.make_mesh((jax.local_device_count(),), ('x',))
print("made", ",".join(f"p{x.process_index}" for x in made.devices.flat))
"""
CPU = {"runtime": "auto", "platforms": ("cpu",)}


def _figure(code: str, spelled: str, marked: str | None = None):  # type: ignore[no-untyped-def]
    rule = rule_by_code(code)
    assert rule is not None
    ex = next(e for e in rule.firing() if spelled in e.code)
    marked = marked or code
    line = next(n for n, t in enumerate(ex.code.splitlines(), 1) if f"# {marked}:" in t)
    [e] = explain_source(ex.code, "x.py", line, CPU).explanations
    [panel] = e.panels
    return e, panel


def _line(stdout: str, key: str) -> str:
    return next(x for x in stdout.splitlines() if x.startswith(key + " ")).split(" ", 1)[1]


def test_the_cpu_figures_agree_with_what_each_process_sees() -> None:
    (result,) = run_batch([SNIPPET], processes=2, devices=4)
    assert result.all_ok(), result.details()
    _, order = _figure("RSH202", "rev = Mesh(np.array(jax.devices()[::-1])", "RSH102")
    _, fetch = _figure("RSH305", "jax.device_get(x)")
    _, put = _figure("RSH306", "jax.devices('cpu')[0]))")
    e104, index = _figure("RSH104", "for i in ids")
    # RSH306 of code that places its results whatever its operands (events.Placement).
    placements = [_figure("RSH306", spelled)[1] for spelled in
                  ("with jax.default_device", "out_shardings=SingleDeviceSharding", "jnp.zeros(3, device=")]
    e307, made = _figure("RSH307", "jax.make_mesh((jax.local_device_count(),)")
    for p in result.processes:
        # RSH102: which process owns each position, natural order and reversed.
        assert _line(p.stdout, "natural") == ",".join(order.source.shards), result.details()
        assert _line(p.stdout, "reversed") == ",".join(order.target.shards), result.details()
        # RSH305, seen from process 0: the devices it does not own are marked.
        if p.process_id == 0:
            marks = ",".join("!" if m == ABSENT else "-" for m in fetch.source.marks)
            assert _line(p.stdout, "foreign") == marks, result.details()
        # RSH306, seen from process 1: device 0 of the global list is process 0's.
        assert _line(p.stdout, "cpu0").startswith(put.target.shards[0])
        assert ("not mine" in _line(p.stdout, "cpu0")) == (p.process_id == 1)
        # RSH306 placements: each result is on the drawn device, unreadable on process 1.
        assert _line(p.stdout, "placed") == ",".join(q.target.shards[0] for q in placements), result.details()
        assert _line(p.stdout, "placed_readable") == ",".join([str(p.process_id == 0)] * 3), result.details()
        # RSH307: the mesh make_mesh builds from this process's count holds the drawn devices.
        assert _line(p.stdout, "made") == ",".join(made.target.shards), result.details()
        # RSH104: ids as positions raise on multi-process CPU, as the CPU note says.
        assert _line(p.stdout, "byid") == "IndexError" and "IndexError" in index.note
    assert "seen from process 1" in put.topology and put.target.marks == (ABSENT,)
    assert e104.code == "RSH104"
    for q in (*placements, made):
        assert "seen from process 1" in q.topology and set(q.target.marks) == {ABSENT}
    assert e307.code == "RSH307" and len(made.target.ids) == 4
