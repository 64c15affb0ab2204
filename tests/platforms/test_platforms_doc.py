"""docs/platforms.md shows the orders these mock topologies give under the installed JAX."""

from __future__ import annotations

from pathlib import Path

import pytest

from .topologies import CPUS, GPUS, TPUS, make_mesh

pytest.importorskip("jax")

DOC = Path(__file__).resolve().parents[2] / "docs" / "platforms.md"
BEGIN, END = "<!-- orders: begin (tests/platforms/test_platforms_doc.py) -->", "<!-- orders: end -->"
SHOWN = ("TPU v4 4x2x1, 2 hosts", "TPU v4 4x4x1, 4 hosts", "TPU v5e 4x4x1, 4 hosts",
         "GPU 2x4, ids by process", "GPU 2x4, ids by topology", "CPU 2x4")


def _fmt(ids: tuple[int, ...] | None) -> str:
    return "refused (shape does not fit the torus)" if ids is None else ", ".join(map(str, ids))


def render() -> str:
    rows = ["| topology | spelled | flattened device ids |", "|---|---|---|"]
    topologies = {t.name: t for t in (*TPUS, *GPUS, *CPUS)}
    for name in SHOWN:
        t = topologies[name]
        n = t.n
        rows.append(f"| {name} | `jax.devices()` | {_fmt(t.enumeration)} |")
        rows.append(f"| | `sorted(jax.devices(), key=lambda d: d.id)` | {_fmt(tuple(sorted(t.enumeration)))} |")
        shapes = [(n,), (2, n // 2), (n // 2, 2)] if n == 8 else [(n,), (4, n // 4), (2, n // 2)]
        for shape in shapes:
            rows.append(f"| | `jax.make_mesh({shape}, ...)` | {_fmt(make_mesh(shape, t.devices))} |")
        rows.append(f"| | `jax.make_mesh({(n,)}, ..., devices=jax.devices()[::-1])` | "
                    f"{_fmt(make_mesh((n,), t.devices[::-1]))} |")
    return "\n".join(rows)


def test_platforms_doc_shows_what_jax_does() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"{DOC} lacks the generated table markers"
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == render(), (
        "docs/platforms.md is out of date with the installed JAX; paste the output of "
        "`python -c 'from tests.platforms.test_platforms_doc import render; print(render())'`")
