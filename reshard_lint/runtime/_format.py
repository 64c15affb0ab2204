"""Rendering device lists for messages and reports. Pure Python, no jax."""

from __future__ import annotations

from typing import Iterable, Sequence


def fmt_ids(values: Sequence[int]) -> str:
    # Long lists are cut in the middle: the ends show where a mesh starts and stops.
    if len(values) <= 16:
        return "[" + ", ".join(map(str, values)) + "]"
    head = ", ".join(map(str, values[:8]))
    tail = ", ".join(map(str, values[-4:]))
    return f"[{head}, ..., {tail}] ({len(values)} devices)"


def fmt_procs(procs: Iterable[int]) -> str:
    return "[" + ", ".join(map(str, sorted(procs))) + "]"
