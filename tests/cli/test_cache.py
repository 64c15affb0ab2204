"""The result cache: warm runs give the same answers without the engine (or libcst)."""

from __future__ import annotations

from pathlib import Path

from .conftest import CLEAN, CROSS, REORDERED, run, write


def imported(stderr: str) -> set[str]:
    """Module names from python -X importtime's report."""
    out = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            out.add(line.rsplit("|", 1)[1].strip())
    return out


def tree(root: Path) -> None:
    for i in range(6):
        write(root, f"pkg/m{i}.py", REORDERED if i % 2 else CROSS)
        write(root, f"pkg/plain{i}.py", f"x = {i}\n")
    write(root, "pkg/clean.py", CLEAN)


def test_warm_run_same_output_without_the_engine(project: Path) -> None:
    tree(project)
    cold = run("check", "--format", "json", cwd=project, python_flags=("-X", "importtime"))
    assert "reshard_lint.engine.engine" in imported(cold.stderr)
    assert not any(m == "libcst" or m.startswith("libcst.") for m in imported(cold.stderr))
    cache = project / ".reshard-lint-cache"
    assert (cache / "CACHEDIR.TAG").exists()
    warm = run("check", "--format", "json", cwd=project, python_flags=("-X", "importtime"))
    mods = imported(warm.stderr)
    assert not any(m == "libcst" or m.startswith("libcst.") for m in mods)
    assert "reshard_lint.engine.engine" not in mods and "reshard_lint.rules" not in mods
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode == 1
    for fmt in ("text", "concise", "github"):
        a = run("check", "--format", fmt, "--no-cache", cwd=project)
        b = run("check", "--format", fmt, cwd=project)
        assert a.stdout == b.stdout


def test_changed_content_is_analysed_again(project: Path) -> None:
    p = write(project, "m.py", CROSS)
    assert run("check", cwd=project).returncode == 1
    p.write_text(CLEAN)
    assert run("check", cwd=project).returncode == 0
    p.write_text(CROSS)  # back to content the cache knows
    r = run("check", "--format", "concise", cwd=project)
    assert r.returncode == 1 and "m.py:8:5: RSH201" in r.stdout


def test_settings_are_part_of_the_key(project: Path) -> None:
    write(project, "m.py", "import jax\nimport numpy as np\nfrom jax.sharding import Mesh, NamedSharding, "
                           "PartitionSpec as P\n\nmesh = Mesh(np.array(jax.devices()), ('x',))\n"
                           "x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))\n"
                           "y = jax.device_put(x, jax.devices()[0])\n")
    assert run("check", cwd=project).returncode == 0
    assert run("check", "--runtime", "multi-controller", cwd=project).returncode == 1
    assert run("check", cwd=project).returncode == 0


def test_no_cache_and_cache_dir(project: Path, tmp_path_factory: object) -> None:
    write(project, "m.py", CROSS)
    run("check", "--no-cache", cwd=project)
    assert not (project / ".reshard-lint-cache").exists()
    elsewhere = project / "custom-cache"
    r = run("check", "--cache-dir", str(elsewhere), cwd=project)
    assert r.returncode == 1
    assert any(elsewhere.glob("v*-*.json"))
    assert not (project / ".reshard-lint-cache").exists()


def test_corrupt_cache_is_ignored(project: Path) -> None:
    write(project, "m.py", CROSS)
    run("check", cwd=project)
    for f in (project / ".reshard-lint-cache").glob("*.json"):
        f.write_text("{not json")
    r = run("check", "--format", "concise", cwd=project)
    assert r.returncode == 1 and "m.py:8:5: RSH201" in r.stdout


def test_parse_errors_and_unreadable_files_are_reported_on_warm_runs_too(project: Path) -> None:
    write(project, "broken.py", "from jax.sharding import Mesh\nm = Mesh(jax.devices(\n")
    (project / "latin.py").write_bytes(b"x = '\xe9'\n")
    for _ in range(2):
        r = run("check", "--format", "concise", cwd=project)
        assert r.returncode == 1  # findings: RSH001 and RSH003, never cached
        assert "broken.py:" in r.stdout and "RSH001" in r.stdout
        assert "latin.py:1:1: RSH003 could not decode the file" in r.stdout
