"""Hover on a diagnostic in a real language-server session: the two meshes drawn as in
``reshard-lint explain`` (explain/hover.py)."""

from __future__ import annotations

from pathlib import Path


from reshard_lint.frontends.explain.gather import explain_source
from reshard_lint.frontends.explain.text import render

from .lspclient import LspClient

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "train.py").read_text(encoding="utf-8")




def _hover(c: LspClient, uri: str, line: int, character: int) -> object:
    return c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                            "position": {"line": line, "character": character}})


def test_hover_on_a_crossing_draws_both_meshes(client: LspClient, tmp_path: Path) -> None:
    caps = client.initialize(tmp_path)["capabilities"]
    assert caps["hoverProvider"]
    path = tmp_path / "train.py"
    path.write_text(EXAMPLE, encoding="utf-8")
    uri = path.as_uri()
    client.open(uri, EXAMPLE)
    diags = client.wait_diagnostics(uri)
    [rsh202] = [d for d in diags if d["code"] == "RSH202"]
    start = rsh202["range"]["start"]
    got = _hover(client, uri, start["line"], start["character"] + 5)
    assert isinstance(got, dict)
    assert got["range"] == rsh202["range"]
    value = got["contents"]["value"]
    assert got["contents"]["kind"] == "markdown"
    assert value.startswith("**reshard-lint explain**\n\n```text\n") and value.endswith("\n```")
    # The picture is the command's text form, on the file the editor has.
    settings = {"runtime": "auto", "platforms": ("tpu", "gpu", "cpu")}
    expected = render(explain_source(EXAMPLE, str(path), 58, settings).explanations)
    assert value.split("```text\n", 1)[1][:-len("\n```")] == expected.rstrip("\n")
    assert "│ 7* │ 6* │" in value and "\x1b[" not in value

    # Off every diagnostic: no hover.
    assert _hover(client, uri, 0, 0) is None
    # A reordered mesh (RSH102, issue 56: the hover was empty): the natural order beside it.
    [rsh102] = [d for d in diags if d["code"] == "RSH102"]
    at = rsh102["range"]["start"]
    got = _hover(client, uri, at["line"], at["character"])
    assert isinstance(got, dict) and got["range"] == rsh102["range"]
    value = got["contents"]["value"]
    expected = render(explain_source(EXAMPLE, str(path), at["line"] + 1, settings).explanations)
    assert value.split("```text\n", 1)[1][:-len("\n```")] == expected.rstrip("\n")
    assert ": RSH102\n" in value and "natural jax.devices() order" in value
    assert "│ 7* │ 6* │ 5* │ 4* │ 3* │ 2* │ 1* │ 0* │" in value
    assert client.shutdown() == 0


def test_hover_on_a_cross_module_move_draws_both_meshes(client: LspClient, tmp_path: Path) -> None:
    """The array's mesh and the target's built in one module, the put in another, the
    call in a third (issue 56: the hover was empty)."""
    from tests.cli.test_explain import cross_module_project

    client.initialize(tmp_path, options={"platforms": ["cpu"]})
    main = cross_module_project(tmp_path)
    text = main.read_text(encoding="utf-8")
    uri = main.as_uri()
    client.open(uri, text)
    [rsh201] = [d for d in client.wait_diagnostics(uri) if d["code"] == "RSH201"]
    start = rsh201["range"]["start"]
    got = _hover(client, uri, start["line"], start["character"] + 3)
    assert isinstance(got, dict)
    value = got["contents"]["value"]
    assert "source: 'mesh' (pkg/meshes.py:5, jax.devices()), P('data')" in value
    assert "│ 0* │ 1* │ 2* │ 3* │ 4! │ 5! │ 6! │ 7! │    │ 0* │ 1* │ 2* │ 3* │" in value
    assert client.shutdown() == 0


def test_hover_follows_the_editor_platform_setting(client: LspClient, tmp_path: Path) -> None:
    client.initialize(tmp_path, options={"platforms": ["cpu"]})
    path = tmp_path / "train.py"
    path.write_text(EXAMPLE, encoding="utf-8")
    uri = path.as_uri()
    client.open(uri, EXAMPLE)
    diags = client.wait_diagnostics(uri)
    [rsh201] = [d for d in diags if d["code"] == "RSH201"]
    got = _hover(client, uri, rsh201["range"]["start"]["line"], rsh201["range"]["start"]["character"])
    assert isinstance(got, dict)
    value = got["contents"]["value"]
    assert "\nCPU · 8 devices" in value and "TPU ·" not in value
    assert "4! │" in value
    assert client.shutdown() == 0
