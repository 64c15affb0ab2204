"""Fixture files state their diagnostics inline (`# RSH201:5`); nothing more, nothing less.

Add a file under tests/fixtures/ and it is checked through the engine and through a
real flake8 process.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from reshard_lint.core import noqa
from reshard_lint.engine.engine import Engine
from reshard_lint.core.fixes import split_lines
from reshard_lint.rules import expected_markers

from .conftest import FIXTURES, ROOT

FILES = sorted(p for p in FIXTURES.glob("*.py") if not p.name.endswith((".in.py", ".out.py")))


def expected(path: Path) -> list[tuple[int, int, str]]:
    return expected_markers(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_engine_finds_exactly_the_markers(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    result = Engine().lint_source(source, str(path))
    assert result.error is None
    kept, _ = noqa.split(result.diagnostics, split_lines(source))
    assert sorted((d.line, d.col + 1, d.code) for d in kept) == expected(path)


def test_flake8_prints_exactly_the_markers() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select=RSH", *map(str, FILES)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    got: dict[str, list[tuple[int, int, str]]] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(.+?):(\d+):(\d+): (RSH\d{3}) ", line)
        assert m, line
        got.setdefault(Path(m.group(1)).name, []).append((int(m.group(2)), int(m.group(3)), m.group(4)))
    for path in FILES:
        assert sorted(got.get(path.name, [])) == expected(path), path.name


def test_flake8_keeps_going_after_an_unparseable_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n    pass\n", encoding="utf-8")
    good = tmp_path / "good.py"
    good.write_text((FIXTURES / "aliases.py").read_text(encoding="utf-8"), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select=RSH,E999,F", str(bad), str(good)],
        capture_output=True, text=True, timeout=300,
    )
    assert "Traceback" not in proc.stderr
    assert "bad.py:1:" in proc.stdout and "E999" in proc.stdout
    assert sum("good.py" in line and " RSH" in line for line in proc.stdout.splitlines()) == len(
        expected(FIXTURES / "aliases.py"))
