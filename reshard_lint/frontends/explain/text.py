"""The terminal picture: each mesh as a box-drawn grid of device ids, source beside target.

Every cell shows a device id and the shard it holds; a device whose shard changes is
marked ``*`` and one that is in only one of the meshes ``!``, in colour as well when
colour is on (a TTY without NO_COLOR, or ``--color always``). The marks are there in
plain text too, so a pipe, a test snapshot or a colour-blind reader loses nothing.
"""

from __future__ import annotations

import itertools
import textwrap
from dataclasses import dataclass
from typing import Optional, Sequence

from .shapes import ABSENT, MOVES, Explanation, Grid, Panel, Side

MARK = {MOVES: "*", ABSENT: "!", "": " "}
_STYLE = {MOVES: "\x1b[1;33m", ABSENT: "\x1b[1;31m", "": "\x1b[2m", "head": "\x1b[1m"}
_RESET = "\x1b[0m"
WRAP = 16  # a one-axis mesh longer than this is drawn in rows of this many devices
GAP = "    "
LEGEND = ("* holds another shard after the move than before   "
          "! in one of the two meshes only")


@dataclass
class Line:
    """One output line, plain (for widths) and styled (for the terminal)."""

    plain: str = ""
    styled: str = ""

    def add(self, text: str, style: str = "", colour: bool = False) -> "Line":
        self.plain += text
        self.styled += f"{_STYLE[style]}{text}{_RESET}" if colour and style and text.strip() else text
        return self

    def pad(self, width: int) -> "Line":
        return self.add(" " * (width - len(self.plain)))

    def out(self, colour: bool) -> str:
        return (self.styled if colour else self.plain).rstrip()


def axes(shape: Sequence[int], names: Optional[Sequence[str]]) -> str:
    """``data: 8`` or ``a: 2 x b: 4``; the bare shape when the names are unknown."""
    if names is None or len(names) != len(shape):
        return "shape (" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    return " × ".join(f"{n}: {s}" for n, s in zip(names, shape))


Rows = list[tuple[str, list[int]]]  # (row label, flat positions of its cells)


def blocks(shape: Sequence[int], names: Optional[Sequence[str]]) -> list[tuple[str, Rows]]:
    """The grid as boxes of rows: [(caption, [(row label, flat positions)])].

    One axis: one row (rows of WRAP when long); two: a row per index of the first;
    more: one box of the last two axes per index of the leading ones.
    """
    names = list(names) if names is not None and len(names) == len(shape) else \
        [f"axis{i}" for i in range(len(shape))]
    if len(shape) == 1:
        n = shape[0]
        if n <= WRAP:
            return [("", [("", list(range(n)))])]
        return [("", [(f"[{i}:{min(i + WRAP, n)}]", list(range(i, min(i + WRAP, n))))
                      for i in range(0, n, WRAP)])]
    rows, cols = shape[-2], shape[-1]
    out = []
    lead = shape[:-2]
    for index in itertools.product(*(range(n) for n in lead)):
        base = 0
        for i, n in zip(index, lead):
            base = base * n + i
        base *= rows * cols
        caption = ", ".join(f"{names[k]}={i}" for k, i in enumerate(index))
        out.append((caption, [(f"{names[-2]}={r}", list(range(base + r * cols, base + (r + 1) * cols)))
                              for r in range(rows)]))
    return out


def grid_lines(grid: Grid, names: Optional[Sequence[str]], width: int, colour: bool) -> list[Line]:
    """The box-drawn grid: a cell of ``width`` characters per device, two lines high."""
    out: list[Line] = []
    for caption, rows in blocks(grid.shape, names):
        if caption:
            out.append(Line().add(caption + ":"))
        label_w = max(len(label) for label, _ in rows)
        label_w = label_w + 1 if label_w else 0
        ncols = max(len(cells) for _, cells in rows)
        rule = "─" * (width + 2)

        def border(left: str, mid: str, right: str) -> Line:
            return Line().add(" " * label_w + left + mid.join([rule] * ncols) + right)

        out.append(border("┌", "┬", "┐"))
        for r, (label, cells) in enumerate(rows):
            ids, shards = Line().add(label.ljust(label_w)), Line().add(" " * label_w)
            for k in cells:
                mark = grid.marks[k]
                ids.add("│ ").add(f"{grid.ids[k]}{MARK[mark]}".rstrip().center(width), mark, colour).add(" ")
                shards.add("│ ").add(grid.shards[k].center(width), mark, colour).add(" ")
            ids.add("│")
            shards.add("│")
            out.extend([ids, shards])
            if r + 1 < len(rows):
                out.append(border("├", "┼", "┤"))
        out.append(border("└", "┴", "┘"))
    return out


def _cell_width(panel: Panel) -> int:
    texts = [f"{d}*" for g in (panel.source, panel.target) for d in g.ids]
    texts += [s for g in (panel.source, panel.target) for s in g.shards]
    return max(len(t) for t in texts)


def _heading(side: Side, grid: Grid) -> str:
    return f"{side.role} {side.label}  {axes(grid.shape, side.names)}  ({grid.shard_count})"


def panel_lines(e: Explanation, panel: Panel, columns: int, colour: bool) -> list[str]:
    w = _cell_width(panel)
    left = [Line().add(_heading(e.source, panel.source), "head", colour)] + \
        grid_lines(panel.source, e.source.names, w, colour)
    right = [Line().add(_heading(e.target, panel.target), "head", colour)] + \
        grid_lines(panel.target, e.target.names, w, colour)
    lw = max(len(x.plain) for x in left)
    rw = max(len(x.plain) for x in right)
    out = [Line().add(f"{panel.title} · {panel.topology} (model topology)", "head", colour).out(colour)]
    out += ["  " + s for s in textwrap.wrap(panel.verdict, max(40, columns - 2))]
    if 2 + lw + len(GAP) + rw <= columns:
        for a, b in itertools.zip_longest(left, right, fillvalue=Line()):
            out.append("  " + _join(a, b, lw, colour))
    else:
        out += ["  " + x.out(colour) for x in left] + [""] + ["  " + x.out(colour) for x in right]
    out += ["  " + s for s in textwrap.wrap(summary(panel), max(40, columns - 2))]
    if panel.note:
        out += ["  " + s for s in textwrap.wrap("Note: " + panel.note, max(40, columns - 2))]
    return out


def _join(a: Line, b: Line, lw: int, colour: bool) -> str:
    joined = Line(a.plain, a.styled).pad(lw).add(GAP)
    joined.plain += b.plain
    joined.styled += b.styled
    return joined.out(colour)


def summary(panel: Panel) -> str:
    if panel.summary_text:
        return panel.summary_text
    both = len(set(panel.source.ids) & set(panel.target.ids))
    parts = [f"{panel.moved} of the {both} devices in both meshes hold another shard after the move"]
    if panel.absent:
        parts.append(f"{panel.absent} {'is' if panel.absent == 1 else 'are'} in one mesh only")
    elif not panel.moved:
        # Axes reordered together with their names: the layout is the same, only the
        # device order JAX compares differs.
        parts.append("the two meshes lay the array out alike, in another device order")
    return "; ".join(parts) + "."


def render(explanations: Sequence[Explanation], columns: int = 100, colour: bool = False) -> str:
    out: list[str] = []
    for e in explanations:
        if out:
            out.append("")
        out.append(Line().add(f"{e.path}:{e.line}:{e.col + 1}: {e.code}", "head", colour).out(colour))
        out += textwrap.wrap(e.message, columns, initial_indent="  ", subsequent_indent="  ")
        out.append("")
        for side in (e.source, e.target):
            spec = "" if not e.move else f", {side.spec}" if side.spec else ", layout not known"
            out.append(f"  {side.role}: {side.description}{spec}")
        if e.by_position:
            out += textwrap.wrap("The array's layout is not known on both sides: a device's shard is "
                                 "drawn as its position in the mesh.", columns,
                                 initial_indent="  ", subsequent_indent="  ")
        for panel in e.panels:
            out.append("")
            out += panel_lines(e, panel, columns, colour)
        if e.same_on:
            out.append("")
            out.append(f"  The same devices in the same order on {', '.join(e.same_on)} "
                       f"(drawn topology): nothing moves there.")
        if not e.panels:
            out.append("")
            out.append("  The two meshes agree on every drawn topology of the target platforms.")
    legends = dict.fromkeys(e.legend for e in explanations if e.panels and e.legend)
    if legends:
        out.append("")
        out.extend(legends)
    return "\n".join(out) + "\n"
