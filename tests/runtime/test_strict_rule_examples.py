"""Every rule example and fixture program, run under strict mode as process 0 of a 2-process pod.

The linter's examples (reshard_lint/rules/*.py) and fixtures (tests/fixtures/*.py) are
small programs whose markers (``# RSH201:5``) say where a multi-host job fails. Each runs
once in one child process with 8 CPU devices under ``rt.enable(processes=2,
reorder='raise')`` (examples_driver.py), the way a user's test suite would run it: a
program with markers must stop with a ``ReshardError`` at one of its marked lines, with that
marker's code; a program without markers must run. Examples that fire only for another
platform's device order run on that platform simulated (``PLATFORM_OF``).

What strict mode cannot see at run time is listed in ``NOT_AT_RUN_TIME`` with the reason;
the test fails when one of them starts being caught (the list is then out of date) and when
any other one is missed. The catch rate is printed (``pytest -s``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import HERE, TIMEOUT, jax_env  # this directory is on sys.path (see conftest.py)
from reshard_lint.rules import all_rules, expected_markers

# One child process runs all ~340 programs in about 10 s: fast enough for every run.
pytestmark = pytest.mark.xdist_group("runtime-rule-examples")

FIXTURES = HERE.parent / "fixtures"
DRIVER = HERE / "examples_driver.py"

# Examples whose failure needs another platform's device layout: the rule names the platform.
PLATFORM_OF_RULE = {"RSH104": "cpu-2x4"}  # ids 2048...: indexing by id raises IndexError there
PLATFORM_OF_TAG = {"tpu": "tpu-v4-16"}  # Example.platform: TPU orders (2 hosts of 4 chips)
# Examples whose failure happens on another process than process 0: the run plays the last.
PROCESS_OF_RULE = {"RSH306": -1,  # a put onto jax.devices()[0] fails where process 0 does not run
                   "RSH104": -1}  # process 0's ids are positions (0 ... 3), process 1's are not

# Programs whose marker names a platform's device order, though the example carries no
# platform tag: run on that platform. (key: platform)
PLATFORM_OF_KEY = {"RSH201-clean-31": "tpu-v4-16"}  # make_mesh((8,)) is TPU order there: RSH202

# (key, reason): programs with markers that strict mode lets run, and why.
NOT_AT_RUN_TIME: dict[str, str] = {
    **{f"RSH103-fires-{i}": "NamedSharding is jaxlib's nanobind type: building one runs no Python "
                            "strict mode could check first (an __init__ set on the type is never "
                            "called, jax 0.10.2), and a stand-in class would break isinstance; "
                            "JAX's own AttributeError stops the program at the marked line, on one "
                            "host as on the pod" for i in range(4)},
    "RSH104-fires-2": "k = 5 parsed from 'cpu:5' is a plain position at run time, valid on the pod "
                      "too (there, another device): nothing tells it from legal positional "
                      "indexing; the program's own assert fails on the next line",
    "RSH202-fires-9": "sorted by id is enumeration order on the modelled 8-chip TPU slices (ids follow "
                      "hosts there); the modelled slice where it reorders, tpu-v5e-16, has 16 chips, "
                      "over which the example's 8-element array does not split (strict mode stops "
                      "the same move there: test_strict_pod.py)",
    # RSH102 markers on a mesh built from a reordered list, in examples whose later lines use
    # the mesh consistently: building a mesh from any order is legal at run time.
    **{key: "RSH102: a mesh built from a reordered device list is legal at run time; the "
            "order only matters once arrays meet (RSH202/203/204)"
       for key in ("RSH202-clean-11", "RSH203-clean-12", "RSH204-clean-4", "RSH204-clean-12")},
}


# RSH306 reports the placement (where the mistake is written: issue 58), strict mode the
# read of what it placed (where JAX fails on the process that does not own the device; the
# put itself raises nothing there): (key, the read's line, code).
AT_THE_READ: dict[str, tuple[int, str]] = {
    "RSH306-fires-3": (9, "RSH306"),  # host data put on jax.devices()[0]
    "RSH306-fires-4": (13, "RSH306"),  # the same, through a name bound in a try
    "RSH306-fires-5": (10, "RSH306"),  # a host tree put there with device=
    "RSH306-fires-7": (12, "RSH306"),  # a jitted call with out_shardings=SingleDeviceSharding(d)
    "RSH306-fires-9": (12, "RSH306"),  # read on the owner, and after the guard
}
NOT_AT_RUN_TIME.update({
    "RSH306-fires-6": "strict mode does not follow jax.default_device: an uncommitted array made "
                      "under it is on device 0 of the one simulating host, which it reads",
    "RSH306-fires-8": "strict mode does not follow a jnp function's device= keyword: the array "
                      "jnp.zeros(3, device=d) makes is read as this host's",
})

NOT_AT_RUN_TIME.update({
    **{f"RSH307-fires-{i}": "JAX's own ValueError ('Number of devices 8 must equal the product of "
                            "mesh_shape (4,)') stops the program at the marked line on the simulated pod"
       for i in (0, 1)},
    **{f"RSH307-fires-{i}": "jax.make_mesh((local count,)) takes the first devices on the pod too: "
                            "strict mode does not judge a mesh's size against the processes it spans, "
                            "and the process that cannot read its results is not the one it plays"
       for i in (2, 3)},
    **{f"RSH308-fires-{i}": "strict mode does not check multihost_utils.process_allgather: on one host it "
                            "gathers; the pod's processes raise (tests/multicontroller/test_builder_counts.py)"
       for i in range(4)},
    "fixture-local_count_mesh": "JAX's own ValueError stops the program at its first marked line on the "
                                "simulated pod (RSH307-fires-0's)",
})

# Fixtures that say they run in one process (jax_num_cpu_devices): a simulated pod is not
# where they run, and strict mode playing one may stop them (key: why).
ONE_PROCESS: dict[str, str] = {
    "fixture-global_device_one_process": "sets jax_num_cpu_devices: its puts onto jax.devices()[k] are "
                                         "this one process's devices, which a 2-process pod gives to another",
}

# Programs without a marker that strict mode stops, correctly: the linter cannot decide them
# (it stays silent on unknown values), the run sees the real arrays. (key, line, code, why)
RUNTIME_ONLY: dict[str, tuple[int, str, str]] = {
    "fixture-changed_containers": (29, "RSH201", "'grown' holds a 'train' array and a 'rollout' "
                                   "one; the loop puts the first onto 'rollout', another device set"),
}

# Construction rules: a marker for how a mesh is built, which is legal at run time; only the
# arrays that later meet on it can fail (RSH202/203/204), so such a program may run.
CONSTRUCTION = {"RSH101", "RSH102", "RSH103"}
_NOQA = re.compile(r"#\s*noqa:\s*([A-Z0-9, ]+)")


def markers(code: str) -> set[tuple[int, str]]:
    """(line, code) of every finding the program claims: its markers, and its noqa'd lines
    (a finding the linter reports and the program silences: it still fails at run time)."""
    found = {(line, rule) for line, _, rule in expected_markers(code)}
    for number, text in enumerate(code.splitlines(), start=1):
        match = _NOQA.search(text)
        if match:
            found |= {(number, c.strip()) for c in match.group(1).split(",") if c.strip().startswith("RSH")}
    return found


def _cases() -> list[dict[str, Any]]:
    cases = []
    for rule in all_rules():
        for i, example in enumerate(rule.examples):
            key = f"{rule.code}-{'fires' if example.fires else 'clean'}-{i}"
            platform = PLATFORM_OF_KEY.get(key) or PLATFORM_OF_TAG.get(example.platform) \
                or PLATFORM_OF_RULE.get(rule.code)
            cases.append({"key": key,
                          "code": example.code, "platform": platform, "rule": rule.code,
                          "fires": example.fires, "process": PROCESS_OF_RULE.get(rule.code, 0)})
    for path in sorted(FIXTURES.glob("*.py")):
        cases.append({"key": f"fixture-{path.stem}", "code": path.read_text(), "platform": None,
                      "rule": None, "fires": None})
    # Each program once more with plain JAX: what fails on one CPU host without strict mode.
    return cases + [{**case, "key": f"plain:{case['key']}", "plain": True} for case in cases]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return _run(_cases(), tmp_path_factory)


def _run(cases: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Run every case; a driver that dies (a crash) loses that case only, and goes on."""
    tmp = tmp_path_factory.mktemp("rule-examples")
    spec, out = tmp / "cases.json", tmp / "out.jsonl"
    spec.write_text(json.dumps(cases))
    start = 0
    while start < len(cases):
        proc = subprocess.run([sys.executable, str(DRIVER), str(spec), str(out), str(start)],
                              capture_output=True, text=True, env=jax_env(), timeout=TIMEOUT * 2)
        done = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        last = max((d["index"] for d in done), default=start - 1)
        if last + 1 >= len(cases):
            break
        crashed = {"index": last + 1, "key": cases[last + 1]["key"], "status": "crash", "code": None,
                   "line": None, "error": f"driver died ({proc.returncode}): {proc.stderr[-500:]}"}
        with out.open("a") as f:
            f.write(json.dumps(crashed) + "\n")
        start = last + 2
    return {d["key"]: d for d in map(json.loads, out.read_text().splitlines())}


def verdict(case: dict[str, Any], got: dict[str, Any], plain: dict[str, Any]) -> str:
    """stopped (at a claimed line, with its code), ran, missed (ran, or stopped elsewhere, with
    markers), raised (no markers, yet stopped), or broken (fails the same way with plain JAX:
    the program does not run on one CPU host)."""
    claimed = markers(case["code"])
    if got["status"] == "error" and (got["line"], got["code"]) in claimed:
        return "stopped"
    if got["status"] == "error" and plain["status"] == "error" and got["code"] is None \
            and (got["line"], got["error"].split(":")[0]) == (plain["line"], plain["error"].split(":")[0]):
        return "broken"
    if got["status"] == "ok":
        return "missed" if claimed else "ran"
    return "missed" if claimed else "raised"


def test_rule_examples_and_fixtures_under_strict_mode(outcomes: dict[str, dict[str, Any]]) -> None:
    problems: list[str] = []
    counts: dict[str, int] = {}

    def count(name: str, hit: bool = True) -> None:
        counts[name] = counts.get(name, 0) + hit

    for case in _cases():
        if case.get("plain"):
            continue
        key = case["key"]
        got, plain = outcomes[key], outcomes[f"plain:{key}"]
        v = verdict(case, got, plain)
        claimed = markers(case["code"])
        fixture = case["rule"] is None
        construction_only = bool(claimed) and {c for _, c in claimed} <= CONSTRUCTION
        if case["fires"]:
            count("firing")
            count("own", v == "stopped" and got["code"] == case["rule"])
        if not fixture:
            count("marked" if claimed else "unmarked")
            count("marked stopped", bool(claimed) and v == "stopped")
            count("unmarked ran", not claimed and v == "ran")
        else:
            count("fixtures")
            count(f"fixtures {v}")
        expected_only = RUNTIME_ONLY.get(key)
        read = AT_THE_READ.get(key)
        if read is not None:
            if (got["status"], got["line"], got["code"]) != ("error", *read):
                problems.append(f"{key}: expected strict mode at the read {read}, got {got['code']} at "
                                f"line {got['line']}: {got['error']}")
        elif expected_only is not None:
            if (got["line"], got["code"]) != expected_only[:2]:
                problems.append(f"{key}: expected the run-time-only {expected_only[:2]}, got "
                                f"{got['code']} at line {got['line']}: {got['error']}")
        elif v == "raised" and key not in ONE_PROCESS:
            problems.append(f"{key}: no markers, but raised at line {got['line']}: {got['error']}")
        elif key in NOT_AT_RUN_TIME:
            if v == "stopped":
                problems.append(f"{key}: listed in NOT_AT_RUN_TIME, but now stopped: update the list")
        elif v == "broken" and not fixture:
            problems.append(f"{key}: fails with plain JAX too: {got['error']}")
        elif v == "missed" and got["status"] == "error":
            problems.append(f"{key}: expected one of {sorted(claimed)}, got {got['code']} at line "
                            f"{got['line']}: {got['error']}")
        elif v == "missed" and not fixture and not construction_only:
            problems.append(f"{key}: expected one of {sorted(claimed)}, but it ran")
    print(f"\nstrict mode (processes=2, reorder='raise') on the rule examples: firing examples "
          f"stopped with their own code at their line {counts.get('own', 0)}/{counts['firing']}; "
          f"examples with markers stopped at one {counts.get('marked stopped', 0)}/{counts['marked']}; "
          f"examples without markers that ran {counts.get('unmarked ran', 0)}/{counts['unmarked']}; "
          f"fixtures {counts['fixtures']}: stopped at a marker {counts.get('fixtures stopped', 0)}, "
          f"ran {counts.get('fixtures ran', 0) + counts.get('fixtures missed', 0)}, "
          f"fail on one CPU host without strict mode {counts.get('fixtures broken', 0)}")
    assert not problems, "\n".join(problems)


# Simulated platforms with 8 devices whose ids and mesh orders differ most from CPU's.
CLEAN_ON = ("tpu-v4-16", "cpu-2x4")


def test_examples_without_markers_run_on_simulated_platforms(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The linter's clean examples are clean on every target platform: under a simulated TPU
    slice or multi-process CPU layout they must run too (no false alarm from the ids or the
    builders' orders)."""
    clean = [case for case in _cases() if not case.get("plain") and case["rule"] is not None
             and not markers(case["code"])]
    cases = [{**case, "key": f"{platform}:{case['key']}", "platform": platform}
             for platform in CLEAN_ON for case in clean]
    got = _run(cases, tmp_path_factory)
    raised = [f"{key}: {result['error']}" for key, result in got.items() if result["status"] != "ok"]
    assert not raised, "\n".join(raised)
    assert len(got) == len(cases)


def test_not_at_run_time_names_real_examples() -> None:
    cases = {case["key"]: case for case in _cases()}
    assert set(NOT_AT_RUN_TIME) <= set(cases), set(NOT_AT_RUN_TIME) - set(cases)
    assert set(RUNTIME_ONLY) <= set(cases), set(RUNTIME_ONLY) - set(cases)
    assert set(PLATFORM_OF_KEY) <= set(cases), set(PLATFORM_OF_KEY) - set(cases)
    # An entry is a program with markers that runs: one without markers has nothing to excuse.
    unmarked = [key for key in NOT_AT_RUN_TIME if not markers(cases[key]["code"])]
    assert not unmarked, unmarked
