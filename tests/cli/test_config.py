"""[tool.reshard-lint] in pyproject.toml, flags over it, and the flake8 plugin's config."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CROSS, REORDERED, run, write

# RSH301 fires on this only with runtime = "multi-controller": no multi-controller signs.
SINGLE_DEVICE_PUT = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
y = jax.device_put(x, jax.devices()[0])
"""

# The same devices in another order: RSH102 and RSH202, on every runtime.
REORDERED_PUT = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ('x',))
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))
y = jax.device_put(jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x'))), NamedSharding(rev, P('x')))
"""


def found(r: object) -> list[str]:
    return sorted(line.split(": ")[0] + " " + line.split(" ")[1]
                  for line in r.stdout.splitlines())  # type: ignore[attr-defined]


def pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n[tool.reshard-lint]\n" + body)


def test_select_ignore_extend_select_from_pyproject(tmp_path: Path) -> None:
    write(tmp_path, "m.py", REORDERED)
    pyproject(tmp_path, 'select = ["RSH2"]\nignore = ["RSH202"]\n')
    assert found(run("check", "--format", "concise", cwd=tmp_path)) == ["m.py:8:5 RSH201"]
    pyproject(tmp_path, 'select = ["RSH2"]\nextend-select = ["RSH102"]\n')
    assert found(run("check", "--format", "concise", cwd=tmp_path)) == \
        ["m.py:10:5 RSH202", "m.py:8:5 RSH201", "m.py:9:7 RSH102"]
    # Flags replace the file's select/ignore.
    assert found(run("check", "--format", "concise", "--select", "RSH1", cwd=tmp_path)) == ["m.py:9:7 RSH102"]


def test_config_found_walking_up_from_the_path(tmp_path: Path) -> None:
    write(tmp_path, "pkg/deep/m.py", REORDERED)
    pyproject(tmp_path, 'ignore = ["RSH1", "RSH202"]\n')
    (tmp_path / "pkg" / "pyproject.toml").write_text("[project]\nname = 'member'\n")  # no table: walk on
    for cwd, arg in ((tmp_path / "pkg" / "deep", "m.py"), (tmp_path, "pkg/deep"), (tmp_path / "pkg", ".")):
        r = run("check", "--format", "concise", arg, cwd=cwd)
        assert [x.split(" ")[1] for x in r.stdout.splitlines()] == ["RSH201"], (cwd, arg, r.stdout)


def test_config_file_flag_and_isolated(tmp_path: Path) -> None:
    write(tmp_path, "m.py", REORDERED)
    other = tmp_path / "ci.toml"
    other.write_text('[tool.reshard-lint]\nselect = ["RSH102"]\n')
    r = run("check", "--format", "concise", "--config", str(other), cwd=tmp_path)
    assert found(r) == ["m.py:9:7 RSH102"]
    pyproject(tmp_path, 'select = ["RSH102"]\n')
    assert len(found(run("check", "--format", "concise", "--isolated", cwd=tmp_path))) == 3
    r = run("check", "--config", "missing.toml", cwd=tmp_path)
    assert r.returncode == 2 and "missing.toml" in r.stderr


def test_per_file_ignores_and_excludes(tmp_path: Path) -> None:
    for rel in ("src/m.py", "tests/test_m.py", "gen/out.py", "legacy/old.py", "src/skip_me.py",
                "src/vendored/deep/v.py"):
        write(tmp_path, rel, REORDERED)
    pyproject(tmp_path, '''extend-exclude = ["gen", "src/skip_*.py"]
[tool.reshard-lint.per-file-ignores]
"tests/*" = ["RSH1", "RSH202"]
"old.py" = ["RSH"]
"vendored" = ["RSH2"]
''')
    r = run("check", "--format", "concise", cwd=tmp_path)
    files = sorted({line.split(":")[0] for line in r.stdout.splitlines()})
    assert files == ["src/m.py", "src/vendored/deep/v.py", "tests/test_m.py"], r.stdout
    assert [x.split(" ")[1] for x in r.stdout.splitlines() if x.startswith("tests/")] == ["RSH201"]
    assert [x.split(" ")[1] for x in r.stdout.splitlines() if "vendored" in x] == ["RSH102"]
    # A per-file ignore ("vendored" = RSH2) wins even over a more specific select.
    r = run("check", "--format", "concise", "--select", "RSH201", cwd=tmp_path)
    assert sorted({line.split(":")[0] for line in r.stdout.splitlines()}) == ["src/m.py", "tests/test_m.py"]
    # exclude replaces the default list: build/ is then walked.
    write(tmp_path, "build/b.py", CROSS)
    assert "build/b.py" not in run("check", "--format", "concise", cwd=tmp_path).stdout
    pyproject(tmp_path, 'exclude = ["gen"]\n')
    assert "build/b.py" in run("check", "--format", "concise", cwd=tmp_path).stdout


def test_runtime_setting_from_pyproject_and_flag(tmp_path: Path) -> None:
    write(tmp_path, "m.py", SINGLE_DEVICE_PUT)
    assert run("check", cwd=tmp_path).returncode == 0
    pyproject(tmp_path, 'runtime = "multi-controller"\n')
    r = run("check", "--format", "concise", cwd=tmp_path)
    assert r.returncode == 1 and "m.py:7:5: RSH301 " in r.stdout
    assert run("check", "--runtime", "auto", cwd=tmp_path).returncode == 0
    assert run("check", "--runtime", "single-controller", cwd=tmp_path).returncode == 0


def test_single_controller_silences_the_multi_controller_rules_only(tmp_path: Path) -> None:
    write(tmp_path, "cross.py", CROSS)
    write(tmp_path, "rev.py", REORDERED_PUT)
    r = run("check", "--format", "concise", cwd=tmp_path)
    assert [line.split(" ")[0] for line in r.stdout.splitlines()] == [
        "cross.py:8:5:", "rev.py:5:7:", "rev.py:6:5:"]
    pyproject(tmp_path, 'runtime = "single-controller"\n')
    r = run("check", "--format", "concise", cwd=tmp_path)
    # RSH201 works on a single controller; the reorder (RSH102, RSH202) costs there too.
    assert [line.split(" ")[:2] for line in r.stdout.splitlines()] == [
        ["rev.py:5:7:", "RSH102"], ["rev.py:6:5:", "RSH202"]]


CONTEXT_AND_FETCH = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

print(jax.process_index())
mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
a = jax.device_put(np.ones(4), jax.local_devices()[0])
with jax.set_mesh(mesh):
    print(a + 1)
print(jax.device_get(x), jax.device_put(a, jax.devices()[0]))
"""


def test_context_mesh_applies_on_every_runtime_fetches_only_multi_controller(tmp_path: Path) -> None:
    write(tmp_path, "m.py", CONTEXT_AND_FETCH)
    r = run("check", "--format", "concise", cwd=tmp_path)
    assert [line.split(" ")[:2] for line in r.stdout.splitlines()] == [
        ["m.py:10:11:", "RSH203"], ["m.py:11:7:", "RSH305"], ["m.py:11:26:", "RSH306"]]
    r = run("check", "--format", "concise", "--runtime", "single-controller", cwd=tmp_path)
    # One controller reads every shard and reaches every device; the context mesh still
    # refuses an array committed to one device.
    assert [line.split(" ")[:2] for line in r.stdout.splitlines()] == [["m.py:10:11:", "RSH203"]]


def test_auto_runtime_reads_pathways_backend_per_file(tmp_path: Path) -> None:
    write(tmp_path, "plain.py", CROSS)
    write(tmp_path, "pw.py", "import os\nos.environ['JAX_PLATFORMS'] = 'proxy'\n" + CROSS)
    r = run("check", "--format", "concise", cwd=tmp_path)
    assert [line.split(" ")[0] for line in r.stdout.splitlines()] == ["plain.py:8:5:"]
    r = run("check", "--format", "concise", "--runtime", "multi-controller", cwd=tmp_path)
    assert [line.split(" ")[0] for line in r.stdout.splitlines()] == ["plain.py:8:5:", "pw.py:10:5:"]


@pytest.mark.parametrize("body, words", [
    ('runtime = "sometimes"\n', ["runtime", "'auto', 'multi-controller', 'single-controller'"]),
    ('multicontroller = "always"\n', ["multicontroller", 'replaced by runtime = "multi-controller"']),
    ('selec = ["RSH"]\n', ["unknown key 'selec'", "allowed: select"]),
    ('select = "RSH2"\n', ["select must be a list of strings"]),
    ('ignore = ["RSH9"]\n', ["ignore", "unknown code 'RSH9'"]),
    ('[tool.reshard-lint.per-file-ignores]\n"t/*" = ["RSH99"]\n', ["per-file-ignores", "'RSH99'"]),
    ('select = ["RSH2"\n', ["not valid TOML"]),
])
def test_broken_settings_one_clear_message_exit_2(tmp_path: Path, body: str, words: list[str]) -> None:
    write(tmp_path, "m.py", CROSS)
    pyproject(tmp_path, body)
    r = run("check", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(tmp_path / "pyproject.toml") in lines[0]
    for w in words:
        assert w in lines[0], lines[0]


def flake8(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flake8", "--select", "RSH", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("config, section", [
    ("setup.cfg", "[flake8]\nreshard-runtime = multi-controller\n"),
    ("tox.ini", "[flake8]\nreshard_runtime = multi-controller\n"),
    (".flake8", "[flake8]\nreshard-runtime = multi-controller\n"),
    ("pyproject.toml", '[tool.reshard-lint]\nruntime = "multi-controller"\n'),
])
def test_flake8_reads_the_same_option(tmp_path: Path, config: str, section: str) -> None:
    write(tmp_path, "m.py", SINGLE_DEVICE_PUT)
    assert flake8(tmp_path, "m.py").stdout == ""
    (tmp_path / config).write_text(section)
    p = flake8(tmp_path, "m.py")
    assert p.stdout.startswith("m.py:7:5: RSH301 "), p.stdout + p.stderr
    # And the standalone command reports the same thing with the same option in pyproject.
    pyproject(tmp_path, 'runtime = "multi-controller"\n')
    assert run("check", "--format", "concise", "m.py", cwd=tmp_path).stdout.splitlines() == \
        p.stdout.splitlines()


def test_flake8_rejects_a_bad_value_in_its_config(tmp_path: Path) -> None:
    write(tmp_path, "m.py", SINGLE_DEVICE_PUT)
    (tmp_path / "setup.cfg").write_text("[flake8]\nreshard-runtime = sometimes\n")
    p = flake8(tmp_path, "m.py")
    assert p.returncode != 0
    assert "reshard-runtime = 'sometimes'" in p.stdout + p.stderr
    assert "'auto', 'multi-controller', 'single-controller'" in p.stdout + p.stderr


def test_flake8_single_controller_from_the_project(tmp_path: Path) -> None:
    write(tmp_path, "m.py", CROSS)
    assert flake8(tmp_path, "m.py").stdout.startswith("m.py:8:5: RSH201 ")
    pyproject(tmp_path, 'runtime = "single-controller"\n')
    assert flake8(tmp_path, "m.py").stdout == ""
    p = flake8(tmp_path, "--reshard-runtime", "multi-controller", "m.py")
    assert p.stdout.startswith("m.py:8:5: RSH201 ")


@pytest.mark.parametrize("body", [
    'runtime = "multi"\n',
    'select = ["RSH2"\n',
    'ignore = ["RSH9"]\n',
])
@pytest.mark.parametrize("text", [CROSS, "x = 1\n"])
def test_flake8_stops_on_broken_settings_with_the_commands_message(tmp_path: Path, body: str, text: str) -> None:
    """Whether or not a file gets to the engine, flake8 stops with what `check` prints."""
    write(tmp_path, "m.py", text)
    pyproject(tmp_path, body)
    r = run("check", cwd=tmp_path)
    assert r.returncode == 2
    message = r.stderr.strip()
    assert message.startswith("reshard-lint: ") and "\n" not in message
    for args in (("m.py",), ("-j2", "."), ("-",)):
        p = subprocess.run([sys.executable, "-m", "flake8", "--select", "RSH", *args], cwd=tmp_path,
                           input=text, capture_output=True, text=True, timeout=300)
        assert p.returncode == 1, args
        assert p.stdout.splitlines() == ["There was a critical error during execution of Flake8:", message], \
            (args, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr


def test_flake8_stops_on_broken_settings_of_a_project_below_the_path(tmp_path: Path) -> None:
    """A member project's settings are read when one of its files gets to the engine."""
    write(tmp_path, "m.py", "x = 1\n")
    write(tmp_path, "member/m.py", CROSS)
    pyproject(tmp_path / "member", 'runtime = "multi"\n')
    p = subprocess.run([sys.executable, "-m", "flake8", "--select", "RSH", "."], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1
    assert p.stdout.splitlines()[0] == "There was a critical error during execution of Flake8:"
    assert f"reshard-lint: {tmp_path / 'member' / 'pyproject.toml'}: [tool.reshard-lint] runtime = 'multi'" \
        in p.stdout, p.stdout
    assert "Traceback" not in p.stderr
