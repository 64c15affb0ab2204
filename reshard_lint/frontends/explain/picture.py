"""The file pictures: ``--output FILE.svg`` (one standalone SVG) or ``FILE.html``.

The same content as the terminal picture (text.py): for each diagnostic, the message,
both meshes, and per platform the two grids side by side, cells coloured by what
happens to the device's shard. The HTML page holds one inline SVG per grid and the
prose as HTML, so it reads in any browser and copies as text; the SVG is one drawing
for slides and issue comments.
"""

from __future__ import annotations

import html
import textwrap
from typing import Optional, Sequence

from .shapes import ABSENT, MOVES, Explanation, Grid, Panel
from .text import axes, blocks, summary

_MARK = {MOVES: "*", ABSENT: "!", "": ""}
FILL = {MOVES: "#ffcc4d", ABSENT: "#f28b82", "": "#e8eef5"}
STROKE = "#44546a"
CELL_H = 40
FONT = "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\""
LINE_H = 18
CHAR_W = 8.4  # the width of a 14px monospace character, for laying text out


def _cell_w(panel: Panel) -> int:
    longest = max(len(t) for g in (panel.source, panel.target)
                  for t in [f"{d}*" for d in g.ids] + list(g.shards))
    return max(44, int(longest * CHAR_W) + 16)


def _grid_parts(grid: Grid, names: Optional[Sequence[str]], cell_w: int, x0: float,
                y0: float) -> tuple[list[str], float, float]:
    """SVG elements of a grid at (x0, y0): (elements, width, height)."""
    out: list[str] = []
    y = y0
    width = 0.0
    for caption, rows in blocks(grid.shape, names):
        if caption:
            y += LINE_H
            out.append(f'<text x="{x0}" y="{y - 4}" font-size="13">{html.escape(caption)}:</text>')
        label_w = max((len(label) for label, _ in rows), default=0)
        lx = x0 + (label_w * CHAR_W + 8 if label_w else 0)
        for label, cells in rows:
            if label:
                out.append(f'<text x="{x0}" y="{y + CELL_H / 2 + 5}" font-size="13">'
                           f'{html.escape(label)}</text>')
            for j, k in enumerate(cells):
                mark = grid.marks[k]
                cx = lx + j * cell_w
                out.append(f'<g class="cell {mark or "stays"}"><rect x="{cx}" y="{y}" width="{cell_w}" '
                           f'height="{CELL_H}" fill="{FILL[mark]}" stroke="{STROKE}"/>'
                           f'<text x="{cx + cell_w / 2}" y="{y + 17}" text-anchor="middle" font-size="14" '
                           f'font-weight="bold">{grid.ids[k]}{_MARK[mark]}</text>'
                           f'<text x="{cx + cell_w / 2}" y="{y + 33}" text-anchor="middle" font-size="12" '
                           f'fill="#333">{html.escape(grid.shards[k])}</text></g>')
            width = max(width, lx - x0 + len(cells) * cell_w)
            y += CELL_H
        y += 8
    return out, width, y - y0


def _text_w(text: str, size: int) -> float:
    """The width of ``text`` in a monospace font of ``size`` px (0.6 em a character)."""
    return len(text) * size * 0.6


class _Page:
    """Elements laid out top to bottom, and the widest thing seen: the drawing's width."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.y = 10.0
        self.width = 720.0

    def wrapped(self, text: str, columns: int, size: int = 14, weight: str = "normal", x: float = 16) -> None:
        for line in textwrap.wrap(text, columns) or [""]:
            self.y += LINE_H
            self.parts.append(f'<text x="{x}" y="{self.y}" font-size="{size}" font-weight="{weight}">'
                              f'{html.escape(line)}</text>')
            self.width = max(self.width, x + _text_w(line, size) + 16)


def svg(explanations: Sequence[Explanation]) -> str:
    """One standalone SVG document of every explanation."""
    p = _Page()
    for e in explanations:
        p.wrapped(f"{e.path}:{e.line}:{e.col + 1}: {e.code}", 120, 16, "bold")
        p.wrapped(e.message, 110, 13)
        for side in (e.source, e.target):
            layout = f", {side.spec or 'layout not known'}" if e.move else ""
            p.wrapped(f"{side.role}: {side.description}{layout}", 110, 13)
        if e.by_position:
            p.wrapped("The array's layout is not known on both sides: a device's shard is drawn as its "
                      "position in the mesh.", 110, 13)
        for panel in e.panels:
            p.y += 12
            p.wrapped(f"{panel.title} · {panel.topology} (model topology)", 120, 15, "bold")
            p.wrapped(panel.verdict, 110, 13)
            cw = _cell_w(panel)
            p.y += 8
            x, tallest = 16.0, 0.0
            for side, grid in ((e.source, panel.source), (e.target, panel.target)):
                head = f"{side.role} {side.label}  {axes(grid.shape, side.names)} ({grid.shard_count})"
                p.parts.append(f'<text x="{x}" y="{p.y + 14}" font-size="14" font-weight="bold">'
                               f'{html.escape(head)}</text>')
                els, w, h = _grid_parts(grid, side.names, cw, x, p.y + 22)
                p.parts += els
                tallest = max(tallest, h)
                x += max(w, _text_w(head, 14)) + 40
            p.width = max(p.width, x)
            p.y += 22 + tallest
            p.wrapped(summary(panel), 110, 13)
            if panel.note:
                p.wrapped("Note: " + panel.note, 110, 12)
        if e.same_on:
            p.wrapped(f"The same devices in the same order on {', '.join(e.same_on)}: nothing moves there.",
                      110, 13)
        p.y += 24
    legend, y = _legend(16, p.y, legend_items(explanations))
    w, h = int(p.width), int(y + 16)
    head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" {FONT}>\n'
    background = '<rect width="100%" height="100%" fill="#ffffff"/>\n'
    return head + background + "\n".join(p.parts + legend) + "\n</svg>\n"


def legend_items(explanations: Sequence[Explanation]) -> list[tuple[str, str]]:
    """(mark, what it means) for the legends of ``explanations``: each legend's items as
    the terminal prints them (``* text``, ``! text``), the swatch of its mark."""
    out: dict[tuple[str, str], None] = {}
    for e in explanations:
        if not e.panels:
            continue
        for item in e.legend.split("   "):
            item = item.strip()
            mark = {"*": MOVES, "!": ABSENT}.get(item[:1], "")
            out[(mark, f"{item[2:]} ({item[0]})" if mark else item)] = None
        if e.move:
            out[("", "keeps its shard")] = None
    return list(out)


def _legend(x: float, y: float, items: Sequence[tuple[str, str]]) -> tuple[list[str], float]:
    out = []
    for mark, text in items:
        out.append(f'<rect x="{x}" y="{y}" width="18" height="14" fill="{FILL[mark]}" stroke="{STROKE}"/>'
                   f'<text x="{x + 26}" y="{y + 12}" font-size="13">{html.escape(text)}</text>')
        y += LINE_H + 2
    return out, y


def _grid_svg(grid: Grid, names: Optional[Sequence[str]], cell_w: int) -> str:
    els, w, h = _grid_parts(grid, names, cell_w, 1, 1)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{int(w + 2)}" height="{int(h + 2)}" {FONT}>'
            + "".join(els) + "</svg>")


_CSS = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #1d2733; }
code, .msg { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.msg { white-space: pre-wrap; background: #f5f7fa; padding: 8px; border-radius: 4px; }
.pair { display: flex; gap: 40px; flex-wrap: wrap; align-items: flex-start; }
.swatch { display: inline-block; width: 16px; height: 12px; border: 1px solid #44546a; margin: 0 6px 0 12px; }
h3 { margin-bottom: 4px; }
"""


def page(explanations: Sequence[Explanation], title: str = "reshard-lint explain") -> str:
    """An HTML page: prose as HTML, each grid an inline SVG."""
    body: list[str] = []
    for e in explanations:
        where = html.escape(f"{e.path}:{e.line}:{e.col + 1}")
        body.append(f"<section><h2><code>{where}</code> {e.code}</h2>")
        body.append(f'<p class="msg">{html.escape(e.message)}</p><ul>')
        for side in (e.source, e.target):
            layout = f", <code>{html.escape(side.spec or 'layout not known')}</code>" if e.move else ""
            body.append(f"<li>{side.role}: <code>{html.escape(side.description)}</code>{layout}</li>")
        body.append("</ul>")
        if e.by_position:
            body.append("<p>The array's layout is not known on both sides: a device's shard is drawn as "
                        "its position in the mesh.</p>")
        for panel in e.panels:
            cw = _cell_w(panel)
            body.append(f"<h3>{html.escape(f'{panel.title} · {panel.topology} (model topology)')}</h3>")
            body.append(f"<p>{html.escape(panel.verdict)}</p><div class=\"pair\">")
            for side, grid in ((e.source, panel.source), (e.target, panel.target)):
                body.append(f"<figure><figcaption><b>{side.role} {html.escape(side.label)}</b> "
                            f"{html.escape(axes(grid.shape, side.names))} ({html.escape(grid.shard_count)})"
                            "</figcaption>"
                            f"{_grid_svg(grid, side.names, cw)}</figure>")
            body.append(f"</div><p>{html.escape(summary(panel))}</p>")
            if panel.note:
                body.append(f"<p><i>Note: {html.escape(panel.note)}</i></p>")
        if e.same_on:
            body.append(f"<p>The same devices in the same order on {html.escape(', '.join(e.same_on))}: "
                        "nothing moves there.</p>")
        body.append("</section>")
    legend = "".join(f'<span class="swatch" style="background:{FILL[m]}"></span>{html.escape(t)}'
                     for m, t in legend_items(explanations))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n"
            + "\n".join(body) + f"\n<p>{legend}</p>\n</body></html>\n")
