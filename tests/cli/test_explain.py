"""``reshard-lint explain FILE:LINE`` as a real subprocess: the picture of the bundled
example, the file forms, colour, and the exit status (0 drawn, 1 nothing to draw, 2 usage)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from .conftest import ROOT, run, write

SNAPSHOTS = ROOT / "tests" / "explain" / "snapshots"


def _env(**extra: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(extra)
    return env


@pytest.mark.parametrize("line,name", [(58, "train_58_rsh202.txt"), (62, "train_62_rsh201.txt")])
def test_bundled_example_snapshot(line: int, name: str) -> None:
    from tests.explain.test_pictures import check_snapshot

    r = run("explain", f"examples/train.py:{line}", cwd=ROOT, env=_env())
    assert r.returncode == 0, r.stderr
    assert "\x1b[" not in r.stdout  # not a terminal: plain
    check_snapshot(name, r.stdout)


def test_flake8_style_location_with_a_column() -> None:
    r = run("explain", "examples/train.py:58:18:", cwd=ROOT)
    assert r.returncode == 0 and r.stdout.startswith("examples/train.py:58:18: RSH202")


def test_colour_when_asked_and_no_color_respected() -> None:
    r = run("explain", "examples/train.py:58", "--color", "always", cwd=ROOT, env=_env(NO_COLOR="1"))
    assert r.returncode == 0 and "\x1b[1;33m" in r.stdout
    r = run("explain", "examples/train.py:58", "--color", "never", cwd=ROOT, env=_env())
    assert "\x1b[" not in r.stdout


def test_colour_on_a_terminal_unless_no_color() -> None:
    import os
    import pty
    import subprocess

    from .conftest import COMMAND

    def on_tty(env: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        p = subprocess.Popen([COMMAND, "explain", "examples/train.py:58"], cwd=ROOT, stdout=follower,
                             stderr=subprocess.DEVNULL, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        p.wait(timeout=120)
        os.close(leader)
        return b"".join(chunks).decode("utf-8", "replace")

    assert "\x1b[1;33m" in on_tty(_env(COLUMNS="120"))
    assert "\x1b[" not in on_tty(_env(COLUMNS="120", NO_COLOR="1"))


def test_no_diagnostic_on_the_line_is_exit_1_and_says_where_they_are() -> None:
    r = run("explain", "examples/train.py:30", cwd=ROOT)
    assert r.returncode == 1 and r.stdout == ""
    assert "no diagnostic on this line" in r.stderr and "22, 58, 62, 65" in r.stderr


def test_a_reordered_mesh_is_drawn_beside_the_natural_order() -> None:
    """Issue 56: RSH102, the most common finding on real code, exited 1 with nothing drawn."""
    r = run("explain", "examples/train.py:22", cwd=ROOT)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith("examples/train.py:22:13: RSH102\n")
    assert "natural: the same devices in the order jax.devices() lists them" in r.stdout
    # One panel per way the platforms enumerate: multi-host TPU's is not id order.
    assert "│ 0* │ 1* │ 4* │ 5* │ 2* │ 3* │ 6* │ 7* │" in r.stdout
    assert "│ 7* │ 6* │ 5* │ 4* │ 3* │ 2* │ 1* │ 0* │" in r.stdout
    assert "* at another position than in jax.devices() order" in r.stdout


# A move made by another module's function, of an array whose mesh a third module built:
# check reports it at the call (through the put in moves.py).
_MESHES = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('data',))
half = Mesh(np.array(jax.devices()[:4]), ('data',))


def load():
    return jax.device_put(np.zeros(8), NamedSharding(mesh, P('data')))
"""
_MOVES = """\
import jax
from jax.sharding import NamedSharding, PartitionSpec as P


def move(x, m):
    return jax.device_put(x, NamedSharding(m, P('data')))
"""
_MAIN = """\
from pkg import moves
from pkg.meshes import half, load


def main():
    x = load()
    return moves.move(x, half)


if __name__ == "__main__":
    main()
"""


def cross_module_project(root: Path) -> Path:
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    for name, text in (("__init__.py", ""), ("meshes.py", _MESHES), ("moves.py", _MOVES), ("main.py", _MAIN)):
        write(root / "pkg", name, text)
    return root / "pkg" / "main.py"


def test_a_cross_module_move_draws_both_meshes(project: Path) -> None:
    main = cross_module_project(project)
    checked = run("check", "--format", "concise", main, cwd=project)
    assert checked.returncode == 1 and "pkg/main.py:7:12: RSH201" in checked.stdout, checked.stdout
    r = run("explain", "pkg/main.py:7", "--platforms", "cpu", cwd=project)
    assert r.returncode == 0, r.stderr
    assert "through its jax.device_put at pkg/moves.py:6" in r.stdout
    assert "source: 'mesh' (pkg/meshes.py:5, jax.devices()), P('data')" in r.stdout
    assert "target: 'half' (pkg/meshes.py:6, jax.devices()[:4]), P('data')" in r.stdout
    assert "│ 0* │ 1* │ 2* │ 3* │ 4! │ 5! │ 6! │ 7! │    │ 0* │ 1* │ 2* │ 3* │" in r.stdout


def test_unknown_meshes_is_exit_1(project: Path) -> None:
    # The target mesh comes from a parameter nobody calls with a known mesh: no RSH201 at all,
    # and explain says there is nothing to draw.
    f = write(project, "m.py", "import jax\n\ndef put(x, s):\n    return jax.device_put(x, s)\n")
    r = run("explain", f"{f}:4", cwd=project)
    assert r.returncode == 1 and "no diagnostic on this line" in r.stderr


@pytest.mark.parametrize("args,says", [
    (["examples/train.py"], "FILE:LINE"),
    (["nope.py:3"], "no such file"),
    (["examples/train.py:999"], "there is no line 999"),
    (["examples/train.py:58", "--output", "x.png"], ".svg or .html"),
    (["examples/train.py:58", "--platforms", "tpu,abacus"], "abacus"),
])
def test_usage_errors_are_exit_2(args: list[str], says: str) -> None:
    r = run("explain", *args, cwd=ROOT)
    assert r.returncode == 2 and says in r.stderr


def test_output_svg_parses(tmp_path: Path) -> None:
    out = tmp_path / "picture.svg"
    r = run("explain", "examples/train.py:58", "--output", out, cwd=ROOT)
    assert r.returncode == 0 and r.stdout == "" and "wrote" in r.stderr
    root = ET.parse(out).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    cells = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if "cell" in (g.get("class") or "")]
    assert len(cells) == 32  # two panels of two 8-device meshes


def test_output_html_parses(tmp_path: Path) -> None:
    out = tmp_path / "picture.html"
    r = run("explain", "examples/train.py:62", "-o", out, cwd=ROOT)
    assert r.returncode == 0

    class Collect(HTMLParser):
        svgs = 0
        text = ""

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.svgs += tag == "svg"

        def handle_data(self, data: str) -> None:
            self.text += data

    c = Collect()
    c.feed(out.read_text(encoding="utf-8"))
    assert c.svgs == 4 and "RSH201" in c.text and "embed_mesh" in c.text


def test_platforms_from_the_project_configuration(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\nversion = '0'\n[tool.reshard-lint]\nplatforms = ['cpu']\n")
    f = write(project, "train.py", (ROOT / "examples" / "train.py").read_text())
    r = run("explain", f"{f}:58", cwd=project)
    assert r.returncode == 0
    assert "\nCPU · 8 devices" in r.stdout and "TPU ·" not in r.stdout
