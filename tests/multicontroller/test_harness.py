"""The harness against facts from RUNTIME-FACTS.md, with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from . import harness
from .harness import SnippetResult, matches, run_batch, run_snippet

# One xdist worker runs the whole module: its module-scoped JAX runs are made once.
pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_harness")]

DEVICE_IDS = "import jax\nprint(sorted(d.id for d in jax.devices()), jax.process_index())\n"
ARGV = "import sys\nassert sys.argv == ['snippet_6.py'], sys.argv\n"

SUBSET_PUT = textwrap.dedent("""
    import jax, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    full = Mesh(np.array(jax.devices()), ('x',))
    x = jax.device_put(np.arange(16.0), NamedSharding(full, P('x')))
    half = Mesh(np.array(jax.devices()[:4]), ('x',))
    y = jax.device_put(x, NamedSharding(half, P('x')))
    y.block_until_ready()
""")

RAISES = "raise KeyError('from the snippet')\n"

# A snippet that calls initialize itself, as real multi-controller programs do.
SELF_INIT = textwrap.dedent("""
    import jax
    jax.config.update('jax_num_cpu_devices', 4)
    jax.distributed.initialize(coordinator_address='127.0.0.1:1', num_processes=2, process_id=0)
    print('count', jax.process_count())
""")

# Config set by one snippet must not leak into the next.
SET_CONFIG = "import jax\njax.config.update('jax_enable_x64', True)\n"
CHECK_CONFIG = "import jax\nassert not jax.config.jax_enable_x64, 'x64 leaked'\n"

SEED = r"ValueError: For a cross-host reshard in multi-controller JAX, input and target " \
       r"sharding should have the same set of devices"

CRASH = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
HANG = "import time\ntime.sleep(600)\n"


@pytest.fixture(scope="module")
def multi_batch() -> list[SnippetResult]:
    return run_batch([DEVICE_IDS, SUBSET_PUT, RAISES, SELF_INIT, SET_CONFIG, CHECK_CONFIG, ARGV],
                     mode="multi", timeout=60)


@pytest.fixture(scope="module")
def single_batch() -> list[SnippetResult]:
    return run_batch([DEVICE_IDS, SUBSET_PUT, RAISES, SELF_INIT], mode="single", timeout=60)


def test_multi_device_ids(multi_batch: list[SnippetResult]) -> None:
    res = multi_batch[0]
    assert res.all_ok(), res.details()
    assert len(res.processes) == 2
    ids = "[0, 1, 2, 3, 2048, 2049, 2050, 2051]"
    assert res.processes[0].stdout.strip() == f"{ids} 0"
    assert res.processes[1].stdout.strip() == f"{ids} 1"


def test_single_device_ids(single_batch: list[SnippetResult]) -> None:
    res = single_batch[0]
    assert res.all_ok(), res.details()
    assert len(res.processes) == 1
    assert res.processes[0].stdout.strip() == "[0, 1, 2, 3, 4, 5, 6, 7] 0"


def test_subset_put_is_seed_error_in_multi(multi_batch: list[SnippetResult]) -> None:
    res = multi_batch[1]
    p0, p1 = res.processes
    assert p1.status == "error" and p1.exc_type == "ValueError", res.details()
    assert matches(res, "error", SEED, "any")
    assert not matches(res, "error", SEED, "all")
    # RUNTIME-FACTS: process 0 fails too, with a different error.
    assert p0.status == "error"
    assert "Cannot reshard an input that is not fully addressable" in p0.message, res.details()


def test_subset_put_is_ok_in_single(single_batch: list[SnippetResult]) -> None:
    assert single_batch[1].all_ok(), single_batch[1].details()


def test_raising_snippet_is_error_everywhere(multi_batch: list[SnippetResult],
                                             single_batch: list[SnippetResult]) -> None:
    for res in (multi_batch[2], single_batch[2]):
        assert matches(res, "error", r"^KeyError: 'from the snippet'$", "all"), res.details()
        assert "Traceback" in res.processes[0].stderr


def test_snippet_own_initialize_is_a_no_op(multi_batch: list[SnippetResult],
                                           single_batch: list[SnippetResult]) -> None:
    assert multi_batch[3].all_ok(), multi_batch[3].details()
    assert all(p.stdout.strip() == "count 2" for p in multi_batch[3].processes)
    assert single_batch[3].all_ok(), single_batch[3].details()
    assert single_batch[3].processes[0].stdout.strip() == "count 1"


def test_config_does_not_leak_between_snippets(multi_batch: list[SnippetResult]) -> None:
    assert multi_batch[4].all_ok() and multi_batch[5].all_ok(), multi_batch[5].details()


def test_snippet_sees_a_plain_argv(multi_batch: list[SnippetResult]) -> None:
    assert multi_batch[6].all_ok(), multi_batch[6].details()


def test_batch_shared_one_set(multi_batch: list[SnippetResult]) -> None:
    assert not any(r.ran_alone for r in multi_batch)


def _groups_since(before: int) -> list[int]:
    return harness.STARTED_GROUPS[before:]


def test_hang_is_timeout_and_leaves_no_process() -> None:
    before = len(harness.STARTED_GROUPS)
    t0 = time.monotonic()
    res = run_snippet(HANG, timeout=3)
    assert time.monotonic() - t0 < 40
    assert res.statuses == ("timeout", "timeout"), res.details()
    started = _groups_since(before)
    assert len(started) == 2
    assert not [g for g in started if harness.group_alive(g)]


def test_crash_is_reported_with_its_signal() -> None:
    res = run_snippet(CRASH, timeout=30)
    assert res.statuses == ("crash", "crash"), res.details()
    p0, p1 = res.processes
    assert p0.signal == signal.SIGSEGV and p0.returncode == -signal.SIGSEGV, res.details()
    # Process 1 either kills itself first, or is aborted by the distributed client when
    # process 0, which hosts the coordination service, is already gone.
    assert p1.signal in (signal.SIGSEGV, signal.SIGABRT), res.details()
    assert matches(res, "crash", r"signal 11 \(SIGSEGV\)", "any")


def test_crash_in_one_process_only() -> None:
    code = "import jax, os, signal\nif jax.process_index() == 1:\n    os.kill(os.getpid(), signal.SIGSEGV)\n"
    res = run_snippet(code, timeout=20)
    assert res.processes[1].status == "crash", res.details()
    assert res.processes[0].status in ("ok", "crash", "timeout"), res.details()


def test_batch_falls_back_after_crash_and_hang() -> None:
    before = len(harness.STARTED_GROUPS)
    res = run_batch([DEVICE_IDS, CRASH, RAISES, HANG, DEVICE_IDS], timeout=4)
    assert res[0].all_ok() and not res[0].ran_alone
    assert res[1].statuses == ("crash", "crash") and res[1].ran_alone, res[1].details()
    assert matches(res[2], "error", "KeyError", "all") and not res[2].ran_alone
    assert res[3].statuses == ("timeout", "timeout") and res[3].ran_alone
    assert res[4].all_ok() and not res[4].ran_alone
    assert not [g for g in _groups_since(before) if harness.group_alive(g)]


def test_alone_flag_gives_own_processes() -> None:
    res = run_batch([DEVICE_IDS, DEVICE_IDS], mode="single", alone=[True, False])
    assert res[0].ran_alone and not res[1].ran_alone
    assert all(r.all_ok() for r in res)


def test_three_processes() -> None:
    res = run_snippet("import jax\nassert jax.device_count() == 6, jax.devices()\n",
                      processes=3, devices=2)
    assert res.all_ok() and len(res.processes) == 3, res.details()


# A shell running the suite as a background job (`.ci/run &`) hands its children SIGINT
# ignored, and Python keeps an inherited SIG_IGN: the parent would never see Ctrl-C.
# The parent installs the handler an interactive terminal gives every Python process.
PARENT = textwrap.dedent("""
    import signal, sys, threading, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path.insert(0, {dir!r})
    import harness

    def report():
        while len(harness.STARTED_GROUPS) < 2:
            time.sleep(0.05)
        print(' '.join(map(str, harness.STARTED_GROUPS)), flush=True)

    threading.Thread(target=report, daemon=True).start()
    harness.run_snippet('import time\\ntime.sleep(600)\\n', timeout=300)
""")


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL],
                         ids=["SIGINT", "SIGTERM", "SIGKILL"])
def test_interrupted_parent_leaves_no_process(how: signal.Signals) -> None:
    """Workers die with the parent, however the parent goes: finally, atexit, watchdog."""
    script = PARENT.format(dir=str(Path(harness.__file__).parent))
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        groups = [int(g) for g in line.split()]
        assert len(groups) == 2, line
        assert all(harness.group_alive(g) for g in groups)
        parent.send_signal(how)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(harness.group_alive(g) for g in groups):
            time.sleep(0.1)
        assert not [g for g in groups if harness.group_alive(g)]
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        parent.wait()


def test_collective_failure_restarts_the_set() -> None:
    """After a gloo-level failure the next snippet runs in fresh processes."""
    pid = "import os\nprint(os.getpid())\n"
    poison = "raise RuntimeError('Gloo context initialization failed: DEADLINE_EXCEEDED (staged)')\n"
    res = run_batch([pid, pid, poison, pid], timeout=30)
    assert [r.all_ok() for r in res] == [True, True, False, True], [r.brief() for r in res]
    assert not any(r.ran_alone for r in res)
    pids = [[p.stdout.strip() for p in r.processes] for r in res]
    assert pids[0] == pids[1] and pids[1] != pids[3]
