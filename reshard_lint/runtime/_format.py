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


def fmt_spec(spec: object) -> str:
    """A PartitionSpec as users write it: ``P('data')``, ``P()``, ``P(('x', 'y'), None)``
    (JAX's own repr prints the tuple it holds: ``P('data',)``)."""
    try:  # .partitions: iterating a spec with unreduced axes raises
        entries = list(getattr(spec, "partitions", spec))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return str(spec)

    def entry(e: object) -> str:
        if e is None or isinstance(e, str):
            return repr(e)
        if isinstance(e, (tuple, list)):
            return "(" + ", ".join(repr(x) for x in e) + ("," if len(e) == 1 else "") + ")"
        return f"P.{e}"  # P.UNCONSTRAINED, whose repr is its bare name

    parts = [entry(e) for e in entries]
    for key in ("unreduced", "reduced"):  # keyword parts of newer JAX versions, when set
        value = getattr(spec, key, None)
        if value:
            parts.append(f"{key}={{{', '.join(repr(v) for v in sorted(value))}}}")
    return "P(" + ", ".join(parts) + ")"
