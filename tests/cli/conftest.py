"""The standalone command, always run as a real subprocess of the installed script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
FIX_FIXTURES = FIXTURES / "fixes"
# Next to the interpreter running the tests, so CI's virtualenv is used, not PATH's.
COMMAND = str(Path(sys.executable).parent / "reshard-lint")

CROSS = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, NamedSharding(half, P('x')))
"""
# RSH201 at 8:5 (safe fix); and a reordered mesh for RSH102 (unsafe fix) and RSH202 (safe fix).
REORDERED = CROSS + """\
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))
z = jax.device_put(x, NamedSharding(rev, P('x')))
"""
CLEAN = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
"""


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes


def run(*args: str | os.PathLike[str], cwd: Path | str | None = None, input: bytes | str | None = None,
        env: dict[str, str] | None = None, python_flags: tuple[str, ...] = ()) -> Run:
    if python_flags:
        cmd = [sys.executable, *python_flags, "-m", "reshard_lint", *map(str, args)]
    else:
        cmd = [COMMAND, *map(str, args)]
    data = input.encode() if isinstance(input, str) else input
    e = dict(os.environ if env is None else env)
    e.pop("RESHARD_LINT_CACHE_DIR", None)
    p = subprocess.run(cmd, cwd=cwd, input=data, capture_output=True, env=e, timeout=300)
    return Run(p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"),
               p.stdout)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory (a pyproject.toml marks the root; no settings)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    return tmp_path


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def copy_fixture(name: str, dest: Path) -> Path:
    shutil.copyfile(FIX_FIXTURES / name, dest)
    return dest
