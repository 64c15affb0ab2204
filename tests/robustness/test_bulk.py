"""The bulk run on a sample of real code: the standard library and JAX, whole engine."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import jax

ROOT = Path(__file__).resolve().parents[2]


def test_bulk_sample_has_no_crashes() -> None:
    stdlib = sysconfig.get_paths()["stdlib"]
    jax_dir = os.path.dirname(jax.__file__)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bulk_lint.py"), "--force", "--sample", "300", "--seed", "1",
         "-j", "2", stdlib, jax_dir],
        capture_output=True, text=True, cwd=ROOT,
    )
    out = proc.stdout
    assert "files: 300\n" in out, out + proc.stderr
    assert "crashes: 0\n" in out, out + proc.stderr
    assert proc.returncode == 0, out + proc.stderr
