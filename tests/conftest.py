"""Shared test helpers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    """A console script installed next to the interpreter running the tests."""
    path = BIN / name
    return str(path) if path.exists() else name


@pytest.fixture
def env_no_user_config(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HOME"] = str(tmp_path)
    env.pop("XDG_CONFIG_HOME", None)
    return env

# Fixture files are linted, never run or collected: tests/fixtures/runtimes holds a
# conftest.py and test_*.py files of its own (a project that says where it runs).
collect_ignore = ["fixtures"]
