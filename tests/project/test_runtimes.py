"""Where code runs (docs/runtimes.md), through every front end.

tests/fixtures/runtimes is a project whose files say where they run: a conftest.py that
asks for 8 CPU devices, a notebook that sets XLA_FLAGS, a module whose import does, a
Pathways package, colocated Python, a test that starts the distributed runtime. Each file
states what is reported in it with `# RSHnnn:col` markers; the engine, `reshard-lint check`
and flake8 must find exactly those. Then the settings: `per-file-runtime` in pyproject.toml,
flake8's `--reshard-per-file-runtime`, their errors, and the cache following the files a
decision read.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reshard_lint.engine.engine import Engine
from reshard_lint.rules import expected_markers

from ..conftest import FIXTURES, tool

ROOT = FIXTURES / "runtimes"
FILES = sorted(ROOT.rglob("*.py"))


def _expected(path: Path) -> list[tuple[int, int, str]]:
    return expected_markers(path.read_text(encoding="utf-8"))


def _want(root: Path = ROOT) -> list[tuple[str, int, int, str]]:
    return sorted((p.relative_to(root).as_posix(), line, col, code)
                  for p in root.rglob("*.py") for line, col, code in _expected(p))


def _check(root: Path, *args: str) -> tuple[int, list[tuple[str, int, int, str]]]:
    proc = subprocess.run([tool("reshard-lint"), "check", "--format", "json", *args, "."],
                          capture_output=True, text=True, cwd=root, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, sorted((f["filename"], f["location"]["row"], f["location"]["column"], f["code"])
                                   for f in json.loads(proc.stdout))


def _flake8(root: Path, *args: str) -> list[tuple[str, int, int, str]]:
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select=RSH", *args, "."],
                          capture_output=True, text=True, cwd=root, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    out = []
    for line in proc.stdout.splitlines():
        m = re.match(r"\./(.+?):(\d+):(\d+): (RSH\d{3}) ", line)
        assert m, line
        out.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)))
    return sorted(out)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_engine_finds_exactly_the_markers(path: Path) -> None:
    result = Engine().lint_source(path.read_text(encoding="utf-8"), str(path))
    assert result.error is None
    assert sorted((d.line, d.col + 1, d.code) for d in result.diagnostics) == _expected(path)


def test_check_and_flake8_find_exactly_the_markers() -> None:
    want = _want()
    assert ("tests/helpers.py", 9, 5, "RSH201") in want  # (the fixture's claims, as a reader checks them)
    assert _check(ROOT, "--no-cache") == (1, want)
    assert _flake8(ROOT, "--isolated") == want


def test_the_decisions_read_the_files_they_name() -> None:
    """A result holds while the conftest.py and the imported module it read are unchanged."""
    for rel, read in (("tests/test_moves.py", "tests/conftest.py"), ("app/demo.py", "app/cpu_setup.py"),
                      ("app/serve.py", "app/pw/__init__.py")):
        path = ROOT / rel
        result = Engine().lint_source(path.read_text(encoding="utf-8"), str(path))
        assert str(ROOT / read) in result.deps, (rel, sorted(result.deps))


def test_coverage_counts_what_each_decision_silenced() -> None:
    proc = subprocess.run([tool("reshard-lint"), "coverage", "--format", "json", "."],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["runtime_decisions"] == [
        {"reason": "colocated Python", "files": 1, "findings": 2, "codes": {"RSH201": 2}},
        {"reason": "Pathways: jax_platforms='proxy' in app/pw/__init__.py (imported)", "files": 1, "findings": 1,
         "codes": {"RSH201": 1}},
        {"reason": "single process: --xla_force_host_platform_device_count in app/cpu_setup.py (imported)",
         "files": 1, "findings": 1, "codes": {"RSH201": 1}},
        {"reason": "single process: --xla_force_host_platform_device_count in the file", "files": 1,
         "findings": 1, "codes": {"RSH201": 1}},
        {"reason": "single process: jax_num_cpu_devices in tests/conftest.py", "files": 1, "findings": 1,
         "codes": {"RSH201": 1}},
        {"reason": "single process: jax_num_cpu_devices in the file", "files": 1, "findings": 1,
         "codes": {"RSH201": 1}},
    ]
    # A silenced crossing is still a crossing the analysis resolved; --sites says why it is silent.
    assert out["verdicts"]["crossing"] == 15
    sites = subprocess.run([tool("reshard-lint"), "coverage", "--sites", "."],
                           capture_output=True, text=True, cwd=ROOT, timeout=300).stdout
    assert ("docs/notebook.py:10:5: device_put: crossing: RSH201 silent (single process: "
            "--xla_force_host_platform_device_count in the file): jax.device_put moves 'x'") in sites
    assert "runtime decisions (the multi-controller rules are silent there):" in sites
    assert "        1         2  colocated Python (RSH201 2)" in sites


PER_FILE = """[project]
name = "runtimes"
version = "0"

[tool.reshard-lint.per-file-runtime]
"tests/**" = "single-controller"
"docs/*.py" = "multi-controller"
"""


def test_per_file_runtime_overrides_the_detection(tmp_path: Path) -> None:
    root = tmp_path / "runtimes"
    shutil.copytree(ROOT, root)
    (root / "pyproject.toml").write_text(PER_FILE, encoding="utf-8")
    want = [f for f in _want(root) if not f[0].startswith("tests/") or f[3] in ("RSH102", "RSH202")]
    # docs/*.py say multi-controller: the notebook's own XLA_FLAGS no longer decides.
    want = sorted(want + [("docs/notebook.py", 10, 5, "RSH201"), ("docs/num_cpu_env.py", 10, 5, "RSH201")])
    assert _check(root, "--no-cache")[1] == want
    cache = str(tmp_path / "cache")
    assert _check(root, "--cache-dir", cache)[1] == want
    assert _check(root, "--cache-dir", cache)[1] == want  # warm
    assert _flake8(root) == want  # the plugin reads the project's table
    # flake8's own option replaces the project's table (globs from the current directory).
    assert _flake8(root, "--reshard-per-file-runtime", "app/*.py:single-controller") == sorted(
        [f for f in _want(root) if not f[0].startswith("app/")])
    (root / "setup.cfg").write_text("[flake8]\nreshard-per-file-runtime =\n    app/*.py: single-controller\n"
                                    "    docs/*: single-controller\n", encoding="utf-8")
    assert _flake8(root) == sorted(f for f in _want(root) if not f[0].startswith(("app/", "docs/")))


def test_the_same_text_under_two_globs_is_two_results(tmp_path: Path) -> None:
    """The cache keys results by content: a per-file runtime makes them the path's."""
    cross = (ROOT / "tests" / "helpers.py").read_text(encoding="utf-8")
    for rel in ("a/m.py", "b/m.py"):
        (tmp_path / rel).parent.mkdir(parents=True)
        (tmp_path / rel).write_text(cross, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.reshard-lint.per-file-runtime]\n"a" = "single-controller"\n',
                                             encoding="utf-8")
    cache = str(tmp_path / "cache")
    for _ in range(2):  # cold, then warm
        assert _check(tmp_path, "--cache-dir", cache)[1] == [("b/m.py", 9, 5, "RSH201")]


@pytest.mark.parametrize("body, words", [
    ('[tool.reshard-lint.per-file-runtime]\n"tests/*" = "single"\n',
     ["per-file-runtime 'tests/*' = 'single'", "'auto', 'multi-controller', 'single-controller'"]),
    ('[tool.reshard-lint]\nper-file-runtime = ["tests/*"]\n', ["per-file-runtime must be a table"]),
])
def test_a_bad_per_file_runtime_is_a_configuration_error(tmp_path: Path, body: str, words: list[str]) -> None:
    (tmp_path / "m.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(body, encoding="utf-8")
    proc = subprocess.run([tool("reshard-lint"), "check", "."], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 2 and proc.stdout == ""
    [line] = proc.stderr.strip().splitlines()
    for w in words:
        assert w in line, line
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select=RSH", "."], capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert flake8.returncode == 1 and line in flake8.stdout, flake8.stdout + flake8.stderr
    bad = subprocess.run([sys.executable, "-m", "flake8", "--select=RSH", "--isolated",
                          "--reshard-per-file-runtime", "tests/*:sometimes", "m.py"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert bad.returncode == 1
    assert "reshard-per-file-runtime 'tests/*' = 'sometimes': must be one of" in bad.stdout, bad.stdout


def test_cache_follows_an_edit_of_the_conftest_and_of_the_imported_module(tmp_path: Path) -> None:
    root = tmp_path / "runtimes"
    shutil.copytree(ROOT, root)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    want = _want(root)
    assert _check(root, *cache)[1] == want
    conftest = root / "tests" / "conftest.py"
    setup = root / "app" / "cpu_setup.py"
    conftest.write_text(conftest.read_text(encoding="utf-8").replace('"jax_num_cpu_devices", 8', '"jax_enable_x64", True'),
                        encoding="utf-8")
    setup.write_text("# no flags any more\n", encoding="utf-8")
    assert _check(root, *cache)[1] == sorted(want + [("app/demo.py", 9, 5, "RSH201"),
                                                     ("tests/test_moves.py", 9, 5, "RSH201")])
    shutil.copyfile(ROOT / "tests" / "conftest.py", conftest)
    shutil.copyfile(ROOT / "app" / "cpu_setup.py", setup)
    assert _check(root, *cache)[1] == want


_EVALUATE = '''import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def evaluate():
    mesh = Mesh(np.array(jax.devices()), ("x",))
    x = jax.device_put(np.zeros(8), NamedSharding(mesh, P("x")))
    return jax.device_get(x)
'''


@pytest.mark.parametrize("main, fires", [
    # the entry point launches several processes and runs evaluate: its fetch fails there
    ("import jax\n\nfrom pkg.evaluate import evaluate\n\nif __name__ == '__main__':\n"
     "    jax.distributed.initialize()\n    print(evaluate())\n", True),
    # the same entry point without jax.distributed: a one-host program, nothing to say
    ("from pkg.evaluate import evaluate\n\nif __name__ == '__main__':\n    print(evaluate())\n", False),
    # a launcher that does not reach pkg.evaluate says nothing of it
    ("import jax\n\nif __name__ == '__main__':\n    jax.distributed.initialize()\n", False),
])
def test_an_entry_point_that_launches_processes_makes_what_it_imports_multi_process(
        tmp_path: Path, main: str, fires: bool) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "evaluate.py").write_text(_EVALUATE, encoding="utf-8")
    (tmp_path / "main.py").write_text(main, encoding="utf-8")
    want = ["pkg/evaluate.py:9:12: RSH305"] if fires else []
    check = subprocess.run([tool("reshard-lint"), "check", "--no-cache", "--format", "concise", "."],
                           cwd=tmp_path, capture_output=True, text=True)
    assert [" ".join(line.split(" ")[:2]) for line in check.stdout.splitlines() if " RSH" in line] == want
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "RSH", "--format",
                             "%(path)s:%(row)d:%(col)d: %(code)s", "pkg"], cwd=tmp_path, capture_output=True, text=True)
    assert flake8.stdout.split("\n")[:-1] == want
