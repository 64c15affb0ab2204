"""--fix, --unsafe-fixes, --diff on copies of tests/fixtures/fixes/NAME.in.py.

Each NAME.in.py is fixed by the installed command and must equal NAME.out.py byte for
byte (encoding, BOM and line endings included). Fixtures whose name contains "unsafe"
are run with --unsafe-fixes, the others with --fix.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import CROSS, FIX_FIXTURES, FIXTURES, REORDERED, copy_fixture, run, write

PAIRS = sorted(p.name[: -len(".in.py")] for p in FIX_FIXTURES.glob("*.in.py"))


def test_every_fixable_rule_has_a_fixture() -> None:
    from reshard_lint.rules import all_rules

    fixable = {r.code.lower() for r in all_rules() if r.fix_safety != "none"}
    assert fixable <= {n.split("_")[0] for n in PAIRS}
    assert {"crlf_rsh201_unsafe", "bom_utf8_rsh201_unsafe", "latin1_rsh201_unsafe"} <= set(PAIRS)
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


def test_fix_alone_leaves_every_device_changing_fix_as_written(project: Path) -> None:
    # Rebuilding a target on the array's mesh (RSH201, RSH202) or undoing a reorder
    # (RSH102) changes which devices hold data: unsafe, so --fix leaves the code as written.
    p = write(project, "m.py", REORDERED)
    r = run("check", "--fix", "--format", "concise", "m.py", cwd=project)
    assert p.read_text() == REORDERED
    assert r.returncode == 1
    assert [line.split(" ")[:2] for line in r.stdout.splitlines()] == [
        ["m.py:8:5:", "RSH201"], ["m.py:9:7:", "RSH102"], ["m.py:10:5:", "RSH202"]]
    r = run("check", "--unsafe-fixes", "m.py", cwd=project)
    text = p.read_text()
    assert "jax.devices()[::-1]" not in text
    assert text.count("NamedSharding(x.sharding.mesh, P('x')))") == 2
    assert r.returncode == 0, r.stdout


def test_fix_is_never_applied_on_a_noqa_line(project: Path) -> None:
    src = CROSS.replace("NamedSharding(half, P('x')))", "NamedSharding(half, P('x')))  # noqa: RSH201")
    p = write(project, "m.py", src)
    r = run("check", "--unsafe-fixes", "m.py", cwd=project)
    assert p.read_text() == src and r.returncode == 0


def test_fixes_applied_are_the_fixes_offered_whatever_other_codes_a_noqa_names(project: Path) -> None:
    # tests/fixtures/noqa.py: a noqa for another code (E501) silences nothing of ours, so
    # its line's RSH201 is reported with a fix, and that fix is applied; a bare noqa or
    # one naming the finding's code silences it, and its line stays as written.
    src = (FIXTURES / "noqa.py").read_text()
    p = write(project, "m.py", src)
    r = run("check", "--format", "json", "m.py", cwd=project)
    offered = [(f["location"]["row"], f["code"]) for f in json.loads(r.stdout) if f.get("fix")]
    assert offered == [(11, "RSH201")], r.stdout
    r = run("check", "--unsafe-fixes", "m.py", cwd=project)
    assert "No fixes to apply" not in r.stderr and "Fixed 1," in r.stderr, r.stderr
    old, new = src.splitlines(), p.read_text().splitlines()
    assert [i + 1 for i, (a, b) in enumerate(zip(old, new)) if a != b] == [11]
    assert new[10] == ("c = jax.device_put(x, NamedSharding(x.sharding.mesh, P('x')))"
                       "  # RSH201:5  # noqa: E501")
    assert r.returncode == 0, r.stdout


def test_diff_changes_nothing_and_exits_1(project: Path) -> None:
    p = write(project, "m.py", CROSS)
    assert run("check", "--diff", "m.py", cwd=project).stdout == ""  # the only fix is unsafe
    r = run("check", "--diff", "--unsafe-fixes", "m.py", cwd=project)
    assert r.returncode == 1
    assert p.read_text() == CROSS
    assert r.stdout.startswith("--- a/m.py\n+++ b/m.py\n")
    assert "-y = jax.device_put(x, NamedSharding(half, P('x')))\n" in r.stdout
    assert "+y = jax.device_put(x, NamedSharding(x.sharding.mesh, P('x')))\n" in r.stdout
    # The diff applies with patch semantics: the new file is what --fix writes.
    run("check", "--unsafe-fixes", "m.py", cwd=project)
    assert "+" + p.read_text().splitlines()[7] + "\n" in r.stdout
    clean = run("check", "--diff", "--unsafe-fixes", "m.py", cwd=project)
    assert clean.returncode == 0 and clean.stdout == ""


def test_diff_with_unsafe_fixes(project: Path) -> None:
    write(project, "m.py", REORDERED)
    safe = run("check", "--diff", "m.py", cwd=project).stdout
    both = run("check", "--diff", "--unsafe-fixes", "m.py", cwd=project).stdout
    assert safe == ""  # every fix here changes which devices hold data
    assert "-rev = Mesh(np.array(jax.devices()[::-1]), ('x',))" in both


def test_fix_only_fixes_and_reports_nothing_of_what_remains(project: Path) -> None:
    """The pre-commit fix hook (issue 56): the lint hook reports the findings, once."""
    rsh103 = "import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n\n" \
             "s = NamedSharding(jax.devices(), P('x'))\n"
    fixable = write(project, "a.py", rsh103)
    write(project, "b.py", REORDERED)  # only unsafe fixes: kept, and not reported here
    r = run("check", "--fix-only", "--no-cache", "a.py", "b.py", cwd=project)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "Fixed 1 in 1 file.\n")
    assert "Mesh(np.array(jax.devices()), ('x',))" in fixable.read_text()
    # Nothing left to fix: no output at all, though b.py keeps its findings.
    again = run("check", "--fix-only", "--no-cache", "a.py", "b.py", cwd=project)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert run("check", "--no-cache", "b.py", cwd=project).returncode == 1
    unsafe = run("check", "--fix-only", "--unsafe-fixes", "--no-cache", "b.py", cwd=project)
    assert unsafe.returncode == 0 and unsafe.stderr.startswith("Fixed ") and unsafe.stdout == ""
    assert run("check", "--fix-only", "--diff", "b.py", cwd=project).returncode == 2


def test_stdin_fix_writes_the_fixed_source_to_stdout(project: Path) -> None:
    r = run("check", "-", "--fix", "--stdin-filename", "m.py", cwd=project, input=REORDERED)
    assert r.stdout == REORDERED  # every fix here is unsafe: kept as written
    assert "RSH102" in r.stderr and "RSH201" in r.stderr and "RSH102" not in r.stdout
    assert r.returncode == 1
    r = run("check", "-", "--unsafe-fixes", "--stdin-filename", "m.py", cwd=project, input=CROSS)
    assert "NamedSharding(x.sharding.mesh, P('x')))" in r.stdout and r.returncode == 0


def test_fix_then_warm_cache_sees_the_fixed_file(project: Path) -> None:
    p = write(project, "m.py", CROSS)
    run("check", "--unsafe-fixes", cwd=project)
    r = run("check", cwd=project)
    assert r.returncode == 0, r.stdout
    assert p.read_text() != CROSS


def test_read_only_file_is_not_fixed_and_keeps_its_findings(project: Path) -> None:
    import os

    p = write(project, "m.py", CROSS)
    os.chmod(p, 0o444)
    r = run("check", "--unsafe-fixes", "--format", "concise", "m.py", cwd=project)
    assert r.returncode == 2
    assert p.read_text() == CROSS
    assert "m.py: is read-only; not fixed" in r.stderr
    assert r.stdout.startswith("m.py:8:5: RSH201 ")
    assert "Fixed 0, 1 remaining." in r.stderr


# ---- summaries that add up: each count is what a following plain `check` finds ----------

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train.py"
# Without --unsafe-fixes, the findings left with an unsafe fix are counted at the end.
UNSAFE_LEFT = r"(?:; \d+ with (?:an unsafe fix|unsafe fixes), left for --unsafe-fixes)?"
FIXED = re.compile(rf"^Fixed (\d+), (\d+) remaining{UNSAFE_LEFT}\.$", re.M)
WOULD = re.compile(r"^(?:Would fix (?P<fixed>\d+) in (?P<files>\d+) files?; (?P<remain>\d+) would remain"
                   rf"|No (?:safe )?fixes to apply(?:; (?P<left>\d+) findings? remains?)?){UNSAFE_LEFT}\.$", re.M)


def _tree(project: Path) -> dict[str, bytes]:
    """The bundled example, more fixable files, and files whose findings no fix removes."""
    import os
    import shutil

    shutil.copyfile(EXAMPLE, project / "train.py")
    write(project, "pkg/m.py", REORDERED)
    write(project, "pkg/c.py", CROSS)
    write(project, "pkg/kept.py", CROSS.replace("NamedSharding(half, P('x')))",
                                                "NamedSharding(half, P('x')))  # noqa: RSH201"))
    write(project, "broken.py", "import jax\nfrom jax.sharding import Mesh\nm = Mesh(jax.devices(,\n")
    os.symlink("nowhere.py", project / "dangling.py")
    return _snapshot(project)


def _snapshot(project: Path) -> dict[str, bytes]:
    return {str(p.relative_to(project)): p.read_bytes() for p in sorted(project.rglob("*.py"))
            if p.is_file() and ".reshard-lint-cache" not in p.parts}


def _found(project: Path) -> int:
    """How many findings a plain check reports (its output and its own summary agree)."""
    from .test_check import codes

    r = run("check", "--format", "concise", cwd=project)
    n = len(codes(r.stdout))
    assert n == len(r.stdout.splitlines()), r.stdout
    m = re.search(r"^Found (\d+) findings? in ", r.stderr, re.M)
    assert (int(m[1]) if m else 0) == n, r.stderr
    assert r.returncode == (1 if n else 0)
    return n


@pytest.mark.parametrize("flags", [("--fix",), ("--unsafe-fixes",), ("--fix", "--unsafe-fixes")],
                         ids=["fix", "unsafe-fixes", "fix-unsafe-fixes"])
def test_fix_summary_counts_what_check_then_finds(project: Path, flags: tuple[str, ...]) -> None:
    _tree(project)
    before = _found(project)
    r = run("check", *flags, cwd=project)
    m = FIXED.search(r.stderr)
    assert m, r.stderr
    assert int(m[2]) == _found(project), r.stderr
    if "--unsafe-fixes" in flags:
        assert int(m[1]) > 0 and int(m[2]) < before  # the tree has unsafe fixes to apply
    # A second run has nothing left to fix and reports the same findings.
    again = run("check", *flags, cwd=project)
    assert f"Fixed 0, {m[2]} remaining" in again.stderr, again.stderr


@pytest.mark.parametrize("unsafe", [False, True], ids=["diff", "diff-unsafe-fixes"])
def test_diff_summary_counts_what_remains_after_the_fix(project: Path, unsafe: bool) -> None:
    original = _tree(project)
    before = _found(project)
    extra = ("--unsafe-fixes",) if unsafe else ()
    d = run("check", "--diff", *extra, cwd=project)
    assert _snapshot(project) == original  # --diff writes nothing
    m = WOULD.search(d.stderr)
    assert m, d.stderr
    would_fix = int(m["fixed"] or 0)
    would_remain = int(m["remain"] or m["left"] or 0)
    files = int(m["files"] or 0)
    assert d.stdout.count("\n--- a/") + d.stdout.startswith("--- a/") == files
    assert d.returncode == (1 if files or would_remain else 0)
    # Apply the same fixes for real: --diff said what --fix does.
    f = run("check", "--unsafe-fixes" if unsafe else "--fix", cwd=project)
    fm = FIXED.search(f.stderr)
    assert fm, f.stderr
    assert (int(fm[1]), int(fm[2])) == (would_fix, would_remain), (d.stderr, f.stderr)
    after = _snapshot(project)
    assert sum(after[k] != original[k] for k in original) == files
    assert _found(project) == would_remain
    if unsafe:
        assert would_fix > 0 and would_remain < before  # counted after the fixes, not before


@pytest.mark.parametrize("unsafe", [False, True], ids=["diff", "diff-unsafe-fixes"])
def test_diff_summary_on_the_bundled_example(project: Path, unsafe: bool) -> None:
    import shutil

    # It once said "Would fix 2 in 1 file; 4 would remain." where --fix left 2.
    shutil.copyfile(EXAMPLE, project / "train.py")
    extra = ("--unsafe-fixes",) if unsafe else ()
    d = run("check", "--diff", *extra, cwd=project)
    m = WOULD.search(d.stderr)
    assert m, d.stderr
    fixed, remain = int(m["fixed"] or 0), int(m["remain"] or m["left"] or 0)
    f = run("check", "--unsafe-fixes" if unsafe else "--fix", cwd=project)
    assert f"Fixed {fixed}, {remain} remaining" in f.stderr, (d.stderr, f.stderr)
    assert _found(project) == remain
