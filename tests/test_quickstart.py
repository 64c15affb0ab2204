"""The README's two Quick start commands are what CI runs and what a new user can run.

.ci/run runs the README's test command through .ci/quickstart.py; these tests fail when
the README and CI could drift apart again, or when the bundled example's command stops
working as written.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _quickstart():
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / ".ci" / "quickstart.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ci_runs_the_readme_test_command():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    code = [line for line in run.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert "cmd=$(python3 .ci/quickstart.py test)" in code
    assert 'bash -c "$cmd"' in code
    # the comment that shows a reader the command quotes the README's, word for word
    readme = _quickstart().commands((ROOT / "README.md").read_text(encoding="utf-8"))["test"]
    assert f"#   {readme}" in run.splitlines()
    # nothing else installs or runs tests behind the README's back
    assert not any(re.search(r"\bpip\b|\bpytest\b", line) for line in code)


def test_readme_commands_are_the_two_quick_start_blocks():
    commands = _quickstart().commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert commands == {
        "example": "python3 -m venv .venv && .venv/bin/pip install -q . && "
                   ".venv/bin/reshard-lint check --exit-zero examples/",
        "test": "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest",
    }
    # the pip a new venv ships is what a user has: the README does not upgrade it, so the
    # requirements must resolve with it (a pre-release is named where it is the only one)
    for command in commands.values():
        assert "--upgrade pip" not in command and "-U pip" not in command


def test_quickstart_script_prints_each_command():
    out = subprocess.run([sys.executable, str(ROOT / ".ci" / "quickstart.py"), "test"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out.endswith(".venv/bin/python -m pytest")
    bad = subprocess.run([sys.executable, str(ROOT / ".ci" / "quickstart.py"), "nope"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


@pytest.mark.slow
def test_test_extra_resolves_with_a_new_venvs_pip(tmp_path):
    """pip in a venv made by `python3 -m venv`, not upgraded, resolves `.[test]`."""
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True)
    pip = tmp_path / "venv" / "bin" / "pip"
    done = subprocess.run([str(pip), "install", "--dry-run", "-q", "-e", f"{ROOT}[test]"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_example_command_runs_on_a_copy(tmp_path):
    """The first Quick start command, run as written in a copy of the checkout."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv*", ".git", "__pycache__", "*.egg-info",
                                                             "build", ".reshard-lint-cache", "corpus"))
    command = _quickstart().commands((copy / "README.md").read_text(encoding="utf-8"))["example"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
    done = subprocess.run(["bash", "-c", command], cwd=copy, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "RSH" in done.stdout
