"""A module's functions another module may call for a device value, from the text alone.

``from mypkg.meshes import make_mesh`` then ``make_mesh(2)``: the analysis runs the
function's body with the caller's arguments, as it runs a helper of the same file. Only
a module-level ``def`` whose body names devices, meshes, shardings or transfers counts
(the gate's test, imported.py): such a name gets the importing file analysed, and the
module a summary that keeps those bodies (projects.py). A body the text cannot delimit
(a column-0 line inside a string) ends early: the function may then not count, which
loses a finding, never adds one; the engine asks the same test, so it agrees.

Standard library only: the gate runs where libcst is not imported.
"""

from __future__ import annotations

import re

from ..prefilter import _DEVICE_SOURCE

# A module-level def; its body runs to the next line in column 0 that is not blank, a
# comment, or the closing parenthesis of a signature over several lines.
_DEF = re.compile(r"(?m)^(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(")
_NEXT_TOP = re.compile(r"(?m)^[^\s#)]")
# What a value built from devices reads as: a device source, a mesh or sharding
# constructor, a transfer.
VALUE_WORDS = (*_DEVICE_SOURCE, "Mesh", "mesh", "Sharding", "device_put", "make_array", "shard")


def device_functions(text: str) -> frozenset[str]:
    """Names of the module-level functions whose text names a device value."""
    if "def" not in text:
        return frozenset()
    out: set[str] = set()
    for m in _DEF.finditer(text):
        eol = text.find("\n", m.end())
        nxt = _NEXT_TOP.search(text, eol + 1) if eol >= 0 else None
        body = text[m.end(): nxt.start() if nxt is not None else len(text)]
        if any(w in body for w in VALUE_WORDS):
            out.add(m.group(1))
    return frozenset(out)
