"""--fix, --unsafe-fixes, --diff on copies of tests/fixtures/fixes/NAME.in.py.

Each NAME.in.py is fixed by the installed command and must equal NAME.out.py byte for
byte (encoding, BOM and line endings included). Fixtures whose name contains "unsafe"
are run with --unsafe-fixes, the others with --fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CROSS, FIX_FIXTURES, REORDERED, copy_fixture, run, write

PAIRS = sorted(p.name[: -len(".in.py")] for p in FIX_FIXTURES.glob("*.in.py"))


def test_every_fixable_rule_has_a_fixture() -> None:
    from reshard_lint.rules import all_rules

    fixable = {r.code.lower() for r in all_rules() if r.fix_safety != "none"}
    assert fixable <= {n.split("_")[0] for n in PAIRS}
    assert {"crlf_rsh201", "bom_utf8_rsh201", "latin1_rsh201"} <= set(PAIRS)
    for name in PAIRS:
        assert (FIX_FIXTURES / f"{name}.out.py").exists(), name


@pytest.mark.parametrize("name", PAIRS)
def test_fix_fixture(name: str, project: Path) -> None:
    target = copy_fixture(f"{name}.in.py", project / f"{name}.py")
    flag = "--unsafe-fixes" if "unsafe" in name else "--fix"
    r = run("check", flag, "--no-cache", target.name, cwd=project)
    assert r.returncode in (0, 1), r.stderr
    assert "Fixed " in r.stderr
    expected = (FIX_FIXTURES / f"{name}.out.py").read_bytes()
    assert target.read_bytes() == expected
    # A second run has nothing left to do and changes nothing.
    r2 = run("check", flag, "--no-cache", target.name, cwd=project)
    assert target.read_bytes() == expected
    assert "Fixed 0," in r2.stderr


def test_safe_only_without_unsafe_flag(project: Path) -> None:
    p = write(project, "m.py", REORDERED)
    r = run("check", "--fix", "--format", "concise", "m.py", cwd=project)
    text = p.read_text()
    assert "NamedSharding(x.sharding.mesh, P('x')))" in text  # RSH201 and RSH202: safe
    assert "jax.devices()[::-1]" in text  # RSH102 is unsafe: left alone
    assert r.returncode == 1
    assert r.stdout.startswith("m.py:9:7: RSH102 ")
    assert "Fixed 2, 1 remaining." in r.stderr
    r = run("check", "--unsafe-fixes", "m.py", cwd=project)
    assert "jax.devices()[::-1]" not in p.read_text()
    assert r.returncode == 0 and "Fixed 1, 0 remaining." in r.stderr


def test_fix_is_never_applied_on_a_noqa_line(project: Path) -> None:
    src = CROSS.replace("NamedSharding(half, P('x')))", "NamedSharding(half, P('x')))  # noqa: RSH201")
    p = write(project, "m.py", src)
    r = run("check", "--fix", "m.py", cwd=project)
    assert p.read_text() == src and r.returncode == 0


def test_diff_changes_nothing_and_exits_1(project: Path) -> None:
    p = write(project, "m.py", CROSS)
    r = run("check", "--diff", "m.py", cwd=project)
    assert r.returncode == 1
    assert p.read_text() == CROSS
    assert r.stdout.startswith("--- a/m.py\n+++ b/m.py\n")
    assert "-y = jax.device_put(x, NamedSharding(half, P('x')))\n" in r.stdout
    assert "+y = jax.device_put(x, NamedSharding(x.sharding.mesh, P('x')))\n" in r.stdout
    # The diff applies with patch semantics: the new file is what --fix writes.
    run("check", "--fix", "m.py", cwd=project)
    assert "+" + p.read_text().splitlines()[7] + "\n" in r.stdout
    clean = run("check", "--diff", "m.py", cwd=project)
    assert clean.returncode == 0 and clean.stdout == ""


def test_diff_with_unsafe_fixes(project: Path) -> None:
    write(project, "m.py", REORDERED)
    safe = run("check", "--diff", "m.py", cwd=project).stdout
    both = run("check", "--diff", "--unsafe-fixes", "m.py", cwd=project).stdout
    assert "[::-1]" not in "".join(x for x in safe.splitlines() if x.startswith("+"))
    assert "-rev = Mesh(np.array(jax.devices()[::-1]), ('x',))" in both


def test_stdin_fix_writes_the_fixed_source_to_stdout(project: Path) -> None:
    r = run("check", "-", "--fix", "--stdin-filename", "m.py", cwd=project, input=REORDERED)
    assert "NamedSharding(x.sharding.mesh, P('x')))" in r.stdout
    assert "jax.devices()[::-1]" in r.stdout  # unsafe: kept
    assert "RSH102" in r.stderr and "RSH102" not in r.stdout
    assert r.returncode == 1


def test_fix_then_warm_cache_sees_the_fixed_file(project: Path) -> None:
    p = write(project, "m.py", CROSS)
    run("check", "--fix", cwd=project)
    r = run("check", cwd=project)
    assert r.returncode == 0, r.stdout
    assert p.read_text() != CROSS


def test_read_only_file_is_not_fixed_and_keeps_its_findings(project: Path) -> None:
    import os

    p = write(project, "m.py", CROSS)
    os.chmod(p, 0o444)
    r = run("check", "--fix", "--format", "concise", "m.py", cwd=project)
    assert r.returncode == 2
    assert p.read_text() == CROSS
    assert "m.py: is read-only; not fixed" in r.stderr
    assert r.stdout.startswith("m.py:8:5: RSH201 ")
    assert "Fixed 0, 1 remaining." in r.stderr
