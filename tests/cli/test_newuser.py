"""What a new user trips on (issue 56, items 3-7), through the real command and flake8."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import CROSS, REORDERED, ROOT, run, write


# --- install hints and links that cannot work ---------------------------------------------

def test_lsp_without_pygls_names_what_can_be_installed(tmp_path: Path) -> None:
    # An environment without pygls: a module of that name that fails to import, first on the path.
    (tmp_path / "pygls.py").write_text("raise ImportError('No module named pygls')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    r = run("lsp", env=env)
    assert r.returncode == 2
    assert "pip install 'pygls>=1.3'" in r.stderr
    assert "pip install '/path/to/reshard-lint[lsp]'" in r.stderr
    # never the bare name, which no index serves (and anyone could publish)
    assert "install 'reshard-lint[lsp]'" not in r.stderr
    # what the hint installs is what the extra installs
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^lsp = \["pygls>=1\.3"\]$', pyproject, re.MULTILINE)


def test_no_link_to_an_address_that_is_not_hosted(tmp_path: Path) -> None:
    write(tmp_path, "m.py", REORDERED)
    sarif = json.loads(run("check", "--format", "sarif", cwd=tmp_path).stdout)
    driver = sarif["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    for rule in driver["rules"]:
        assert "helpUri" not in rule
        if rule["id"].startswith("RSH") and rule["id"] >= "RSH100":
            # the page travels in the log itself, as `reshard-lint rule CODE` prints it
            page = run("rule", rule["id"]).stdout
            assert rule["help"]["markdown"].strip() == page.strip()
            assert rule["fullDescription"]["text"]
    data = json.loads(run("check", "--format", "json", cwd=tmp_path).stdout)
    assert data and all(item["url"] is None for item in data)
    # no output and no module of the package names the unhosted repository
    hosted = "github.com/reshard-lint"
    for fmt in ("text", "json", "sarif", "github", "concise"):
        assert hosted not in run("check", "--format", fmt, cwd=tmp_path).stdout
    for path in (ROOT / "reshard_lint").rglob("*.py"):
        assert hosted not in path.read_text(encoding="utf-8"), path


# --- other tools' codes in select and ignore -----------------------------------------------

def _codes(stdout: str) -> list[str]:
    return sorted(line.split(" ")[1] for line in stdout.splitlines() if line.strip())


def test_other_tools_codes_are_accepted_and_a_misspelt_rsh_code_is_not(tmp_path: Path) -> None:
    write(tmp_path, "m.py", REORDERED)
    every = run("check", "--format", "concise", "m.py", cwd=tmp_path)
    assert every.returncode == 1 and _codes(every.stdout) == ["RSH102", "RSH201", "RSH202"]
    r = run("check", "--format", "concise", "--ignore", "RSH2,E501", "m.py", cwd=tmp_path)
    assert (r.returncode, _codes(r.stdout), r.stderr.count("unknown code")) == (1, ["RSH102"], 0)
    r = run("check", "--format", "concise", "--select", "RSH2,E,W291,PLR0913", "m.py", cwd=tmp_path)
    assert (r.returncode, _codes(r.stdout)) == (1, ["RSH201", "RSH202"])
    # the same list, shared with flake8 (a real flake8 process with the plugin)
    f8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "RSH",
                         "--extend-ignore", "RSH2,E501", "m.py"], cwd=tmp_path, capture_output=True,
                        text=True, timeout=300)
    assert [line.split(" ")[1] for line in f8.stdout.splitlines()] == ["RSH102"]
    for bad in ("RSH999", "RSHX", "rsh2x", "E5-01"):
        r = run("check", "--ignore", f"E501,{bad}", "m.py", cwd=tmp_path)
        assert r.returncode == 2 and r.stdout == "", (bad, r.stderr)
        assert "--ignore: " in r.stderr and repr(bad.upper()) in r.stderr
    # in the configuration, too
    write(tmp_path, "pyproject.toml", '[tool.reshard-lint]\nignore = ["RSH2", "E501"]\n'
                                      'select = ["RSH", "F"]\n'
                                      '[tool.reshard-lint.per-file-ignores]\n"m.py" = ["E402", "RSH102"]\n')
    r = run("check", "--format", "concise", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr.count("warning")) == (0, "", 0)
    write(tmp_path, "pyproject.toml", '[tool.reshard-lint]\nignore = ["RSH999", "E501"]\n')
    r = run("check", cwd=tmp_path)
    assert r.returncode == 2 and "unknown code 'RSH999'" in r.stderr


# --- a syntax error at its column -----------------------------------------------------------

def test_parse_error_at_the_column_python_names(tmp_path: Path) -> None:
    write(tmp_path, "bad.py", 'import jax\nmesh = jax.make_mesh((8,), ("x",)) + (\n')
    r = run("check", "--format", "concise", "bad.py", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stdout.startswith("bad.py:2:38: RSH001 could not parse the file: '(' was never closed "
                               "(line 2, column 38)")
    text = run("check", "bad.py", cwd=tmp_path).stdout
    # the caret under the unclosed bracket, not under the line's first character
    assert '2 | mesh = jax.make_mesh((8,), ("x",)) + (\n  | ' + " " * 37 + "^\n" in text
    [item] = json.loads(run("check", "--format", "json", "bad.py", cwd=tmp_path).stdout)
    assert item["location"] == {"row": 2, "column": 38}
    # flake8 (a real process) reports the same error on the same line; its E999 column is
    # Python's 1-based offset taken as 0-based, one further than the bracket.
    f8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "E9,RSH", "bad.py"],
                        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert f8.stdout.startswith("bad.py:2:39: E999 SyntaxError: '(' was never closed")
    # a column past the line's end (an unterminated string runs to the end of the file) is the line's end
    write(tmp_path, "eof.py", "x = 1\ny = (1 +\n")
    assert run("check", "--format", "concise", "eof.py", cwd=tmp_path).stdout.startswith("eof.py:2:5: RSH001")


# --- standard input without a file name -----------------------------------------------------

MESHES = """\
import jax
import numpy as np
from jax.sharding import Mesh

mesh = Mesh(np.array(jax.devices()), ('x',))
half = Mesh(np.array(jax.devices()[:4]), ('x',))
"""
EVALUATE = """\
import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from pkg.meshes import half, mesh

x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
y = jax.device_put(x, NamedSharding(half, P('x')))
"""


def test_stdin_without_a_file_name_says_the_project_was_not_used(project: Path) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", MESHES)
    write(project, "pkg/evaluate.py", EVALUATE)
    named = run("check", "--format", "concise", "--stdin-filename", "pkg/evaluate.py", "-",
                cwd=project, input=EVALUATE)
    assert named.returncode == 1 and named.stdout.startswith("pkg/evaluate.py:8:5: RSH201")
    assert "note:" not in named.stderr
    alone = run("check", "-", cwd=project, input=EVALUATE)
    assert alone.returncode == 0 and alone.stdout == ""  # the status is the text's own
    note = [line for line in alone.stderr.splitlines() if "note:" in line]
    assert len(note) == 1
    assert "imports pkg.meshes from the project" in note[0] and "--stdin-filename" in note[0]
    # from inside the package, through a relative import, too
    rel = EVALUATE.replace("from pkg.meshes import", "from .meshes import")
    r = run("check", "-", cwd=project / "pkg", input=rel)
    assert "imports .meshes from the project" in r.stderr
    # a self-contained text loses nothing: no note
    r = run("check", "--format", "concise", "-", cwd=project, input=CROSS)
    assert r.returncode == 1 and "note:" not in r.stderr


# --- the bundled example says what check reports ------------------------------------------

def test_bundled_example_and_readme_state_what_check_reports() -> None:
    r = run("check", "--format", "concise", "--isolated", "examples", cwd=ROOT)
    codes = _codes(r.stdout)
    assert codes == ["RSH102", "RSH201", "RSH202", "RSH301"]
    doc = (ROOT / "examples" / "train.py").read_text().split('"""')[1]
    readme = (ROOT / "README.md").read_text()
    assert "finds four bugs" in doc and "reports four findings" in readme
    assert all(code in doc for code in codes)


# --- long messages: wrapped on a terminal, one line elsewhere -------------------------------

def _on_terminal(args: list[str], cwd: Path, columns: int) -> str:
    """The command's standard output when it is a terminal (a pseudo-terminal here)."""
    import pty

    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS=str(columns))
    env.pop("RESHARD_LINT_CACHE_DIR", None)
    proc = subprocess.Popen([str(Path(sys.executable).parent / "reshard-lint"), *args], cwd=cwd,
                            stdout=slave, stderr=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=300) == 1
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_text_wraps_long_messages_on_a_terminal_only(tmp_path: Path) -> None:
    write(tmp_path, "m.py", REORDERED)
    piped = run("check", "--no-cache", cwd=tmp_path).stdout
    concise = run("check", "--no-cache", "--format", "concise", cwd=tmp_path).stdout.splitlines()
    # to a pipe: each message whole on the finding's first line, as concise prints it
    assert all(line in piped.splitlines() for line in concise)
    assert max(len(line) for line in concise) > 300
    shown = _on_terminal(["check", "--no-cache"], tmp_path, 80)
    assert max(len(line) for line in shown.splitlines()) <= 80
    # the same words, the first line still path:line:col: CODE, continuation lines indented
    firsts = [line for line in shown.splitlines() if line.startswith("m.py:")]
    assert [line.split(" ")[:2] for line in firsts] == [line.split(" ")[:2] for line in concise]
    for line in concise:
        start = shown.index(line.split(" ")[0] + " ")
        assert " ".join(shown[start:].split())[:len(line)] == line
    assert "\n    " in shown
    # a wider terminal wraps later; concise never wraps, on a terminal either
    wide = _on_terminal(["check", "--no-cache"], tmp_path, 200)
    assert 80 < max(len(line) for line in wide.splitlines()) <= 200
    assert _on_terminal(["check", "--no-cache", "--format", "concise"], tmp_path, 80).splitlines() == concise


# --- coverage takes --runtime and --platforms, as check does -------------------------------

GLOBAL_TO_ONE_DEVICE = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
y = jax.device_put(x, jax.devices()[0])
"""


def test_coverage_runtime_as_check(project: Path) -> None:
    write(project, "m.py", GLOBAL_TO_ONE_DEVICE)

    def site(*args: str) -> dict:
        r = run("coverage", "--format", "json", "--sites", *args, cwd=project)
        assert r.returncode == 0, r.stderr
        return [s for s in json.loads(r.stdout)["site_list"] if s["line"] == 7][0]

    def check(*args: str) -> list[str]:
        return _codes(run("check", "--format", "concise", *args, cwd=project).stdout)

    # auto: no sign of multi-controller code, so check is silent and coverage cannot resolve
    assert check() == [] and site()["verdict"] == "unresolved"
    multi = site("--runtime", "multi-controller")
    assert check("--runtime", "multi-controller") == ["RSH301"]
    assert multi["verdict"] == "crossing" and "RSH301" in json.dumps(multi)
    single = site("--runtime", "single-controller")
    assert check("--runtime", "single-controller") == []
    assert single["verdict"] == "crossing"
    assert single["detail"].startswith('RSH301 silent (runtime = "single-controller")')
    assert site("--runtime", "multi-controller", "--platforms", "cpu")["verdict"] == "crossing"
    bad = run("coverage", "--runtime", "sometimes", cwd=project)
    assert bad.returncode == 2 and "--runtime" in bad.stderr
