"""The examples in docs/usage/cli.md and docs/output-formats.md match the command."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .conftest import CROSS, ROOT, run, write

CLI_MD = (ROOT / "docs" / "usage" / "cli.md").read_text(encoding="utf-8")
FORMATS_MD = (ROOT / "docs" / "output-formats.md").read_text(encoding="utf-8")


def block(text: str, info: str) -> str:
    m = re.search(rf"^```{info}\n(.*?)^```$", text, re.M | re.S)
    assert m, info
    return m.group(1)


def test_the_config_example_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(block(CLI_MD, "toml"))
    write(tmp_path, "tests/test_x.py", CROSS)
    r = run("check", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "RSH201" in r.stdout


def test_every_check_option_is_documented() -> None:
    r = run("check", "--help")
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", r.stdout)) - {"--help"}
    missing = sorted(f for f in flags if f"`{f}" not in CLI_MD)
    assert not missing


def test_json_example_has_the_real_fields(tmp_path: Path) -> None:
    write(tmp_path, "train.py", CROSS)
    real = json.loads(run("check", "--format", "json", cwd=tmp_path).stdout)[0]
    doc = json.loads(block(FORMATS_MD, "json"))[0]
    assert set(doc) == set(real)
    assert doc["fix"].keys() == real["fix"].keys()
    assert (doc["location"], doc["end_location"], doc["fix"]["edits"], doc["related"][0]) == \
        (real["location"], real["end_location"], real["fix"]["edits"], real["related"][0])
    text = run("check", "--format", "text", cwd=tmp_path).stdout
    doc_text = block(FORMATS_MD, "text").splitlines()
    assert doc_text[1:] == text.splitlines()[1:]
    github = run("check", "--format", "github", cwd=tmp_path).stdout
    doc_github = next(x for x in FORMATS_MD.splitlines() if x.startswith("::error "))
    assert github.startswith(doc_github.removesuffix(" ..."))
