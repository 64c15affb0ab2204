"""The package type-checks: mypy over reshard_lint/ with the settings of pyproject.toml's
[tool.mypy] (every function checked, annotated or not; ignores that silence nothing, and
redundant casts, are errors). mypy runs from the test environment (the test extra), as
a child process. Its incremental cache is kept in pytest's cache directory
(.pytest_cache/d/mypy; a temporary one under -p no:cacheprovider): a cold check of the
package takes about 25 s on two cores, a check after a few edits a few seconds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_finds_no_errors(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    cache_dir = cache.mkdir("mypy") if cache is not None else tmp_path / "mypy_cache"
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, f"mypy failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}"
