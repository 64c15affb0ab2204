"""The pictures of ``reshard-lint explain``, in process: snapshots of the text form on the
rule examples of RSH201 and RSH202, the shard arithmetic, and the SVG and HTML forms
checked by parsing them.

A snapshot that no longer matches fails with the new text; after checking it by eye,
``RESHARD_LINT_UPDATE_SNAPSHOTS=1 pytest tests/explain`` writes it.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reshard_lint.frontends.explain.gather import ABSENT, MOVES, Explanation, explain_source
from reshard_lint.frontends.explain.picture import page, svg
from reshard_lint.frontends.explain.shards import label, parse_spec, pieces
from reshard_lint.frontends.explain.text import render
from reshard_lint.rules import rule_by_code

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).parent / "snapshots"
SETTINGS = {"runtime": "auto", "platforms": ("tpu", "gpu", "cpu")}
SVG = "{http://www.w3.org/2000/svg}"


# The rule examples drawn, by what they spell (not by index: examples get added).
REVERSED = "rev = Mesh(np.array(jax.devices()[::-1])"
PART_ROW = "part = Mesh(np.array(devs[:4][::-1]"
MAKE_MESH = "made = jax.make_mesh((2, 4)"
HALF = "half = Mesh(np.array(jax.devices()[:4])"


def _example(code: str, spelled: str) -> tuple[str, int]:
    """The first firing example of the rule that spells ``spelled``, and its marked line."""
    ex = next(e for e in rule_by_code(code).firing() if spelled in e.code)  # type: ignore[union-attr]
    line = next(n for n, text in enumerate(ex.code.splitlines(), 1) if f"# {code}:" in text)
    return ex.code, line


def _explain(code: str, spelled: str) -> list[Explanation]:
    source, line = _example(code, spelled)
    out = explain_source(source, f"{code.lower()}_example.py", line, SETTINGS)
    assert not out.undrawn and out.explanations, out.undrawn
    return out.explanations


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("RESHARD_LINT_UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path}: run with RESHARD_LINT_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("code,spelled,name", [
    ("RSH201", HALF, "rsh201_subset.txt"),
    ("RSH202", REVERSED, "rsh202_reversed.txt"),
    ("RSH202", PART_ROW, "rsh202_one_row_reversed.txt"),
    ("RSH202", MAKE_MESH, "rsh202_make_mesh_on_tpu.txt"),
])
def test_text_snapshot_of_rule_examples(code: str, spelled: str, name: str) -> None:
    check_snapshot(name, render(_explain(code, spelled)))


def test_reversed_mesh_moves_every_shard_on_every_platform() -> None:
    [e] = _explain("RSH202", REVERSED)
    assert e.code == "RSH202" and not e.same_on and not e.by_position
    assert e.source.spec == "P('x')" and e.target.names == ("x",)
    for panel in e.panels:
        assert panel.target.ids == panel.source.ids[::-1]
        assert set(panel.source.marks) == {MOVES} and panel.moved == 8 and panel.absent == 0
    # Enumeration on multi-host TPU is not id order (docs/platforms.md): its own panel.
    assert [p.source.ids for p in e.panels] == [(0, 1, 4, 5, 2, 3, 6, 7), tuple(range(8))]


def test_subset_marks_the_devices_only_the_source_holds() -> None:
    [e] = _explain("RSH201", HALF)
    cpu = next(p for p in e.panels if "CPU" in p.title)
    assert cpu.target.ids == (0, 1, 2, 3)
    # Split over 8 devices, then over 4: the four devices in both hold bigger pieces.
    assert cpu.source.marks == (MOVES,) * 4 + (ABSENT,) * 4
    assert cpu.absent == 4 and cpu.moved == 4
    assert (cpu.source.shard_count, cpu.target.shard_count) == ("8 shards", "4 shards")


def test_subset_of_a_replicated_array_moves_no_shard() -> None:
    out = explain_source((ROOT / "examples" / "train.py").read_text(), "examples/train.py", 62, SETTINGS)
    [e] = out.explanations
    cpu = next(p for p in e.panels if "CPU" in p.title)
    assert cpu.source.marks == ("",) * 4 + (ABSENT,) * 4 and cpu.moved == 0
    assert cpu.source.shard_count == "the whole array on each device"


def test_make_mesh_differs_on_tpu_only_and_says_the_order_is_a_stand_in() -> None:
    [e] = _explain("RSH202", MAKE_MESH)
    titles = [p.title for p in e.panels]
    assert titles[0] == "multi-host TPU" and "CPU" not in " ".join(titles)
    assert "CPU" in e.same_on[-1]
    assert "stand-in" in e.panels[0].note
    assert "of 8 devices" in e.panels[0].verdict


def test_no_diagnostic_and_a_file_that_does_not_parse() -> None:
    source, _ = _example("RSH202", REVERSED)
    out = explain_source(source, "x.py", 1, SETTINGS)
    assert not out.explanations and not out.undrawn and out.diagnostic_lines
    assert explain_source("def f(:\n", "x.py", 1, SETTINGS).error is not None


def _every_marked_line() -> list[tuple[str, int, str, int]]:
    """(rule, example index, code marked, line) for every diagnostic the examples mark."""
    from reshard_lint.rules import all_rules

    out = []
    for rule in all_rules():
        for i, ex in enumerate(rule.firing()):
            for n, text in enumerate(ex.code.splitlines(), 1):
                out += [(rule.code, i, m.group(1), n) for m in re.finditer(r"# (RSH\d{3}):\d+", text)]
    return out


def test_every_rsh1_rsh2_rsh3_finding_of_the_rule_examples_is_drawn() -> None:
    """Issue 56: a construction (RSH1xx), a move (RSH2xx) and a placement (RSH3xx) each
    draw their mesh or meshes; none says there is nothing to draw."""
    from reshard_lint.rules import rule_by_code

    marked = [m for m in _every_marked_line() if m[2][3] in "123"]
    assert len(marked) > 100
    missed = []
    for code, i, drawn, line in marked:
        source = rule_by_code(code).firing()[i].code  # type: ignore[union-attr]
        out = explain_source(source, f"{code.lower()}_{i}.py", line, SETTINGS)
        if drawn not in {e.code for e in out.explanations}:
            missed.append((code, i, drawn, line, out.undrawn))
    assert missed == []


def test_a_reordered_mesh_is_drawn_beside_the_natural_order_per_platform() -> None:
    source, _ = _example("RSH202", REVERSED)
    rsh102 = next(n for n, t in enumerate(source.splitlines(), 1) if "# RSH102" in t)
    [e] = explain_source(source, "x.py", rsh102, SETTINGS).explanations
    assert e.code == "RSH102" and not e.move and (e.source.role, e.target.role) == ("natural", "built")
    tpu, rest = e.panels
    # jax.devices() enumerates process by process: on multi-host TPU not in id order.
    assert tpu.source.ids == (0, 1, 4, 5, 2, 3, 6, 7) and tpu.target.ids == tpu.source.ids[::-1]
    assert rest.title == "GPU (ids by process), CPU" and rest.source.ids == tuple(range(8))
    assert rest.target.shards[:4] == ("p1",) * 4 and rest.moved == 8
    check_snapshot("rsh102_reversed.txt", render([e]))


def test_a_device_id_used_as_a_position_draws_ids_against_positions() -> None:
    source, line = _example("RSH104", "for i in ids")
    [e] = explain_source(source, "x.py", line, SETTINGS).explanations
    tpu = e.panels[0]
    assert tpu.title.startswith("multi-host TPU") and tpu.moved == 4
    assert tpu.source.ids == tuple(range(8)) and tpu.target.ids == (0, 1, 4, 5, 2, 3, 6, 7)
    cpu = next(p for p in e.panels if "CPU" in p.title)
    assert cpu.moved == 0 and "IndexError" in cpu.note


def test_a_fetch_draws_the_devices_this_process_cannot_read() -> None:
    source, line = _example("RSH305", "jax.device_get(x)")
    [e] = explain_source(source, "x.py", line, SETTINGS).explanations
    cpu = next(p for p in e.panels if "CPU" in p.title)
    assert cpu.source.marks == ("",) * 4 + (ABSENT,) * 4 and cpu.target.ids == (0, 1, 2, 3)
    assert "seen from process 0" in cpu.topology


def test_a_device_of_the_global_list_is_drawn_from_a_process_that_does_not_own_it() -> None:
    source, line = _example("RSH306", "jax.devices('cpu')[0]))")
    [e] = explain_source(source, "x.py", line, SETTINGS).explanations
    for panel in e.panels:
        assert "seen from process 1" in panel.topology
        assert panel.target.ids == (0,) and panel.target.marks == (ABSENT,) and panel.target.shards == ("p0",)


@pytest.mark.parametrize("spelled,what", [
    ("with jax.default_device", "what it computes from no committed array"),
    ("out_shardings=SingleDeviceSharding", "puts its result, whatever its operands"),
    ("jnp.zeros(3, device=", "where the array is made"),
])
def test_a_placement_draws_its_device_beside_the_job_and_says_no_array_moves(spelled: str, what: str) -> None:
    source, line = _example("RSH306", spelled)
    [e] = explain_source(source, "x.py", line, SETTINGS).explanations
    assert e.source.role == "job" and "no array moves" in e.source.description
    assert what in e.target.description
    for panel in e.panels:
        assert "seen from process 1" in panel.topology and len(panel.source.ids) == 8
        assert panel.target.ids == (0,) and panel.target.marks == (ABSENT,) and panel.target.shards == ("p0",)


def test_host_data_put_on_a_device_of_the_global_list_says_it_is_host_data() -> None:
    source, line = _example("RSH306", "b = jax.device_put(np.arange(8.0), jax.devices()[0])  # RSH306")
    [e] = explain_source(source, "x.py", line, SETTINGS).explanations
    assert e.source.role == "job" and e.source.description.startswith("host data")
    assert all(p.target.marks == (ABSENT,) for p in e.panels)


def test_a_mesh_shaped_by_the_local_count_draws_the_devices_it_takes() -> None:
    source, line = _example("RSH307", "jax.make_mesh((jax.local_device_count(),)")
    [e] = explain_source(source, "x.py", line, SETTINGS).explanations
    cpu = next(p for p in e.panels if "CPU" in p.title)
    assert cpu.source.ids == tuple(range(8)) and cpu.target.ids == (0, 1, 2, 3)
    assert "seen from process 1" in cpu.topology and cpu.target.marks == (ABSENT,) * 4


def test_an_untiled_gather_draws_the_devices_this_process_cannot_read() -> None:
    source, line = _example("RSH308", "print(multihost_utils.process_allgather(x))")
    [e] = explain_source(source, "x.py", line, SETTINGS).explanations
    cpu = next(p for p in e.panels if "CPU" in p.title)
    assert cpu.source.marks == ("",) * 4 + (ABSENT,) * 4 and cpu.target.ids == (0, 1, 2, 3)


def test_an_operation_under_the_context_mesh_draws_both_lists() -> None:
    source, line = _example("RSH203", "print(a[1:3])")
    [e] = explain_source(source, "x.py", line, SETTINGS).explanations
    assert e.source.role == "context mesh" and e.target.role == "array"
    cpu = next(p for p in e.panels if "CPU" in p.title)
    assert cpu.target.ids == (0,) and cpu.source.marks.count(ABSENT) == 7


def test_one_platform_draws_only_that_platform() -> None:
    source, line = _example("RSH202", REVERSED)
    [e] = explain_source(source, "x.py", line, {"runtime": "auto", "platforms": ("cpu",)}).explanations
    assert [p.title for p in e.panels] == ["CPU"]


def test_shards_follow_the_spec() -> None:
    assert parse_spec("P('a', None, ('b', 'c'))") == (("a",), (), ("b", "c"))
    assert parse_spec("P()") == ()
    assert parse_spec("P(axis)") is None and parse_spec("spec") is None and parse_spec(None) is None
    # A 2x2 mesh split over 'a' only: the two devices of a row hold the same piece.
    got = pieces((2, 2), ("a", "b"), (("a",),))
    assert got == [((0, 2),), ((0, 2),), ((1, 2),), ((1, 2),)]
    labels = [label(p) for p in pieces((2, 2), ("a", "b"), ((), ("b", "a"))) or []]
    assert labels == ["s:,0", "s:,2", "s:,1", "s:,3"]
    assert label(()) == "all"
    assert pieces((2, 2), ("a", "b"), (("z",),)) is None and pieces((4,), None, (("a",),)) is None


def test_colour_only_when_asked() -> None:
    es = _explain("RSH202", REVERSED)
    assert "\x1b[" not in render(es)
    coloured = render(es, colour=True)
    assert "\x1b[1;33m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == render(es)


def test_svg_parses_and_marks_the_cells() -> None:
    es = _explain("RSH201", HALF) + _explain("RSH202", MAKE_MESH)
    root = ET.fromstring(svg(es))
    assert root.tag == f"{SVG}svg"
    cells = root.findall(f".//{SVG}g")
    classes = [c.get("class") for c in cells]
    assert "cell absent" in classes and "cell moves" in classes and "cell stays" in classes
    # Every cell: a rectangle, the device id and its shard.
    for c in cells:
        assert [child.tag for child in c] == [f"{SVG}rect", f"{SVG}text", f"{SVG}text"]
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "RSH201" in texts and "RSH202" in texts and "multi-host TPU" in texts


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.seen: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append((tag, dict(attrs)))
        if tag not in ("meta", "rect", "br"):
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (self.stack[-3:], tag)
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_parses_balanced_with_an_svg_per_grid() -> None:
    es = _explain("RSH202", REVERSED)
    parser = _Tags()
    parser.feed(page(es, "title <&>"))
    parser.close()
    assert parser.stack == []
    tags = [t for t, _ in parser.seen]
    panels = sum(len(e.panels) for e in es)
    assert tags.count("svg") == 2 * panels
    assert tags.count("g") == sum(len(p.source.ids) + len(p.target.ids) for e in es for p in e.panels)
    text = "".join(parser.text)
    assert "title <&>" in text and "RSH202" in text and "holds another shard" in text


def test_the_usage_page_shows_the_bundled_example_as_it_is() -> None:
    text = (ROOT / "docs" / "usage" / "explain.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```text\n")[1:]]
    assert blocks[0] == (SNAPSHOTS / "train_58_rsh202.txt").read_text(encoding="utf-8")
    # The reordered mesh of line 22, on multi-host TPU and CPU.
    out = explain_source((ROOT / "examples" / "train.py").read_text(), "examples/train.py", 22,
                         {"runtime": "auto", "platforms": ("tpu", "cpu")})
    assert blocks[1] == render(out.explanations)


EDGES = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(32), ('x',))
x = jax.device_put(np.arange(32.0), NamedSharding(mesh, P('x')))
rev = Mesh(np.array(jax.devices()[::-1]).reshape(32), ('x',))
y = jax.device_put(x, NamedSharding(rev, P('x')))
cube = Mesh(np.array(jax.devices()).reshape(2, 2, 2), ('a', 'b', 'c'))
z = jax.device_put(np.ones((8, 8)), NamedSharding(cube, P('a', ('b', 'c'))))
cube2 = Mesh(cube.devices.transpose(1, 0, 2), ('a', 'b', 'c'))
w = jax.device_put(z, NamedSharding(cube2, P('a', ('b', 'c'))))
cpu = Mesh(np.array(jax.devices('cpu')), ('x',))
v = jax.device_put(np.arange(8.0), NamedSharding(cpu, P('x')))
cpu_rev = Mesh(np.array(jax.devices('cpu')[::-1]), ('x',))
u = jax.device_put(v, NamedSharding(cpu_rev, P('x')))
"""
CPU_ONLY = {"runtime": "auto", "platforms": ("cpu",)}


def test_a_long_axis_is_drawn_in_rows_and_meshes_that_do_not_fit_are_stacked() -> None:
    [e] = explain_source(EDGES, "edges.py", 8, CPU_ONLY).explanations
    text = render([e])
    assert "[0:16]  │  0* │" in text and "[16:32] │ 31* │" not in text and "[16:32] │ 15* │" in text
    assert "32 devices" in text and "  target 'rev'  x: 32" in text  # below, not beside


def test_a_cube_is_drawn_box_by_box_and_axes_renamed_with_it_move_nothing() -> None:
    [e] = explain_source(EDGES, "edges.py", 12, CPU_ONLY).explanations
    [panel] = e.panels
    # devices (0,1,0,0) and (0,0,1,0) trade places: each of the four in those boxes moves
    assert panel.moved == 4 and panel.source.shard_count == "2 × 4 shards"
    text = render([e])
    assert "a=0:" in text and "a=1:" in text  # one 2-D box per index of the leading axis
    # The same transposition with the axis names transposed too keeps every device's
    # coordinates on 'a', 'b' and 'c': no piece moves, RSH202 says nothing to draw.
    renamed = EDGES.replace("transpose(1, 0, 2), ('a', 'b', 'c')", "transpose(1, 0, 2), ('b', 'a', 'c')")
    out = explain_source(renamed, "edges.py", 12, CPU_ONLY)
    assert not out.explanations and not out.undrawn


def test_ids_of_a_named_platform_are_shown_as_jax_numbers_them() -> None:
    [e] = explain_source(EDGES, "edges.py", 16, CPU_ONLY).explanations
    assert e.panels[0].source.ids == tuple(range(8)) and e.panels[0].target.ids == tuple(range(7, -1, -1))


def test_figures_write_svg_and_html_with_their_own_legend() -> None:
    source, _ = _example("RSH202", REVERSED)
    rsh102 = next(n for n, t in enumerate(source.splitlines(), 1) if "# RSH102" in t)
    es = explain_source(source, "x.py", rsh102, SETTINGS).explanations
    source, line = _example("RSH305", "jax.device_get(x)")
    es += explain_source(source, "x.py", line, SETTINGS).explanations
    root = ET.fromstring(svg(es))
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "at another position than in jax.devices() order (*)" in texts
    assert "a device the drawn process does not own (!)" in texts and "keeps its shard" not in texts
    parser = _Tags()
    parser.feed(page(es))
    parser.close()
    text = "".join(parser.text)
    assert parser.stack == [] and "RSH102" in text and "layout not known" not in text


def test_a_list_from_the_devices_of_an_array_of_unknown_origin_is_not_drawn() -> None:
    """RSH101 on list(arr.devices()) of a parameter: the order is the finding, the devices
    are not known, and nothing is guessed."""
    source = ("import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n\n\n"
              "def from_unknown_array(arr):\n    return Mesh(np.array(list(arr.devices())), ('x',))\n")
    out = explain_source(source, "x.py", 7, SETTINGS)
    assert not out.explanations and [u[0] for u in out.undrawn] == ["RSH101"]
    assert "does not know which devices this mesh holds" in out.undrawn[0][2]
