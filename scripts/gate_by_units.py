"""Compare the gate's two ways of deciding a long file, over real code.

`gate.may_have_findings` decides a file long enough to be sliced from the facts of its
units (`components.gate_by_units`), which the slicing then reuses; shorter files from one
walk of the whole tree. Both must give the same verdict. This walks every `.py` file of
the given directories that passes the prefilter and has at least
`components.COMPONENT_MIN_LINES` lines, and prints the files where the verdicts differ.

    python scripts/gate_by_units.py DIR [DIR ...]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from reshard_lint.stages.components import COMPONENT_MIN_LINES, gate_by_units
from reshard_lint.stages.gate import decide, gate_facts, prefilter


def main(dirs: list[str]) -> int:
    checked = differ = 0
    for d in dirs:
        for path in sorted(Path(d).rglob("*.py")):
            try:
                text = path.read_text(encoding="utf-8")
                tree = ast.parse(text)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            if not prefilter(text) or not tree.body or (tree.body[-1].end_lineno or 0) < COMPONENT_MIN_LINES:
                continue
            checked += 1
            whole, units = decide(gate_facts(tree)), gate_by_units(tree)
            if whole != units:
                differ += 1
                print(f"{path}: whole file {whole}, by units {units}")
    print(f"{checked} files checked, {differ} with different verdicts")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
