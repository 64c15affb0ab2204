"""What a project module exports to the files that import it: its module-level values.

A summary is the module analysed once (libcst, the same interpreter) for the values its
module body leaves bound: device lists, meshes, shardings, arrays placed on them, and
tuples of these. A name bound at more than one site, or rebound by a function
(``global``), is not exported: its value at import time is not known. Functions and
classes are not exported yet: calling one from another module stays unknown.

Summaries are kept per process, keyed by the module's file and content: flake8 workers,
the language server and ``reshard-lint check`` each analyse a module once however many
files import it, and again only when its text changes. ``deps`` lists every project file
a summary read (its own, and those of what it imports), with their content hashes, so a
cached diagnostic can be checked against the files it was computed from.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..analysis.context import FileContext
    from ..analysis.values import Value


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass
class Summary:
    module: str  # dotted name
    path: str  # the file, absolute
    display: str  # the file as messages name it: relative to the project root
    digest: str
    exports: dict[str, "Value"]
    ctx: "FileContext | None"  # positions of its nodes, for messages; None: nothing exported
    deps: dict[str, str] = field(default_factory=dict)  # path -> digest, this file's included
    # The contexts its exports' nodes are in: its own, and those of the modules it
    # re-exports from.
    contexts: list["FileContext"] = field(default_factory=list)


def exportable(value: "Value") -> bool:
    """A value another module can use as it is: placed data and what places it."""
    from ..analysis.values import ArrayVal, DevVal, MeshVal, SeqVal, ShardingVal, SpecVal

    if isinstance(value, (ArrayVal, DevVal, MeshVal, ShardingVal, SpecVal)):
        return True
    return isinstance(value, SeqVal) and bool(value.items) and all(exportable(v) for v in value.items)


def made(module: str, path: str, display: str, text_digest: str, exports: dict[str, "Value"],
         ctx: "FileContext | None", deps: dict[str, str], contexts: list["FileContext"]) -> Summary:
    """A module's summary: ``exports`` (empty when it could not be analysed) from ``ctx``,
    having read the files of ``deps`` and the modules of ``contexts`` besides itself."""
    deps = {**deps, path: text_digest}
    if not exports or ctx is None:
        return Summary(module, path, display, text_digest, {}, None, deps)
    return Summary(module, path, display, text_digest, exports, ctx, deps,
                   [ctx, *(c for c in contexts if c is not ctx)])
