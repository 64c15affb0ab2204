"""reshard-lint check: discovery, exit status, errors, selection, noqa, stdin, rule."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from reshard_lint.rules.docs import rule_doc
from reshard_lint.rules import all_rules, rule_by_code

from .conftest import CLEAN, COMMAND, CROSS, REORDERED, run, write

HEADER = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<code>RSH\d{3}) ", re.M)


def codes(out: str) -> list[tuple[str, int, int, str]]:
    return [(m["path"], int(m["line"]), int(m["col"]), m["code"]) for m in HEADER.finditer(out)]


def test_findings_exit_1_clean_exit_0(project: Path) -> None:
    write(project, "bad.py", CROSS)
    write(project, "good.py", CLEAN)
    r = run("check", "--format", "concise", cwd=project)
    assert r.returncode == 1, r.stderr
    assert codes(r.stdout) == [("bad.py", 8, 5, "RSH201")]
    assert run("check", "good.py", cwd=project).returncode == 0
    assert run("check", "--exit-zero", cwd=project).returncode == 0


def test_default_path_is_cwd_and_skips_tool_dirs(project: Path) -> None:
    write(project, "pkg/mod.py", CROSS)
    for skipped in (".git/x.py", "build/x.py", "dist/x.py", "node_modules/x.py", "__pycache__/x.py",
                    ".tox/x.py", "venv/x.py", ".venv/x.py", "myenv/lib/x.py"):
        write(project, skipped, CROSS)
    write(project, "myenv/pyvenv.cfg", "home = /usr\n")
    r = run("check", "--format", "concise", cwd=project)
    assert [c[0] for c in codes(r.stdout)] == ["pkg/mod.py"], r.stdout


def test_explicit_file_in_a_skipped_dir_is_checked(project: Path) -> None:
    write(project, "build/gen.py", CROSS)
    r = run("check", "build/gen.py", "--format", "concise", cwd=project)
    assert [c[0] for c in codes(r.stdout)] == ["build/gen.py"]


def test_parse_error_is_reported_and_others_still_checked(project: Path) -> None:
    write(project, "a_broken.py", "import jax\nfrom jax.sharding import Mesh\nmesh = Mesh(jax.devices(,\n")
    write(project, "b_bad.py", CROSS)
    r = run("check", "--format", "concise", cwd=project)
    assert r.returncode == 1  # a finding, as flake8's E999
    found = codes(r.stdout)
    assert ("b_bad.py", 8, 5, "RSH201") in found
    assert any(c[0] == "a_broken.py" and c[3] == "RSH001" for c in found), r.stdout
    assert "could not parse" in r.stdout
    assert "1 file could not be checked (see above): a_broken.py" in r.stderr


def test_undecodable_file_is_an_rsh003_finding_with_the_reason(project: Path) -> None:
    (project / "a_latin.py").write_bytes(b"x = 1\ny = 2\nname = '\xe9'\n")
    write(project, "b_bad.py", CROSS)
    r = run("check", "--format", "concise", cwd=project)
    assert r.returncode == 1
    assert codes(r.stdout) == [("a_latin.py", 1, 1, "RSH003"), ("b_bad.py", 8, 5, "RSH201")]
    assert "a_latin.py:1:1: RSH003 could not decode the file: not valid utf-8 at byte 20" in r.stdout


def test_missing_path_is_an_rsh003_finding_others_reported(project: Path) -> None:
    # As flake8 (E902) and ruff report a path that does not exist.
    write(project, "bad.py", CROSS)
    r = run("check", "nope.py", "bad.py", "--format", "concise", cwd=project)
    assert r.returncode == 1
    assert "nope.py:1:1: RSH003 could not check the path: no such file or directory" in r.stdout
    assert codes(r.stdout) == [("bad.py", 8, 5, "RSH201"), ("nope.py", 1, 1, "RSH003")]


def test_exit_zero_covers_parse_errors(project: Path) -> None:
    write(project, "broken.py", "from jax.sharding import Mesh\nm = Mesh(jax.devices(\n")
    assert run("check", cwd=project).returncode == 1
    assert run("check", "--exit-zero", cwd=project).returncode == 0


def test_usage_errors_exit_2(project: Path) -> None:
    r = run("check", "--select", "RSH999", cwd=project)
    assert r.returncode == 2 and "RSH999" in r.stderr and "known codes" in r.stderr
    # a misspelt code of ours (another tool's, such as E501, is accepted: test_newuser.py)
    r = run("check", "--ignore", "RSHX", cwd=project)
    assert r.returncode == 2 and "RSHX" in r.stderr
    assert run("check", "--format", "xml", cwd=project).returncode == 2
    assert run("check", "--fix", "--diff", cwd=project).returncode == 2
    assert run("frobnicate", cwd=project).returncode == 2


def test_select_ignore_extend_select_by_code_and_prefix(project: Path) -> None:
    write(project, "m.py", REORDERED)
    all_codes = sorted(c[3] for c in codes(run("check", "--format", "concise", cwd=project).stdout))
    assert all_codes == ["RSH102", "RSH201", "RSH202"]

    def sel(*flags: str) -> list[str]:
        return sorted(c[3] for c in codes(run("check", "--format", "concise", *flags, cwd=project).stdout))

    assert sel("--select", "RSH2") == ["RSH201", "RSH202"]
    assert sel("--select", "RSH2", "--ignore", "RSH202") == ["RSH201"]
    assert sel("--select", "RSH201", "--extend-select", "RSH1") == ["RSH102", "RSH201"]
    # The more specific entry wins: ignore the family, keep one code.
    assert sel("--ignore", "RSH2", "--select", "RSH,RSH201") == ["RSH102", "RSH201"]
    assert sel("--ignore", "RSH") == []
    assert run("check", "--ignore", "RSH", cwd=project).returncode == 0


def test_noqa_and_show_noqa_and_unknown_noqa_codes(project: Path) -> None:
    text = REORDERED.replace("NamedSharding(half, P('x')))", "NamedSharding(half, P('x')))  # noqa: RSH201")
    text = text.replace("NamedSharding(rev, P('x')))", "NamedSharding(rev, P('x')))  # noqa: E501")
    text += "w = 1  # noqa: RSH999\n"
    write(project, "m.py", text)
    r = run("check", "--format", "concise", cwd=project)
    found = sorted(c[3] for c in codes(r.stdout))
    # A noqa naming other codes silences nothing of ours; RSH201 is silenced.
    assert found == ["RSH102", "RSH202"], r.stdout
    assert "m.py:11: unknown code RSH999 in a noqa comment" in r.stderr
    assert "silenced by noqa" in r.stderr
    r = run("check", "--format", "concise", "--show-noqa", cwd=project)
    assert re.search(r"^m\.py:8:5: RSH201 .*\[silenced by noqa\]$", r.stdout, re.M), r.stdout
    bare = REORDERED.replace("NamedSharding(half, P('x')))", "NamedSharding(half, P('x')))  # noqa")
    write(project, "m.py", bare)
    assert "RSH201" not in run("check", "--format", "concise", cwd=project).stdout


def test_stdin_with_filename(project: Path) -> None:
    r = run("check", "-", "--stdin-filename", "pkg/model.py", "--format", "concise", cwd=project, input=CROSS)
    assert r.returncode == 1
    assert codes(r.stdout) == [("pkg/model.py", 8, 5, "RSH201")]
    r = run("check", "-", cwd=project, input=CLEAN)
    assert r.returncode == 0
    r = run("check", "-", "--stdin-filename", "x.py", "--format", "concise", cwd=project,
            input=b"\xff\xfe bad")
    assert r.returncode == 1, r.stderr
    assert codes(r.stdout) == [("x.py", 1, 1, "RSH003")]
    assert "could not decode the file: not valid UTF-8 in its first lines" in r.stdout


def test_broken_pipe_is_quiet(project: Path) -> None:
    for i in range(30):
        write(project, f"m{i:02d}.py", REORDERED)
    p = subprocess.run(f"'{COMMAND}' check --no-cache | head -n 1", shell=True, cwd=project,
                       capture_output=True, text=True, timeout=300)
    assert p.stdout.count("\n") == 1
    assert "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr


def test_rule_prints_the_doc() -> None:
    r = run("rule", "RSH201")
    assert r.returncode == 0
    assert r.stdout == rule_doc(rule_by_code("RSH201"))  # type: ignore[arg-type]
    assert run("rule", "rsh202").stdout == rule_doc(rule_by_code("RSH202"))  # type: ignore[arg-type]
    r = run("rule", "RSH999")
    assert r.returncode == 2 and "unknown rule RSH999" in r.stderr


def test_rule_all_lists_codes_names_and_fixes() -> None:
    r = run("rule", "--all")
    assert r.returncode == 0
    rows = r.stdout.splitlines()
    assert rows[0].split()[:3] == ["CODE", "NAME", "FIX"]
    for rule in all_rules():
        row = next(x for x in rows if x.startswith(rule.code))
        fix = {"safe": "safe", "unsafe": "unsafe", "none": "-"}[rule.fix_safety]
        assert row.split()[:3] == [rule.code, rule.name, fix]


def test_progress_line_only_on_a_terminal(project: Path) -> None:
    import os
    import pty

    for i in range(110):
        write(project, f"m{i:03d}.py", CROSS if i < 5 else "x = 1\n")
    master, slave = pty.openpty()
    try:
        p = subprocess.run([COMMAND, "check", "--no-cache", "-j", "1"], cwd=project, stdout=subprocess.PIPE,
                           stderr=slave, timeout=300)
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        err = b"".join(chunks).decode()
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    assert p.returncode == 1
    assert "analysed 110/110 files" in err
    piped = run("check", "--no-cache", "-j", "1", cwd=project)
    assert "analysed" not in piped.stderr


def test_fifo_and_dangling_link_are_reported_not_waited_on(project: Path) -> None:
    import os

    os.mkfifo(project / "pipe.py")
    (project / "dangling.py").symlink_to(project / "nowhere.py")
    write(project, "bad.py", CROSS)
    r = run("check", "--format", "concise", cwd=project)
    assert r.returncode == 1
    assert codes(r.stdout) == [("bad.py", 8, 5, "RSH201"), ("dangling.py", 1, 1, "RSH003"),
                               ("pipe.py", 1, 1, "RSH003")]
    assert "pipe.py:1:1: RSH003 could not read the file: it is not a regular file (a FIFO)" in r.stdout
    assert "dangling.py:1:1: RSH003 could not read the file: it is a symbolic link" in r.stdout
