"""docs/runtime.md's simulated-pod example runs as the page says, and its catalogue is the code's."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Callable

from reshard_lint.runtime.platforms import CATALOGUE

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"
Run = Callable[..., subprocess.CompletedProcess[str]]


def _pasteable() -> str:
    text = DOC.read_text()
    after = text[text.index("A program to paste"):]
    match = re.search(r"```python\n(.*?)```", after, re.S)
    assert match, "no python block after 'A program to paste'"
    return match.group(1)


def test_the_pasteable_example_prints_what_its_comments_say(python8: Run) -> None:
    code = _pasteable()
    proc = python8(code)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Each print's expected output is the comment on its line.
    expected = [line.split("#", 1)[1].strip() for line in code.splitlines()
                if line.strip().startswith("print(") and "#" in line]
    assert proc.stdout.splitlines() == expected


def test_the_catalogue_table_lists_every_platform_with_its_size() -> None:
    text = DOC.read_text()
    for name, platform in CATALOGUE.items():
        row = re.search(rf"^\| `{re.escape(name)}` \| (\d+) \| (\d+) \|", text, re.M)
        assert row, name
        assert (int(row.group(1)), int(row.group(2))) == (platform.size, platform.hosts), name
