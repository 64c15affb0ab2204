"""Runs JAX code for the strict-mode tests in fresh processes with 8 CPU devices.

The main test session may already have started a JAX backend with one device (other
test modules import jax), and the device count cannot change after that, so every JAX
program here runs in its own process: forked from a warm interpreter that has imported
jax (jaxfork.py) for the ``python8`` programs, a new interpreter for the rest.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

import pytest

from jaxfork import Server  # this directory is on sys.path (no __init__.py: rootdir-relative)

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "strict_driver.py"
TIMEOUT = 240


def load_private(name: str, path: Path) -> ModuleType:
    """The module at ``path`` loaded under the private ``name`` (once): a second copy of a
    module pytest already imported under its own name must not replace it in sys.modules."""
    found = sys.modules.get(name)
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def jax_env(devices: int = 8) -> dict[str, str]:
    env = dict(os.environ)
    env["JAX_NUM_CPU_DEVICES"] = str(devices)
    env["JAX_PLATFORMS"] = "cpu"
    # An outer strict session or device flag must not leak into the child.
    env.pop("XLA_FLAGS", None)
    env.pop("PYTEST_ADDOPTS", None)
    return env


def run_python(code: str, *, devices: int = 8, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=jax_env(devices), timeout=TIMEOUT, cwd=cwd)


def run_driver(cases: list[dict[str, Any]], tmp: Path) -> dict[str, Any]:
    spec = tmp / "cases.json"
    spec.write_text(json.dumps(cases))
    proc = subprocess.run([sys.executable, str(DRIVER), str(spec)], capture_output=True, text=True,
                          env=jax_env(), timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, Any] = json.loads((tmp / "cases.json.out").read_text())
    return result


@pytest.fixture(scope="session")
def _jax_servers() -> Iterator[dict[int, Server]]:
    servers: dict[int, Server] = {}
    yield servers
    for server in servers.values():
        server.close()


@pytest.fixture
def python8(_jax_servers: dict[int, Server]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run a Python program (``python -c``) with 8 CPU devices, or ``devices``; its returncode and output."""
    def run(code: str, *, devices: int = 8, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        server = _jax_servers.get(devices)
        if server is None:
            server = _jax_servers[devices] = Server(jax_env(devices))
        return server.run(textwrap.dedent(code), cwd, TIMEOUT)

    return run


@pytest.fixture(scope="module")
def driver() -> Callable[[list[dict[str, Any]], Path], dict[str, Any]]:
    """Run example programs in every strict mode in one child process (strict_driver.py)."""
    return run_driver


@pytest.fixture
def jax_subprocess_env() -> dict[str, str]:
    """Environment for a child process that should see 8 CPU devices."""
    return jax_env()


def outcomes(output: str) -> dict[str, str]:
    """Test name -> PASSED or FAILED, from the short summary of a ``pytest -rA`` run."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        for word in ("PASSED", "FAILED"):
            if line.startswith(word + " ") and "::" in line:
                found[line.split("::", 1)[1].split()[0]] = word
    return found
