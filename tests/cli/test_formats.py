"""--format text|concise|json|sarif|github, checked against each other and the SARIF schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from reshard_lint.rules.docs import rule_doc
from reshard_lint.rules import all_rules, rule_by_code

from .conftest import ROOT, CROSS, REORDERED, run, write

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
CONCISE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<code>RSH\d{3}) (?P<msg>.+)$")


@pytest.fixture
def tree(project: Path) -> Path:
    write(project, "b/m.py", REORDERED)
    write(project, "a.py", CROSS)
    # Non-ASCII before the finding: columns count characters, not bytes.
    write(project, "c.py", CROSS.replace("y = jax.device_put(x,", "größe = 1; y = jax.device_put(x,"))
    return project


def concise(tree: Path) -> list[dict[str, object]]:
    r = run("check", "--format", "concise", cwd=tree)
    assert r.returncode == 1
    rows = []
    for line in r.stdout.splitlines():
        m = CONCISE.match(line)
        assert m, line
        rows.append({"path": m["path"], "line": int(m["line"]), "col": int(m["col"]), "code": m["code"],
                     "msg": m["msg"]})
    return rows


def test_concise_is_flake8_shaped_and_sorted(tree: Path) -> None:
    rows = concise(tree)
    keys = [(r["path"], r["line"], r["col"], r["code"]) for r in rows]
    assert keys == sorted(keys)
    assert keys == [("a.py", 8, 5, "RSH201"), ("b/m.py", 8, 5, "RSH201"), ("b/m.py", 9, 7, "RSH102"),
                    ("b/m.py", 10, 5, "RSH202"), ("c.py", 8, 16, "RSH201")]


def test_text_headers_equal_concise_lines_plus_snippet_and_help(tree: Path) -> None:
    text = run("check", cwd=tree).stdout
    lines = run("check", "--format", "concise", cwd=tree).stdout.splitlines()
    headers = [x for x in text.splitlines() if CONCISE.match(x)]
    assert headers == lines
    block = text.split("\n\n")[-1].splitlines()  # c.py's finding
    assert block[2] == "8 | größe = 1; y = jax.device_put(x, NamedSharding(half, P('x')))"
    caret = block[3]
    assert caret.index("^") - len("  | ") == len("größe = 1; y = ")
    # Whether a fix is safe is the rule's to say (fix_safety); the format shows what it says.
    safe = rule_by_code("RSH201").fix_safety == "safe"  # type: ignore[union-attr]
    rsh201 = "(safe fix, --fix)" if safe else "(unsafe fix, --unsafe-fixes)"
    help_ = "= help: Build the target on the array's own mesh: NamedSharding(x.sharding.mesh, P('x'))"
    assert f"{help_} {rsh201}" in text
    assert "(unsafe fix, --unsafe-fixes)" in text
    assert "= note: line 5: mesh 'mesh' is built here" in text


def test_json_schema_and_agreement_with_concise(tree: Path) -> None:
    r = run("check", "--format", "json", cwd=tree)
    assert r.returncode == 1
    data = json.loads(r.stdout)
    rows = concise(tree)
    assert len(data) == len(rows)
    names = {rule.code: rule.name for rule in all_rules()}
    for obj, row in zip(data, rows):
        assert set(obj) == {"code", "name", "message", "filename", "location", "end_location", "severity",
                            "fix", "related", "url"}
        assert (obj["filename"], obj["location"]["row"], obj["location"]["column"], obj["code"]) == \
            (row["path"], row["line"], row["col"], row["code"])
        assert obj["message"] == row["msg"]
        assert obj["name"] == names[obj["code"]]
        assert obj["severity"] in ("error", "warning")
        assert obj["url"] is None  # the pages are published nowhere: no link that cannot answer
        end = obj["end_location"]
        assert (end["row"], end["column"]) > (obj["location"]["row"], obj["location"]["column"])
    by_code: dict[str, dict] = {}
    for o in data:
        by_code.setdefault(o["code"], o)  # the first of each code: a.py's RSH201
    assert by_code["RSH102"]["fix"]["applicability"] == "unsafe"
    fix = by_code["RSH201"]["fix"]
    assert fix["applicability"] == rule_by_code("RSH201").fix_safety  # type: ignore[union-attr]
    assert fix["edits"] == [{"location": {"row": 8, "column": 23}, "end_location": {"row": 8, "column": 50},
                             "content": "NamedSharding(x.sharding.mesh, P('x'))"}]
    assert {"location": {"row": 5, "column": 8}, "message": "mesh 'mesh' is built here"} in \
        by_code["RSH201"]["related"]
    assert json.loads(run("check", "--format", "json", "a.py", "--select", "RSH1", cwd=tree).stdout) == []


def test_sarif_validates_against_the_official_schema(tree: Path) -> None:
    r = run("check", "--format", "sarif", cwd=tree)
    assert r.returncode == 1
    log = json.loads(r.stdout)
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    run0 = log["runs"][0]
    assert log["version"] == "2.1.0" and run0["columnKind"] == "unicodeCodePoints"
    assert "informationUri" not in run0["tool"]["driver"]
    rules = {d["id"]: d for d in run0["tool"]["driver"]["rules"]}
    for rule in all_rules():
        d = rules[rule.code]
        assert d["name"] == rule.name
        assert d["shortDescription"]["text"] == rule.summary
        assert d["fullDescription"]["text"]
        assert d["help"]["markdown"] == rule_doc(rule) == d["help"]["text"]
        assert "helpUri" not in d  # published nowhere; the page itself is in help
        assert d["defaultConfiguration"]["level"] in ("error", "warning")
    results = run0["results"]
    rows = concise(tree)
    assert len(results) == len(rows)
    for res, row in zip(results, rows):
        region = res["locations"][0]["physicalLocation"]["region"]
        assert res["ruleId"] == row["code"]
        assert run0["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == row["path"]
        assert (region["startLine"], region["startColumn"]) == (row["line"], row["col"])
        assert res["message"]["text"] == row["msg"]
    with_fix = [res for res in results if "fixes" in res]
    assert with_fix
    rep = with_fix[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert rep["deletedRegion"] == {"startLine": 8, "startColumn": 23, "endLine": 8, "endColumn": 50}
    assert rep["insertedContent"]["text"] == "NamedSharding(x.sharding.mesh, P('x'))"
    assert any("relatedLocations" in res for res in results)


def test_sarif_of_a_clean_tree_and_of_a_parse_error_validates(project: Path) -> None:
    write(project, "ok.py", "x = 1\n")
    validator = jsonschema.Draft4Validator(SCHEMA)
    r = run("check", "--format", "sarif", cwd=project)
    assert r.returncode == 0
    log = json.loads(r.stdout)
    validator.validate(log)
    assert log["runs"][0]["results"] == []
    write(project, "broken.py", "from jax.sharding import Mesh\nm = Mesh(jax.devices(\n")
    r = run("check", "--format", "sarif", cwd=project)
    assert r.returncode == 1
    log = json.loads(r.stdout)
    validator.validate(log)
    assert [res["ruleId"] for res in log["runs"][0]["results"]] == ["RSH001"]


def test_github_annotations(tree: Path) -> None:
    r = run("check", "--format", "github", cwd=tree)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert len(lines) == len(concise(tree))
    assert lines[0].startswith("::error file=a.py,line=8,col=5,endLine=8,endColumn=")
    assert ",title=RSH201::RSH201 jax.device_put moves 'x'" in lines[0]
    for line in lines:
        assert re.match(r"^::(error|warning) file=[^,]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,"
                        r"title=RSH\d{3}::RSH\d{3} ", line), line
