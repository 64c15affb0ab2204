"""The pre-commit hooks of .pre-commit-hooks.yaml and the configurations and commands of
docs/usage/pre-commit.md, run by the real pre-commit.

pre-commit builds its own virtualenv and pip-installs this repository into it (flake8
comes from the package index), so these tests take a while. The hosted route's
environment is built once and shared by both hooks and by the try-repo test (one
PRE_COMMIT_HOME for the module, the same repository spelling and rev: pre-commit's own
reuse, as on a user's machine); the `repo: local` configurations (a clone's path in
additional_dependencies) and the flake8 route need environments of their own.
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
    from .test_docs_commands import copy_source_tree

    dest = copy_source_tree(tmp_path_factory.mktemp("reshard-lint-snapshot"))
    env = _env(dest.parent)
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
    assert hooks["reshard-lint"]["entry"] == "reshard-lint check --quiet"
    assert hooks["reshard-lint-fix"]["entry"] == "reshard-lint check --fix-only"
    for h in hooks.values():
        # One run over all the files: no parallel batches each printing its own output.
        assert h["language"] == "python" and h["types"] == ["python"] and h["require_serial"] is True
    # The doc's `repo: local` hooks are the manifest's.
    for block in [b for b in _doc_blocks("yaml") if "repo: local" in b and "id: reshard-lint" in b]:
        for hook_id, hook in hooks.items():
            if f"id: {hook_id}\n" in block:
                entry = block.split(f"id: {hook_id}\n", 1)[1].split("entry: ", 1)[1].split("\n", 1)[0]
                assert entry == hook["entry"], (hook_id, entry)


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


# --- the configurations and commands of docs/usage/pre-commit.md, as written -------------------

DOC = ROOT / "docs" / "usage" / "pre-commit.md"
CLONE = "/path/to/reshard-lint"  # the docs' stand-in for the clone's path
HOSTED_URL, HOSTED_REV = "<the repository's URL>", "<a release tag>"


def _doc_blocks(info: str) -> list[str]:
    return re.findall(rf"^```{info}\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.M | re.S)


def _doc_config(kind: str) -> str:
    """One of the doc's .pre-commit-config.yaml blocks: the local hooks, the one with args,
    the hosted form, the flake8 route."""
    blocks = _doc_blocks("yaml")
    pick = {
        "local": [b for b in blocks if "repo: local" in b and "reshard-lint-fix" in b],
        "args": [b for b in blocks if "repo: local" in b and "args:" in b and "id: reshard-lint\n" in b],
        "hosted": [b for b in blocks if HOSTED_URL in b],
        "flake8": [b for b in blocks if "id: flake8" in b],
    }[kind]
    assert len(pick) == 1, (kind, blocks)
    return pick[0]


def _doc_commands(*names: str) -> list[list[str]]:
    """The pre-commit command lines of the docs (the test of docs/usage/ runs the others)."""
    from .test_docs_commands import commands_in

    return [list(c.argv) for name in names for c in commands_in(ROOT / "docs" / "usage" / name)
            if c.argv[0] == "pre-commit"]


def _installs(out: str) -> int:
    """How many hook environments pre-commit built during a run."""
    return out.count("[INFO] Installing environment for ")


def test_the_docs_local_config_and_commands(snapshot: Path, project: tuple[Path, dict[str, str]],
                                            tmp_path: Path) -> None:
    """docs/usage/pre-commit.md's `repo: local` config with a clone's path, and its commands:
    install, run, the args variant, and clean after the clone changed."""
    proj, env = project
    env = dict(env, PRE_COMMIT_HOME=str(tmp_path / "own-home"))  # `pre-commit clean` empties it
    clone = tmp_path / "clone"
    shutil.copytree(snapshot, clone)
    (proj / ".pre-commit-config.yaml").write_text(_doc_config("local").replace(CLONE, str(clone)),
                                                 encoding="utf-8")
    _git("add", ".pre-commit-config.yaml", cwd=proj, env=env)
    commands = _doc_commands("pre-commit.md", "github-actions.md")
    assert ["pre-commit", "install"] in commands and ["pre-commit", "clean"] in commands
    install = _pre_commit(*commands[0][1:], cwd=proj, env=env)
    assert commands[0] == ["pre-commit", "install"] and install.returncode == 0, install.stdout + install.stderr
    assert (proj / ".git" / "hooks" / "pre-commit").is_file()
    first = _pre_commit("run", "--all-files", cwd=proj, env=env)
    out = first.stdout + first.stderr
    # One environment for both hooks; the fix hook rewrote train.py, so pre-commit fails.
    assert _installs(out) == 1, out
    assert first.returncode == 1 and "files were modified by this hook" in out, out
    assert (proj / "train.py").read_text(encoding="utf-8") == FIXED
    _git("add", "train.py", cwd=proj, env=env)
    for argv in commands:
        if argv[1] in ("run",):
            again = _pre_commit(*argv[1:], cwd=proj, env=env)
            assert again.returncode == 0, (argv, again.stdout + again.stderr)
            assert "Passed" in again.stdout and _installs(again.stdout + again.stderr) == 0
    # The args variant: RSH1 findings are not selected, so the buggy file passes.
    (proj / "train.py").write_text(BUGGY, encoding="utf-8")
    (proj / ".pre-commit-config.yaml").write_text(_doc_config("args").replace(CLONE, str(clone)),
                                                 encoding="utf-8")
    _git("add", "train.py", ".pre-commit-config.yaml", cwd=proj, env=env)
    args = _pre_commit("run", "--all-files", cwd=proj, env=env)
    assert args.returncode == 0 and _installs(args.stdout + args.stderr) == 0, args.stdout + args.stderr
    # A changed clone is not installed again until `pre-commit clean`, as the doc says.
    (proj / ".pre-commit-config.yaml").write_text(_doc_config("local").replace(CLONE, str(clone)),
                                                 encoding="utf-8")
    _git("add", ".pre-commit-config.yaml", cwd=proj, env=env)
    (clone / "reshard_lint" / "__init__.py").write_text(
        (clone / "reshard_lint" / "__init__.py").read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    kept = _pre_commit("run", "--all-files", cwd=proj, env=env)
    assert _installs(kept.stdout + kept.stderr) == 0, kept.stdout + kept.stderr
    clean = _pre_commit("clean", cwd=proj, env=env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    rebuilt = _pre_commit("run", "--all-files", cwd=proj, env=env)
    assert _installs(rebuilt.stdout + rebuilt.stderr) == 1, rebuilt.stdout + rebuilt.stderr
    ran = {("pre-commit", "install"), ("pre-commit", "clean")} | {tuple(a) for a in commands if a[1] == "run"}
    assert {tuple(a) for a in commands} - ran == {("pre-commit", "try-repo", CLONE, "reshard-lint", "--all-files")}


def test_the_docs_try_repo_command(snapshot: Path, project: tuple[Path, dict[str, str]]) -> None:
    proj, env = project
    [argv] = [a for a in _doc_commands("pre-commit.md") if a[1] == "try-repo"]
    r = _pre_commit(*[str(snapshot) if w == CLONE else w for w in argv[1:]], cwd=proj, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "RSH103" in out and "train.py" in out, out


def test_the_docs_hosted_config_fix_hook_rewrites_the_file(snapshot: Path,
                                                          project: tuple[Path, dict[str, str]]) -> None:
    """The doc's `repo` and `rev` form, with this tree's snapshot as the hosted repository
    (the same repository spelling as try-repo's: one environment for both)."""
    proj, env = project
    rev = _git("rev-parse", "HEAD", cwd=snapshot, env=env).strip()
    config = _doc_config("hosted").replace(HOSTED_URL, str(snapshot)).replace(HOSTED_REV, rev)
    (proj / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
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


def test_both_hooks_print_each_finding_once_and_no_success_chatter(
        snapshot: Path, project: tuple[Path, dict[str, str]]) -> None:
    """Issue 56: with both hooks every finding printed twice, and batches that found
    nothing added "Fixed 0, 0 remaining." and "No findings in 5 files." after a failure.
    The doc's hosted form (both hooks, the environment the other hosted tests share), on
    a fresh repository: first nothing staged, as the doc says, then one run."""
    proj, env = project
    _git("rm", "-q", "--cached", "train.py", "clean.py", cwd=proj, env=env)
    # Only an unsafe fix for this one: it stays, and the lint hook reports it.
    reordered = rule_by_code("RSH102")
    assert reordered is not None
    (proj / "reorder.py").write_text(re.sub(r"  # RSH\d{3}:\d+$", "", reordered.firing()[0].code,
                                            flags=re.MULTILINE), encoding="utf-8")
    for i in range(12):
        (proj / f"clean_{i}.py").write_text(FIXED, encoding="utf-8")
    rev = _git("rev-parse", "HEAD", cwd=snapshot, env=env).strip()
    config = _doc_config("hosted").replace(HOSTED_URL, str(snapshot)).replace(HOSTED_REV, rev)
    (proj / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    _git("add", ".pre-commit-config.yaml", cwd=proj, env=env)
    unstaged = _pre_commit("run", "--all-files", cwd=proj, env=env)
    skipped = unstaged.stdout.count("(no files to check)Skipped")
    assert unstaged.returncode == 0 and skipped == 2, unstaged.stdout
    _git("add", "-A", cwd=proj, env=env)
    r = _pre_commit("run", "--all-files", cwd=proj, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert (proj / "train.py").read_text(encoding="utf-8") == FIXED
    assert "files were modified by this hook" in out and "Fixed 1 in 1 file." in out, out
    # Each finding once: reorder.py's RSH102 (and its RSH203), by the lint hook only.
    found = re.findall(r"^(\S+\.py:\d+:\d+: RSH\d{3}) ", out, re.M)
    assert found and len(found) == len(set(found)) and all(f.startswith("reorder.py:") for f in found), out
    assert any(f.endswith("RSH102") for f in found), out
    for chatter in ("Fixed 0", "remaining", "No findings", "Found ", "coverage lists"):
        assert chatter not in out, (chatter, out)


def test_the_docs_flake8_route(snapshot: Path, project: tuple[Path, dict[str, str]]) -> None:
    """The doc's flake8 hook with reshard-lint among its additional_dependencies."""
    proj, env = project
    (proj / ".pre-commit-config.yaml").write_text(_doc_config("flake8").replace(CLONE, str(snapshot)),
                                                 encoding="utf-8")
    _git("add", ".pre-commit-config.yaml", cwd=proj, env=env)
    bad = _pre_commit("run", "flake8", "--files", "train.py", cwd=proj, env=env)
    out = bad.stdout + bad.stderr
    assert bad.returncode == 1, out
    assert re.search(r"train\.py:6:12: RSH103 ", out), out
    good = _pre_commit("run", "flake8", "--files", "clean.py", cwd=proj, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
