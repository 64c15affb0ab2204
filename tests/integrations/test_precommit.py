"""The pre-commit hooks of .pre-commit-hooks.yaml, run by the real pre-commit.

pre-commit builds its own virtualenv and pip-installs this repository into it (libcst and
flake8 come from PyPI), so these tests take a while. The hooks' environment is built once
and shared by both hooks and by the try-repo and config routes (one PRE_COMMIT_HOME for
the module, the same repository spelling and rev: pre-commit's own reuse, as on a user's
machine); the flake8 route needs an environment of its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reshard_lint.rules import rule_by_code

from ..conftest import ROOT, tool

# One xdist worker runs the whole module: its module-scoped set-up is made once.
pytestmark = pytest.mark.xdist_group("integrations-test_precommit")

# RSH103 has a safe fix (it keeps the devices as written), which the fix hook applies.
_RULE = rule_by_code("RSH103")
assert _RULE is not None
BUGGY = re.sub(r"  # RSH\d{3}:\d+$", "", _RULE.firing()[1].code, flags=re.MULTILINE)
FIXED = re.sub(r"  # RSH\d{3}:\d+$", "", _RULE.firing()[1].fixed or "", flags=re.MULTILINE)

# Fixed dates make the snapshot's commit id depend on its content only.
_GIT_DATES = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def _git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(_GIT_DATES)
    env.update({
        "HOME": str(tmp / "home"),  # no user git config or pre-commit config leaks in
        "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.com",
        "PRE_COMMIT_HOME": str(tmp / "pre-commit-home"),
        "PRE_COMMIT_COLOR": "never",
        # Keep pip's download cache between runs (HOME is temporary).
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
    })
    env.pop("VIRTUAL_ENV", None)
    (tmp / "home").mkdir(exist_ok=True)
    return env


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository as it is on disk (tracked and new files), as a one-commit git repo.

    ``pre-commit try-repo`` of the checkout itself would leave out new, untracked modules,
    so a half-committed tree could install a package that does not import.
    """
    dest = tmp_path_factory.mktemp("reshard-lint-snapshot")
    env = _env(dest.parent)
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if not src.is_file() or rel.startswith("bench/"):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    _git("init", "-q", "-b", "main", cwd=dest, env=env)
    _git("add", "-A", cwd=dest, env=env)
    _git("commit", "-q", "-m", "snapshot", cwd=dest, env=env)
    return dest


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path, pre_commit_home: Path) -> tuple[Path, dict[str, str]]:
    env = _env(tmp_path)
    env["PRE_COMMIT_HOME"] = str(pre_commit_home)
    proj = tmp_path / "project"
    proj.mkdir()
    _git("init", "-q", "-b", "main", cwd=proj, env=env)
    (proj / "train.py").write_text(BUGGY, encoding="utf-8")
    (proj / "clean.py").write_text(FIXED, encoding="utf-8")
    _git("add", "train.py", "clean.py", cwd=proj, env=env)
    return proj, env


def _pre_commit(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("pre-commit"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)


def test_manifest_declares_both_hooks() -> None:
    from pre_commit.clientlib import load_manifest

    hooks = {h["id"]: h for h in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))}
    assert set(hooks) == {"reshard-lint", "reshard-lint-fix"}
    assert hooks["reshard-lint"]["entry"] == "reshard-lint check"
    assert hooks["reshard-lint-fix"]["entry"] == "reshard-lint check --fix"
    for h in hooks.values():
        assert h["language"] == "python" and h["types"] == ["python"]


def test_try_repo_check_hook_fails_on_staged_bug(snapshot: Path,
                                                 project: tuple[Path, dict[str, str]]) -> None:
    proj, env = project
    bad = _pre_commit("try-repo", str(snapshot), "reshard-lint", "--files", "train.py", cwd=proj, env=env)
    out = bad.stdout + bad.stderr
    assert bad.returncode == 1, out
    assert "RSH103" in out and "train.py" in out, out
    assert "Failed" in out, out
    good = _pre_commit("try-repo", str(snapshot), "reshard-lint", "--files", "clean.py", cwd=proj, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout


def test_config_fix_hook_rewrites_the_file(snapshot: Path, project: tuple[Path, dict[str, str]]) -> None:
    """The route users take: a .pre-commit-config.yaml that names both hooks."""
    proj, env = project
    rev = _git("rev-parse", "HEAD", cwd=snapshot, env=env).strip()
    (proj / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {snapshot}\n"  # as try-repo names it: one environment for both routes
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: reshard-lint-fix\n"
        "      - id: reshard-lint\n", encoding="utf-8")
    _git("add", ".pre-commit-config.yaml", cwd=proj, env=env)
    first = _pre_commit("run", "--files", "train.py", "clean.py", cwd=proj, env=env)
    out = first.stdout + first.stderr
    # pre-commit fails a hook that modified files, so the user re-stages and looks at them.
    assert first.returncode == 1, out
    assert "files were modified by this hook" in out, out
    assert (proj / "train.py").read_text(encoding="utf-8") == FIXED
    assert (proj / "clean.py").read_text(encoding="utf-8") == FIXED
    _git("add", "train.py", cwd=proj, env=env)
    second = _pre_commit("run", "--files", "train.py", "clean.py", cwd=proj, env=env)
    assert second.returncode == 0, second.stdout + second.stderr


def test_flake8_route_with_reshard_lint_as_additional_dependency(
        snapshot: Path, project: tuple[Path, dict[str, str]]) -> None:
    """The flake8 hook of pre-commit-users, with reshard-lint added to its environment.

    docs/usage/pre-commit.md names https://github.com/pycqa/flake8 and the PyPI package;
    here the same mechanism (a pre-commit-built environment with flake8 and reshard-lint
    as additional_dependencies) runs offline from GitHub, with this tree as the package.
    """
    proj, env = project
    (proj / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        "  - repo: local\n"
        "    hooks:\n"
        "      - id: flake8\n"
        "        name: flake8\n"
        "        entry: flake8\n"
        "        language: python\n"
        "        types: [python]\n"
        f"        additional_dependencies: [flake8, '{snapshot}']\n"
        "        args: [--extend-select, RSH]\n", encoding="utf-8")
    _git("add", ".pre-commit-config.yaml", cwd=proj, env=env)
    bad = _pre_commit("run", "flake8", "--files", "train.py", cwd=proj, env=env)
    out = bad.stdout + bad.stderr
    assert bad.returncode == 1, out
    assert re.search(r"train\.py:6:12: RSH103 ", out), out
    good = _pre_commit("run", "flake8", "--files", "clean.py", cwd=proj, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
