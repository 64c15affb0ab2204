"""Print one of the README's Quick start commands, exactly as a new user copies it.

``python3 .ci/quickstart.py example`` prints the first (install, lint the bundled
example), ``python3 .ci/quickstart.py test`` the second (install, run the whole suite).
.ci/run runs the second, so CI runs what the README tells a user to run, and the two
cannot drift; tests/test_quickstart.py checks the README still has exactly these two.
"""

from __future__ import annotations

import pathlib
import re
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
NAMES = ("example", "test")


def commands(text: str) -> dict[str, str]:
    """The ``sh`` blocks of the Quick start section, by name, in order."""
    section = re.search(r"^## Quick start\n(.*?)(?=^## )", text, re.S | re.M)
    if section is None:
        raise SystemExit("README.md has no '## Quick start' section")
    blocks = re.findall(r"^```sh\n(.*?)\n```", section.group(1), re.S | re.M)
    if len(blocks) != len(NAMES):
        raise SystemExit(f"README.md's Quick start has {len(blocks)} sh blocks, expected {len(NAMES)}")
    return dict(zip(NAMES, (b.strip() for b in blocks)))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in NAMES:
        print(f"usage: quickstart.py {{{'|'.join(NAMES)}}}", file=sys.stderr)
        return 2
    print(commands(README.read_text(encoding="utf-8"))[argv[0]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
