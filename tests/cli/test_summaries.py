"""What `reshard-lint check` says around its findings: the summary lines on standard error,
parse errors the prefilter would not see, missing paths, unknown options, unsafe fixes left."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import CROSS, ROOT, run, write

# A transfer whose target is a parameter no call site feeds: no finding, one unresolved site.
UNRESOLVED = """\
import jax


def put(x, sharding):
    return jax.device_put(x, sharding)
"""
COVERAGE_POINTER = ("reshard-lint coverage lists the transfer sites the analysis could not resolve "
                    "(-v counts them here).")


def test_a_clean_run_points_to_coverage(project: Path) -> None:
    write(project, "m.py", UNRESOLVED)
    r = run("check", cwd=project)
    assert (r.returncode, r.stdout) == (0, "")
    assert r.stderr.splitlines() == ["No findings in 1 file.", COVERAGE_POINTER]
    q = run("check", "--quiet", cwd=project)
    assert (q.returncode, q.stdout, q.stderr) == (0, "", "")


def test_verbose_counts_the_unresolved_sites_as_coverage_does(project: Path) -> None:
    write(project, "m.py", UNRESOLVED)
    write(project, "n.py", UNRESOLVED.replace("put(", "put2(", 1))
    cov = json.loads(run("coverage", "--format", "json", cwd=project).stdout)
    assert (cov["sites"], cov["verdicts"]["unresolved"]) == (2, 2)
    for args in ((), ("-j1",)):
        r = run("check", "-v", *args, cwd=project)
        assert r.returncode == 0
        assert r.stderr.splitlines()[-2:] == [
            "No findings in 2 files.", "2 of 2 transfer sites could not be resolved (reshard-lint coverage lists them)."]
    s = run("check", "-v", "-", input=UNRESOLVED, cwd=project)
    assert s.stderr.splitlines()[-1] == "1 of 1 transfer site could not be resolved (reshard-lint coverage lists them)."
    assert "transfer site" not in run("check", "-v", "-q", cwd=project).stderr


def test_findings_have_no_coverage_line(project: Path) -> None:
    write(project, "m.py", CROSS)
    r = run("check", cwd=project)
    assert r.returncode == 1 and "coverage" not in r.stderr


@pytest.mark.parametrize("text, col", [("def f(:\n    pass\n", 7), ("x = (1,\n", 5), ("print 'hello'\n", 1)])
def test_a_syntax_error_is_rsh001_without_any_mesh_words(project: Path, text: str, col: int) -> None:
    """The prefilter rules these files out by their words; they are still parsed."""
    write(project, "broken.py", text)
    write(project, "fine.py", "x = 1\n")
    for attempt in ("cold", "warm"):
        r = run("check", "--format", "concise", cwd=project)
        assert r.returncode == 1, (attempt, r.stderr)
        # at the column Python names: the stray ':', the unclosed '(', the statement
        assert r.stdout.startswith(f"broken.py:1:{col}: RSH001 could not parse the file: "), (attempt, r.stdout)
        assert r.stderr.splitlines() == ["Found 1 finding in 1 file (1 of 2 checked).",
                                         "1 file could not be checked (see above): broken.py"], attempt
    s = run("check", "--format", "concise", "-", "--stdin-filename", "broken.py", input=text, cwd=project)
    assert s.returncode == 1 and s.stdout.startswith(f"broken.py:1:{col}: RSH001 could not parse the file: ")


@pytest.mark.parametrize("text", [
    "return 1\n",  # ast.parse takes it; compiling it fails
    "x = 1\nfrom __future__ import annotations\n",  # the same
    "def f[T](x: T) -> T:\n    return x\n",  # type parameters: the engine reads them on Python 3.11 too
])
def test_a_file_only_the_compiler_refuses_is_not_a_parse_error(project: Path, text: str) -> None:
    write(project, "m.py", text)
    r = run("check", cwd=project)
    assert (r.returncode, r.stdout) == (0, ""), r.stderr


def test_a_missing_path_is_named_as_a_path(project: Path) -> None:
    write(project, "m.py", "x = 1\n")
    r = run("check", "--format", "concise", "nope/", "gone.py", "m.py", cwd=project)
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        "gone.py:1:1: RSH003 could not check the path: no such file or directory",
        "nope/:1:1: RSH003 could not check the path: no such file or directory"]
    assert "could not read the file" not in r.stdout


@pytest.mark.parametrize("command", ["check", "coverage"])
def test_an_unknown_option_prints_the_subcommands_usage(project: Path, command: str) -> None:
    r = run(command, "--no-such-flag", ".", cwd=project)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"usage: reshard-lint {command} [-h]"), r.stderr
    assert r.stderr.splitlines()[-1] == f"reshard-lint {command}: error: unrecognized arguments: --no-such-flag"
    top = run("--no-such-flag", command, cwd=project)
    assert top.returncode == 2 and top.stderr.startswith("usage: reshard-lint [-h] [--version] COMMAND")


def test_fix_with_only_unsafe_fixes_names_unsafe_fixes(project: Path) -> None:
    """The bundled example: four findings, three of them with an unsafe fix, none safe."""
    shutil.copyfile(ROOT / "examples" / "train.py", project / "train.py")
    before = (project / "train.py").read_bytes()
    summary = run("check", cwd=project).stderr.splitlines()[-1]
    assert summary == "Found 4 findings in 1 file (1 checked) (3 with --unsafe-fixes)."
    f = run("check", "--fix", cwd=project)
    assert f.returncode == 1
    assert f.stderr.splitlines()[-1] == "Fixed 0, 4 remaining; 3 with unsafe fixes, left for --unsafe-fixes."
    assert (project / "train.py").read_bytes() == before
    d = run("check", "--diff", cwd=project)
    assert (d.returncode, d.stdout) == (1, "")
    assert d.stderr.splitlines()[-1] == \
        "No safe fixes to apply; 4 findings remain; 3 with unsafe fixes, left for --unsafe-fixes."
    u = run("check", "--unsafe-fixes", cwd=project)
    assert u.stderr.splitlines()[-1] == "Fixed 3, 1 remaining."
    assert run("check", "--fix", "--quiet", cwd=project).stderr == ""


def test_format_has_help() -> None:
    r = run("check", "--help")
    block = r.stdout.split("  --format {text,concise,json,sarif,github}", 1)[1].split("  --exit-zero", 1)[0]
    assert "how findings are printed" in block and "docs/output-formats.md" in block
