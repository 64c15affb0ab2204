"""RSH308 names the JAX version the project installs or pins (project/pins.py), and is
silent where every version it allows is before 0.8 (process_allgather ignored ``tiled``
for a global array there: the 0.7.2 wheel has no such check, the 0.8.0 wheel has it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reshard_lint.engine.engine import Engine
from reshard_lint.project.pins import bounds, jax_versions
from reshard_lint.rules import rule_by_code

from ..conftest import ROOT

RULE = rule_by_code("RSH308")
assert RULE is not None
PROGRAM = RULE.firing()[0].code


def _messages(root: Path) -> list[str]:
    path = root / "gather.py"
    path.write_text(PROGRAM, encoding="utf-8")
    result = Engine().lint_source(PROGRAM, str(path))
    return [d.message for d in result.diagnostics if d.code == "RSH308"]


@pytest.mark.parametrize(("files", "said"), [
    ({}, "from JAX 0.8, every process raises"),
    ({"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax[tpu]==0.10.2", "numpy"]\n'},
     "with jax[tpu]==0.10.2 in pyproject.toml, every process raises"),
    ({"requirements.txt": "numpy\njax>=0.8.1,<0.11  # pinned\n"},
     "with jax>=0.8.1,<0.11 in requirements.txt, every process raises"),
    ({"setup.cfg": "[options]\ninstall_requires =\n    jax>=0.6\n"},
     "from JAX 0.8 (the project allows jax>=0.6 in setup.cfg), every process raises"),
    ({".venv/lib/python3.11/site-packages/jax-0.9.1.dist-info/METADATA": "",
      "requirements.txt": "jax==0.4.30\n"},
     "with JAX 0.9.1 (installed in .venv/), every process raises"),
])
def test_the_message_names_the_version(tmp_path: Path, files: dict[str, str], said: str) -> None:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (message,) = _messages(tmp_path)
    assert said in message


@pytest.mark.parametrize("pin", ["jax==0.4.30", "jax<0.8", "jax~=0.7.0", "jax>=0.4,<=0.7.2"])
def test_silent_where_only_versions_before_08_are_allowed(tmp_path: Path, pin: str) -> None:
    (tmp_path / "requirements.txt").write_text(pin + "\n", encoding="utf-8")
    assert _messages(tmp_path) == []


def test_bounds() -> None:
    assert bounds("==0.4.30") == ((0, 4, 30), (0, 4, 31))
    assert bounds(">=0.8,<0.9") == ((0, 8), (0, 9))
    assert bounds("~=0.7.1") == ((0, 7, 1), (0, 8))
    assert bounds("^0.4") is None  # poetry's caret: not read
    assert jax_versions("<stdin>") is None


def test_a_cached_result_follows_the_pin(tmp_path: Path) -> None:
    """The pin files are the result's dependencies: a warm run after the pin changed
    analyses the file again."""

    project = tmp_path / "p"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "gather.py").write_text(PROGRAM, encoding="utf-8")

    def run(pin: str) -> str:
        (project / "requirements.txt").write_text(pin + "\n", encoding="utf-8")
        proc = subprocess.run([sys.executable, "-m", "reshard_lint", "check", "--format", "concise",
                               "--cache-dir", str(tmp_path / "cache"), "gather.py"],
                              capture_output=True, text=True, cwd=project, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        return proc.stdout

    assert "with jax>=0.9 in requirements.txt" in run("jax>=0.9")
    assert "RSH308" not in run("jax==0.4.30")
    assert "with jax==0.8.0 in requirements.txt" in run("jax==0.8.0")


BUILDER = """\
import jax

mesh = jax.make_mesh((8,), ('x',), devices=jax.devices()[::-1])
print(mesh.shape)
"""


@pytest.mark.parametrize(("platforms", "pin", "said"), [
    (["tpu", "gpu", "cpu"], "", "keeps on CPU, and on GPU before JAX 0.10.2"),
    (["tpu", "gpu", "cpu"], "jax==0.10.2", "keeps on CPU (GPU sorts by device id from JAX 0.10.2)"),
    (["tpu", "gpu"], "jax==0.9.0", "keeps on GPU before JAX 0.10.2"),
    (["tpu", "gpu"], "jax>=0.10.2", None),
    (["tpu"], "", None),
])
def test_a_builder_keeps_a_reordered_list_on_cpu_and_older_gpu(
        tmp_path: Path, platforms: list[str], pin: str, said: str | None) -> None:
    """RSH102 on a reordered list handed to a builder: CPU keeps the order given, and so
    does GPU before JAX 0.10.2 (the 0.7.2 to 0.10.1 wheels have no GPU branch in
    create_device_mesh; 0.10.2 sorts a GPU list by id); TPU lays devices out by coordinates."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text(pin + "\n", encoding="utf-8")
    path = tmp_path / "builder.py"
    path.write_text(BUILDER, encoding="utf-8")
    result = Engine({"platforms": platforms}).lint_source(BUILDER, str(path))
    found = [d.message for d in result.diagnostics if d.code == "RSH102"]
    if said is None:
        assert found == []
    else:
        (message,) = found
        assert said in message
