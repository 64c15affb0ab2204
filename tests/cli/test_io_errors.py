"""Files that cannot be checked are findings with codes of their own, as flake8 and ruff have it.

RSH003 (io-error, like flake8's E902): a file that cannot be read or decoded, or has gone.
RSH001 (parse-error, like flake8's E999): a file that cannot be parsed. Both exit 1 (0 with
--exit-zero), are reported in every format and counted in the summary, and can be
selected, ignored and excluded like a rule's code. Exit 2 stays for usage errors, bad
configuration and internal errors (RSH002).

Every case is one that really fails for root, as the tests run (chmod 000 does not stop
root; its case runs only for other users).
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Callable

import jsonschema
import pytest

from .conftest import CROSS, run, write
from .test_check import codes
from .test_formats import SCHEMA

READ = "could not read the file: "
DECODE = "could not decode the file: "
PARSE_ERROR_SOURCE = "import jax\nfrom jax.sharding import Mesh\nm = Mesh(jax.devices(,\n"


def _link(target: str) -> Callable[[Path], None]:
    return lambda p: os.symlink(target, p)


def _bytes(data: bytes) -> Callable[[Path], None]:
    return lambda p: p.write_bytes(data)


def _unreadable(p: Path) -> None:
    p.write_text(CROSS)
    p.chmod(0)


# name -> (make h.py, code, line, message start)
CASES: dict[str, tuple[Callable[[Path], None] | None, str, int, str]] = {
    "dangling-link": (_link("nowhere.py"), "RSH003", 1,
                      READ + "it is a symbolic link to a file that does not exist"),
    "link-loop": (_link("h.py"), "RSH003", 1, READ + "it is a symbolic link loop"),
    "fifo": (lambda p: os.mkfifo(p), "RSH003", 1, READ + "it is not a regular file (a FIFO)"),
    # a path given that does not exist: it may have been meant as a directory
    "vanished": (None, "RSH003", 1, "could not check the path: no such file or directory"),
    "permission-denied": (_unreadable, "RSH003", 1, READ + "permission denied"),
    "invalid-utf8-first-lines": (_bytes(b"s = '\xff'\n"), "RSH003", 1,
                                 DECODE + "not valid UTF-8 in its first lines; declare the file's encoding"),
    "invalid-utf8-later": (_bytes(b"x = 1\ny = 2\ns = '\xff'\n"), "RSH003", 1,
                           DECODE + "not valid utf-8 at byte 17; declare the file's encoding"),
    "null-byte": (_bytes(b"x = 1\x00\n"), "RSH003", 1,
                  DECODE + "it contains a null byte at offset 5; not a Python source file"),
    "bad-coding-cookie": (_bytes(b"# -*- coding: nosuch -*-\nx = 1\n"), "RSH003", 1,
                          DECODE + "bad encoding declaration: unknown encoding: nosuch"),
    "parse-error": (_bytes(PARSE_ERROR_SOURCE.encode()), "RSH001", 3, "could not parse the file: "),
}
NAMES = {"RSH001": "parse-error", "RSH003": "io-error"}
# The column of each finding: 1, but a syntax error's is where Python points (the stray comma).
COLUMN = {"parse-error": PARSE_ERROR_SOURCE.splitlines()[2].index(",") + 1}


def _make(project: Path, case: str) -> None:
    make = CASES[case][0]
    if case == "permission-denied" and os.geteuid() == 0:
        pytest.skip("root reads a chmod 000 file; the other cases fail for root too")
    if make is not None:
        make(project / "h.py")


@pytest.mark.parametrize("case", list(CASES))
def test_exit_status_and_formats(project: Path, case: str) -> None:
    _make(project, case)
    _, code, line, message = CASES[case]
    col = COLUMN.get(case, 1)
    header = f"h.py:{line}:{col}: {code} {message}"

    r = run("check", "--format", "concise", "h.py", cwd=project)
    assert r.returncode == 1, r.stdout + r.stderr
    assert codes(r.stdout) == [("h.py", line, col, code)]
    assert r.stdout.startswith(header), r.stdout
    assert "Traceback" not in r.stderr and "RSH002" not in r.stdout
    # Counted in the summary, and named as not checked.
    assert "Found 1 finding in 1 file (0 of 1 checked)." in r.stderr, r.stderr
    assert "1 file could not be checked (see above): h.py" in r.stderr

    zero = run("check", "--format", "concise", "--exit-zero", "h.py", cwd=project)
    assert zero.returncode == 0 and zero.stdout == r.stdout

    j = run("check", "--format", "json", "h.py", cwd=project)
    assert j.returncode == 1
    [item] = json.loads(j.stdout)
    assert (item["code"], item["name"], item["filename"], item["location"], item["url"], item["fix"]) == \
        (code, NAMES[code], "h.py", {"row": line, "column": col}, None, None)
    assert item["message"].startswith(message)

    for flags in (("--ignore", code), ("--extend-ignore", code), ("--ignore", "RSH0")):
        off = run("check", "--format", "concise", *flags, "h.py", cwd=project)
        assert (off.returncode, off.stdout) == (0, ""), (flags, off.stdout + off.stderr)
        assert "warning" not in off.stderr, off.stderr  # the user turned it off: no noise

    # Found when a directory is searched too (a path that is gone cannot be found so).
    if case not in ("vanished",):
        d = run("check", "--format", "concise", ".", cwd=project)
        assert d.returncode == 1 and codes(d.stdout) == [("h.py", line, col, code)], d.stdout + d.stderr


@pytest.mark.parametrize("case", ["fifo", "invalid-utf8-first-lines", "parse-error"])
def test_every_format_reports_it_at_the_place(project: Path, case: str) -> None:
    _make(project, case)
    _, code, line, message = CASES[case]
    col = COLUMN.get(case, 1)
    text = run("check", "h.py", cwd=project)
    assert text.returncode == 1 and text.stdout.startswith(f"h.py:{line}:{col}: {code} {message}"), text.stdout
    gh = run("check", "--format", "github", "h.py", cwd=project)
    assert gh.returncode == 1
    assert gh.stdout.startswith(f"::error file=h.py,line={line},col={col},"), gh.stdout
    assert f"title={code}::{code} {message}" in gh.stdout, gh.stdout
    sarif = run("check", "--format", "sarif", "h.py", cwd=project)
    assert sarif.returncode == 1
    log = json.loads(sarif.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    # A result, not only a tool notification: code scanning shows it on the file.
    [res] = log["runs"][0]["results"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert res["ruleId"] == code and rules[res["ruleIndex"]]["id"] == code
    assert rules[res["ruleIndex"]]["name"] == NAMES[code]
    assert res["level"] == "error" and res["message"]["text"].startswith(message)
    region = res["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (line, col)
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "h.py"


def test_good_files_are_still_reported_and_counted(project: Path) -> None:
    write(project, "bad.py", CROSS)
    os.symlink("nowhere.py", project / "dangling.py")
    write(project, "broken.py", PARSE_ERROR_SOURCE)
    r = run("check", "--format", "concise", cwd=project)
    assert r.returncode == 1
    assert codes(r.stdout) == [("bad.py", 8, 5, "RSH201"), ("broken.py", 3, COLUMN["parse-error"], "RSH001"),
                               ("dangling.py", 1, 1, "RSH003")]
    assert "Found 3 findings in 3 files (1 of 3 checked)" in r.stderr, r.stderr
    assert "2 files could not be checked (see above): broken.py, dangling.py" in r.stderr
    # Turning the file codes off leaves the rule's finding, and its status.
    r = run("check", "--format", "concise", "--ignore", "RSH001,RSH003", cwd=project)
    assert r.returncode == 1 and codes(r.stdout) == [("bad.py", 8, 5, "RSH201")]
    assert "could not be checked" not in r.stderr


def test_config_ignore_and_per_file_ignores(project: Path) -> None:
    os.symlink("nowhere.py", project / "dangling.py")
    os.mkdir(project / "vendor")
    os.mkfifo(project / "vendor" / "pipe.py")
    write(project, "vendor/broken.py", PARSE_ERROR_SOURCE)
    r = run("check", "--format", "concise", cwd=project)
    assert r.returncode == 1 and len(codes(r.stdout)) == 3, r.stdout
    with open(project / "pyproject.toml", "a") as f:
        f.write(textwrap.dedent("""
            [tool.reshard-lint.per-file-ignores]
            "vendor/*" = ["RSH001", "RSH003"]
            """))
    r = run("check", "--format", "concise", cwd=project)
    assert r.returncode == 1 and codes(r.stdout) == [("dangling.py", 1, 1, "RSH003")], r.stdout + r.stderr
    with open(project / "pyproject.toml", "a") as f:
        f.write('\n[tool.reshard-lint]\nignore = ["RSH003"]\n')
    r = run("check", "--format", "concise", cwd=project)
    assert (r.returncode, r.stdout) == (0, ""), r.stdout + r.stderr


def test_a_narrower_selection_warns_instead_of_hiding(project: Path) -> None:
    os.symlink("nowhere.py", project / "dangling.py")
    write(project, "broken.py", PARSE_ERROR_SOURCE)
    r = run("check", "--format", "concise", "--select", "RSH2", cwd=project)
    assert (r.returncode, r.stdout) == (0, ""), r.stdout + r.stderr
    assert ("reshard-lint: warning: dangling.py: could not read the file: it is a symbolic link to a file "
            "that does not exist (RSH003 is not selected)") in r.stderr, r.stderr
    assert "reshard-lint: warning: broken.py:3: could not parse the file: " in r.stderr
    r = run("check", "--format", "concise", "--select", "RSH003", cwd=project)
    assert r.returncode == 1 and codes(r.stdout) == [("dangling.py", 1, 1, "RSH003")]


def test_fix_goes_on_past_an_unreadable_file(project: Path) -> None:
    p = write(project, "bad.py", CROSS)
    os.symlink("nowhere.py", project / "dangling.py")
    # --unsafe-fixes: whether the RSH201 fix is safe is the rule's business, not this test's.
    r = run("check", "--unsafe-fixes", "--format", "concise", cwd=project)
    assert r.returncode == 1, r.stderr
    assert "NamedSharding(x.sharding.mesh, P('x'))" in p.read_text()
    assert codes(r.stdout) == [("dangling.py", 1, 1, "RSH003")]
    assert "Fixed 1, 1 remaining." in r.stderr
    d = run("check", "--diff", "--unsafe-fixes", cwd=project)
    assert d.returncode == 1 and "No fixes to apply; 1 finding remains." in d.stderr


def test_stdin_that_is_not_text(project: Path) -> None:
    data = b"s = '\xff'\nimport jax\n"
    r = run("check", "-", "--stdin-filename", "m.py", "--format", "concise", cwd=project, input=data)
    assert r.returncode == 1 and codes(r.stdout) == [("m.py", 1, 1, "RSH003")]
    # With --fix the source goes back unchanged on standard output, the finding to stderr.
    r = run("check", "-", "--fix", "--stdin-filename", "m.py", cwd=project, input=data)
    assert r.returncode == 1 and r.stdout_bytes == data
    assert "m.py:1:1: RSH003 could not decode the file" in r.stderr
    assert run("check", "-", "--exit-zero", cwd=project, input=data).returncode == 0
    assert run("check", "-", "--ignore", "RSH003", cwd=project, input=data).returncode == 0


def test_a_file_deleted_after_it_was_listed(tmp_path: Path) -> None:
    # The window between discovery and reading, which a subprocess cannot hit on purpose.
    from reshard_lint.engine.runner import lint_files

    class NoCache:
        directory = None  # as Cache(None, ...): disabled

        def get(self, digest: str) -> None:
            return None

        def put(self, *args: object) -> None:
            pass

    p = tmp_path / "gone.py"
    p.write_text(CROSS)
    listed = [str(p)]
    p.unlink()
    [rep] = lint_files(listed, {}, NoCache(), 1, [])  # type: ignore[arg-type]
    assert rep.error == "could not read the file: it does not exist (or was deleted after it was listed)"


def test_internal_error_still_exits_2(project: Path) -> None:
    # RSH002 is a bug in reshard-lint: always shown, and --exit-zero does not hide it.
    hook = project / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import reshard_lint.engine.engine as e\n"
        "def boom(*a, **k):\n"
        "    raise RuntimeError('boom')\n"
        "e.Engine.analyse = boom\n")
    write(project, "bad.py", CROSS)
    env = dict(os.environ, PYTHONPATH=str(hook))
    for flags in ((), ("--exit-zero",), ("--ignore", "RSH002"), ("--select", "RSH2")):
        r = run("check", "--no-cache", "-j", "1", "--format", "concise", *flags, cwd=project, env=env)
        assert r.returncode == 2, (flags, r.stdout + r.stderr)
        assert codes(r.stdout) == [("bad.py", 1, 1, "RSH002")], r.stdout + r.stderr
        assert "internal error while analysing the file: RuntimeError: boom" in r.stdout


def test_usage_and_configuration_errors_still_exit_2(project: Path) -> None:
    assert run("check", "--select", "RSH004", cwd=project).returncode == 2
    with open(project / "pyproject.toml", "a") as f:
        f.write('\n[tool.reshard-lint]\nignore = ["RSH009"]\n')
    r = run("check", cwd=project)
    assert r.returncode == 2 and "RSH009" in r.stderr
