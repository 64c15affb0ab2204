"""Which piece of the array each device of a mesh holds, from the PartitionSpec's text.

A device's *shard* is the block of the array it holds: for each array dimension, the
index along the mesh axes that dimension is split over (mixed radix, in the order the
spec lists them) and how many blocks that dimension has. Two devices hold the same piece
when both tuples agree, so comparing a device's piece in the source mesh with its piece
in the target mesh says whether its data moves. Mesh axes the spec does not name
replicate: devices that differ only along them hold the same piece.

Only the spec's text and the mesh's axis names are read (both are what the analysis
recorded); anything not spelled as literals gives ``None`` and the caller falls back to
the device's position in the mesh.
"""

from __future__ import annotations

import ast
import math
from typing import Optional, Sequence

from ...analysis.devarray import DevArr
from ...analysis.shard_indices import pieces as shard_pieces

# (block index, blocks) per array dimension; () for a replicated array.
Piece = tuple[tuple[int, int], ...]
SpecEntries = tuple[tuple[str, ...], ...]  # per array dimension, the mesh axes it is split over


def parse_spec(code: Optional[str]) -> Optional[SpecEntries]:
    """``P('a', None, ('b', 'c'))`` -> (('a',), (), ('b', 'c')); None when not literals."""
    if not code:
        return None
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    out: list[tuple[str, ...]] = []
    for arg in node.args:
        if isinstance(arg, ast.Constant) and arg.value is None:
            out.append(())
        elif isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            out.append((arg.value,))
        elif isinstance(arg, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in arg.elts):
            out.append(tuple(e.value for e in arg.elts))  # type: ignore[attr-defined]
        else:
            return None  # P.UNCONSTRAINED, a name, *axes: not a literal layout
    return tuple(out)


def pieces(shape: Sequence[int], names: Optional[Sequence[str]],
           spec: Optional[SpecEntries]) -> Optional[list[Piece]]:
    """The piece each position of a mesh of ``shape`` holds (row-major order), or None
    when the axis names or the spec are unknown or do not fit the mesh: the analysis's
    own computation (``analysis.shard_indices``), on a mesh whose ids are positions."""
    if names is None or spec is None:
        return None
    n = math.prod(shape)
    got = shard_pieces(DevArr(tuple(range(n)), tuple(shape)), tuple(names), spec)
    return None if got is None else [got[i] for i in range(n)]


def positions(shape: Sequence[int]) -> list[Piece]:
    """The fallback: a device's piece is its position in the mesh (what it holds when the
    array is split over every mesh axis in order)."""
    n = math.prod(shape)
    return [((i, n),) for i in range(n)]


def label(piece: Piece) -> str:
    """How a cell names its piece: ``s3``; ``s1,2`` for a 2-D split, ``s:,2`` where the
    first dimension is whole (numpy's slice notation); ``all`` for the whole array."""
    if all(blocks == 1 for _, blocks in piece):
        return "all"
    return "s" + ",".join(str(i) if blocks > 1 else ":" for i, blocks in piece)
