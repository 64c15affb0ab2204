"""What ``reshard-lint explain`` draws, as data: sides, grids, panels, explanations.

Both kinds of drawing fill these: a move between two meshes (gather.py) and a single
mesh or device list set against the order or the devices it should have (figures.py).
The renderers (text.py, picture.py) read only these.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional, Sequence

PLATFORM_TITLES = {"tpu": "multi-host TPU", "gpu": "GPU", "cpu": "CPU"}
# The device counts a picture prefers, after the ones the program spells out: small
# enough to read, the model's smallest multi-host size.
PREFERRED_COUNTS = (8, 16, 64)
# What a device's mark says, for both renderers.
MOVES = "moves"
ABSENT = "absent"
MOVE_LEGEND = "* holds another shard after the move than before   ! in one of the two meshes only"


@dataclass(frozen=True)
class Side:
    role: str  # "source" (the array's mesh) or "target"
    label: str  # 'mesh', or the call that made an unnamed mesh
    description: str  # describe_mesh: "'mesh' (line 19, jax.devices())"
    names: Optional[tuple[str, ...]]  # axis names when spelled as literals
    spec: Optional[str]  # the PartitionSpec's text, when known


@dataclass(frozen=True)
class Grid:
    shape: tuple[int, ...]
    ids: tuple[int, ...]  # row-major, as the mesh's device array holds them
    shards: tuple[str, ...]  # the piece each position holds (shards.label)
    marks: tuple[str, ...]  # "", MOVES or ABSENT, per position
    split: tuple[int, ...] = ()  # blocks per array dimension; () replicated
    count_text: str = ""  # said instead of the shard count where no array is drawn

    @property
    def shard_count(self) -> str:
        """``8 shards``, ``2 × 4 shards``, or that every device holds the whole array."""
        if self.count_text:
            return self.count_text
        if not any(n > 1 for n in self.split):
            return "the whole array on each device"
        return " × ".join(str(n) for n in self.split) + " shards"


@dataclass(frozen=True)
class Panel:
    """Two grids on one topology, for every platform (layout) that draws them alike."""

    kinds: tuple[tuple[str, str], ...]  # (platform title, what the analysis concluded there)
    scope: str  # which topologies decided: "" (all of them) or " of 8 devices"
    topology: str  # "8 devices, 2 processes of 4"
    source: Grid
    target: Grid
    moved: int  # devices in both meshes whose shard differs
    absent: int  # devices in one mesh only
    note: str = ""  # a caveat about what the drawing stands for
    # A drawing of one mesh against the order or devices it should have (figures.py)
    # says what it shows in words of its own: the line under the title, the one under the grids.
    said: str = ""
    summary_text: str = ""

    @property
    def title(self) -> str:
        titles = [t for t, _ in self.kinds]
        if "GPU (ids by process)" in titles and "GPU (ids by topology)" in titles:
            # Both numberings draw alike: the numbering does not matter here.
            titles[titles.index("GPU (ids by process)")] = "GPU"
            titles.remove("GPU (ids by topology)")
        return ", ".join(titles)

    @property
    def verdict(self) -> str:
        if self.said:
            return self.said
        return verdict_text(self.kinds, self.scope)


@dataclass(frozen=True)
class Explanation:
    path: str
    line: int
    col: int  # 0-based, as the diagnostic has it
    code: str
    message: str
    source: Side
    target: Side
    panels: tuple[Panel, ...]
    same_on: tuple[str, ...]  # platform titles where both orders agree on the drawn topology
    by_position: bool  # layout unknown: a device's shard is taken as its mesh position
    # What the marks mean: a move's (MOVE_LEGEND), or a figure's own (figures.py).
    legend: str = ""
    move: bool = True  # a move between two meshes: the sides' layouts are part of it


@dataclass
class Outcome:
    """What explain found at a line: pictures, and for each diagnostic it could not draw, why."""

    explanations: list[Explanation] = field(default_factory=list)
    undrawn: list[tuple[str, int, str]] = field(default_factory=list)  # (code, line, why)
    diagnostic_lines: list[int] = field(default_factory=list)  # every line with a diagnostic
    error: Optional[str] = None  # the file could not be parsed


def verdict_text(kinds: Sequence[tuple[str, str]], scope: str = "") -> str:
    """What the analysis concluded, grouping the titles that share a conclusion:
    ``kinds`` is (title, kind) per drawn platform."""
    groups: dict[str, list[str]] = {}
    for title, kind in kinds:
        groups.setdefault(kind, []).append(title)
    every = "on every {} topology" + scope + " the analysis tries"
    say = {"reordered": "the same devices in another order " + every,
           "different": "other devices " + every,
           "undecided": "not decided on {} (its topologies disagree): no claim there",
           "uncompared": "not compared on {}"}
    return "; ".join(say[k].format(" and ".join(dict.fromkeys(t.split(" (")[0] for t in ts)))
                     for k, ts in groups.items())


# The model numbers the devices of a platform named in the code (jax.devices('cpu')) from
# a base of its own, so that two platforms never share an id (analysis/devices.py).
_PLATFORM_ID_BASE = 100_000


def shown_ids(a: Sequence[int], b: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids as a user would see them: without the model's platform base when both
    meshes are on one named platform (100003 is device 3 of jax.devices('cpu'))."""
    bases = {d // _PLATFORM_ID_BASE for d in (*a, *b)}
    if len(bases) != 1:
        return tuple(a), tuple(b)
    base = bases.pop() * _PLATFORM_ID_BASE
    return tuple(d - base for d in a), tuple(d - base for d in b)


def merge_alike(panels: list[Panel]) -> list[Panel]:
    """One panel for the platforms that draw the same two grids (a reordering written in
    the code looks the same wherever enumeration is the same)."""
    out: list[Panel] = []
    for p in panels:
        at = next((i for i, q in enumerate(out)
                   if (q.source, q.target, q.topology) == (p.source, p.target, p.topology)), None)
        if at is None:
            out.append(p)
        else:
            q = out[at]
            out[at] = replace(q, kinds=q.kinds + p.kinds, note=q.note or p.note)
    return out
