"""Objects of other packages that keep what they are given, as data (analysis/library.py):
the vocabulary's table, a project's entries over it in [tool.reshard-lint], and what is
never certain (tests/fixtures/library_objects.py holds the table's own cases; the runs
that ground them: tests/multicontroller/test_library_objects.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reshard_lint.core.config import ConfigError, load
from reshard_lint.engine.engine import Engine
from reshard_lint.frontends.coverage import file_coverage

from .conftest import ROOT

# A trainer of the project's own package, which keeps its state's tree in `state`.
TRAINER = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from mylib import Trainer

print('process', jax.process_index())
mesh = Mesh(np.array(jax.devices()), ('x',))
trainer = Trainer.load('/tmp/run')
trainer.state = jax.device_put(trainer.state, NamedSharding(mesh, P()))
host = jax.device_put(trainer.state, jax.local_devices()[0])
print(jax.device_put(trainer.snapshot(), jax.local_devices()[0]))
"""

TABLE = {"library-objects": json.dumps({"mylib.Trainer.load": {"makes": "trainer"}}),
         "library-kinds": json.dumps({"trainer": {"keeps": ["state"], "assign": True}})}


def codes(source: str, settings: dict[str, object] | None = None) -> list[tuple[int, int, str]]:
    result = Engine(settings).lint_source(source, "m.py")
    assert result.error is None
    return sorted((d.line, d.col + 1, d.code) for d in result.diagnostics)


def test_an_object_the_table_does_not_know_is_unknown() -> None:
    assert codes(TRAINER) == []


def test_a_projects_entry_makes_its_object_keep_the_tree() -> None:
    # (a method the kind does not list gives an unknown, and changes the object)
    assert codes(TRAINER, TABLE) == [(10, 8, "RSH301")]


def test_a_projects_entry_replaces_the_vocabularys() -> None:
    source = TRAINER.replace("from mylib import Trainer", "from transformers import FlaxBertModel as Trainer") \
        .replace("Trainer.load('/tmp/run')", "Trainer.from_pretrained('bert')").replace(".state", ".params")
    assert codes(source) == [(10, 8, "RSH301")]
    off = {"library-objects": json.dumps({"transformers.Flax*.from_pretrained": {}})}
    assert codes(source, off) == []


def test_a_store_elsewhere_than_a_name_of_the_running_scope_is_not_followed() -> None:
    source = TRAINER.replace("host = jax.device_put(trainer.state", "holder = [trainer]\n"
                             "holder[0].state = jax.device_get(trainer.state)\n"
                             "host = jax.device_put(trainer.state")
    assert codes(source, TABLE) == []


def test_a_store_inside_a_function_changes_the_callers_object() -> None:
    source = TRAINER.replace("host = jax.device_put(trainer.state", "def reset(t):\n"
                             "    t.state = jax.device_get(t.state)\n"
                             "reset(trainer)\n"
                             "host = jax.device_put(trainer.state")
    assert codes(source, TABLE) == []


def test_a_store_through_another_name_for_the_object_changes_what_every_name_reads() -> None:
    source = TRAINER.replace("trainer.state = jax.device_put(", "alias = trainer\n"
                             "trainer.state = jax.device_put(") \
        .replace("host = jax.device_put(trainer.state", "alias.state = jax.device_get(trainer.state)\n"
                 "host = jax.device_put(trainer.state")
    assert codes(source, TABLE) == []


def test_two_objects_of_a_kind_are_not_one() -> None:
    source = TRAINER.replace("host = jax.device_put(trainer.state", "other = Trainer.load('/tmp/other')\n"
                             "host = jax.device_put(other.state")
    assert codes(source, TABLE) == []


def test_the_tables_are_read_and_checked_from_pyproject(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.reshard-lint.library-objects]\n"mylib.Trainer.load" = { makes = "trainer" }\n'
                    '[tool.reshard-lint.library-kinds]\ntrainer = { keeps = ["state"], assign = true }\n')
    cfg = load(str(path), [])
    assert json.loads(str(cfg.options["library-objects"])) == {"mylib.Trainer.load": {"makes": "trainer"}}
    assert json.loads(str(cfg.options["library-kinds"])) == {"trainer": {"keeps": ["state"], "assign": True}}
    for bad, said in (('library-objects = ["x"]', "must be a table"),
                      ('library-objects = { x = 1 }', "'x' must be a table"),
                      ('library-objects = { x = { make = "k" } }', "unknown field 'make'"),
                      ('library-kinds = { k = { assign = "yes" } }', "wrong type")):
        path.write_text(f"[tool.reshard-lint]\n{bad}\n")
        with pytest.raises(ConfigError, match=said):
            load(str(path), [])


@pytest.mark.parametrize("front", ["check", "flake8"])
def test_the_command_and_flake8_read_the_projects_table(tmp_path: Path, front: str) -> None:
    (tmp_path / "m.py").write_text(TRAINER)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.reshard-lint.library-objects]\n"mylib.Trainer.load" = { makes = "trainer" }\n'
        '[tool.reshard-lint.library-kinds]\ntrainer = { keeps = ["state"], assign = true }\n')
    args = [sys.executable, "-m", "reshard_lint", "check", "--no-cache", "--format", "concise", "m.py"] \
        if front == "check" else [sys.executable, "-m", "flake8", "--select", "RSH", "m.py"]
    r = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert "m.py:10:8: RSH301" in r.stdout, r.stdout + r.stderr


def test_coverage_resolves_what_the_object_keeps_and_says_why_not_after_a_change() -> None:
    settings = {**TABLE, "runtime": "auto"}
    sites = {s.line: s for s in file_coverage(TRAINER, "m.py", settings).sites}
    assert sites[10].verdict == "crossing"
    changed = TRAINER.replace("host = jax.device_put(trainer.state", "trainer.refresh()\n"
                              "host = jax.device_put(trainer.state")
    sites = {s.line: s for s in file_coverage(changed, "m.py", settings).sites}
    assert sites[11].verdict == "unresolved"
    assert "changed where the analysis does not follow it" in str(sites[11].detail), sites[11].detail
