"""The command and the flake8 plugin report the same findings at the same places."""

from __future__ import annotations

import subprocess
import sys

from .conftest import FIXTURES, ROOT, run


def test_same_findings_as_flake8_on_the_fixtures() -> None:
    files = sorted(str(p.relative_to(ROOT)) for p in FIXTURES.glob("*.py"))
    f8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "RSH", *files], cwd=ROOT,
                        capture_output=True, text=True, timeout=300)
    ours = run("check", "--isolated", "--no-cache", "--format", "concise", *files, cwd=ROOT)
    assert ours.returncode == 1 and f8.returncode == 1
    assert sorted(f8.stdout.splitlines()) == sorted(ours.stdout.splitlines())
