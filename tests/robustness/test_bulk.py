"""The bulk run on a sample of real code: the standard library and JAX, whole engine.

A bulk run (300 real files): marked slow, so the default run skips it; `pytest -m slow`
runs it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bulk_sample_has_no_crashes() -> None:
    stdlib = sysconfig.get_paths()["stdlib"]
    spec = importlib.util.find_spec("jax")  # where it is installed, without importing it
    assert spec is not None and spec.origin is not None
    jax_dir = str(Path(spec.origin).parent)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bulk_lint.py"), "--force", "--sample", "300", "--seed", "1",
         "-j", "2", stdlib, jax_dir],
        capture_output=True, text=True, cwd=ROOT,
    )
    out = proc.stdout
    assert "files: 300\n" in out, out + proc.stderr
    assert "crashes: 0\n" in out, out + proc.stderr
    assert proc.returncode == 0, out + proc.stderr
