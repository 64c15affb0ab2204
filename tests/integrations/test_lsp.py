"""The language server driven over stdio by a real client, as an editor would."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any


from reshard_lint.frontends.lsp_positions import CLONE_DOCS
from reshard_lint.rules import rule_by_code

from ..test_library_objects import TRAINER
from .lspclient import SERVER, LspClient, apply_workspace_edit, utf16_len



def _strip_markers(code: str) -> str:
    return re.sub(r"  # (RSH\d{3}:\d+\s*)+$", "", code, flags=re.MULTILINE)


BUGGY = _strip_markers(rule_by_code("RSH201").firing()[0].code)  # type: ignore[union-attr]
FIXED = _strip_markers(rule_by_code("RSH201").firing()[0].fixed or "")  # type: ignore[union-attr]
BUG_LINE = 8  # 0-based line of the device_put in BUGGY
# RSH201's fix changes which devices hold data (unsafe); RSH103's keeps them (safe).
SAFE_BUGGY = _strip_markers(rule_by_code("RSH103").firing()[1].code)  # type: ignore[union-attr]
SAFE_FIXED = _strip_markers(rule_by_code("RSH103").firing()[1].fixed or "")  # type: ignore[union-attr]


def _offered_fix(actions: list[dict[str, Any]]) -> dict[str, Any]:
    [fix] = [a for a in actions if not a["title"].startswith("Add `# noqa")]
    return fix




def _doc(tmp_path: Path, text: str, name: str = "train.py") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path.as_uri()


def _actions(c: LspClient, uri: str, diag: dict[str, Any]) -> list[dict[str, Any]]:
    return c.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": diag["range"],
        "context": {"diagnostics": [diag], "triggerKind": 1}})


def test_open_publishes_diagnostic_with_severity_link_and_related(client: LspClient, tmp_path: Path) -> None:
    init = client.initialize(tmp_path)
    caps = init["capabilities"]
    assert caps["positionEncoding"] == "utf-16"
    assert "quickfix" in caps["codeActionProvider"]["codeActionKinds"]
    uri = _doc(tmp_path, BUGGY)
    client.open(uri, BUGGY)
    diags = client.wait_diagnostics(uri)
    assert len(diags) == 1
    d = diags[0]
    assert d["code"] == "RSH201"
    assert d["source"] == "reshard-lint"
    assert d["severity"] == 1  # rule.severity == "error"
    # the clone's page, a file that exists (the project is published at no address)
    assert d["codeDescription"]["href"] == (CLONE_DOCS / "RSH201.md").as_uri()
    assert (CLONE_DOCS / "RSH201.md").is_file()
    assert d["range"]["start"] == {"line": BUG_LINE, "character": 4}
    assert "different device set" in d["message"]
    related = d["relatedInformation"]
    # Where the two meshes are built: `mesh = Mesh(...)` (line 5) and `half = Mesh(...)` (line 8).
    assert [(r["location"]["uri"], r["location"]["range"]["start"]["line"]) for r in related] == [
        (uri, 4), (uri, 7)]
    assert all("built here" in r["message"] for r in related)
    assert client.shutdown() == 0


def test_warning_severity_for_warning_rules(client: LspClient, tmp_path: Path) -> None:
    rule = rule_by_code("RSH202")
    assert rule is not None and rule.severity == "warning"
    text = _strip_markers(rule.firing()[0].code)
    client.initialize(tmp_path)
    uri = _doc(tmp_path, text)
    client.open(uri, text)
    diags = client.wait_diagnostics(uri)
    severities = {d["code"]: d["severity"] for d in diags}
    assert severities["RSH202"] == 2  # warning
    assert all(severities[c] == 1 for c in severities if c != "RSH202")
    assert client.shutdown() == 0


def test_quick_fix_round_trip(client: LspClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    uri = _doc(tmp_path, BUGGY)
    client.open(uri, BUGGY)
    [diag] = client.wait_diagnostics(uri)
    actions = _actions(client, uri, diag)
    # Rebuilding the target on the array's mesh changes which devices hold the result:
    # offered, as unsafe, never preferred (an editor may apply preferred fixes on save).
    fixes = [a for a in actions if not a["title"].startswith("Add `# noqa")]
    assert len(fixes) == 1 and not any(a.get("isPreferred") for a in actions)
    fix = fixes[0]
    assert fix["kind"] == "quickfix"
    assert fix["title"].endswith("(unsafe)")
    assert fix["diagnostics"][0]["code"] == "RSH201"
    new_text = apply_workspace_edit(BUGGY, uri, fix["edit"])
    assert new_text == FIXED
    client.change_full(uri, new_text, version=2)
    assert client.wait_diagnostics(uri) == []
    assert client.shutdown() == 0


def test_unsafe_fix_is_titled_and_not_preferred(client: LspClient, tmp_path: Path) -> None:
    rule = rule_by_code("RSH102")
    assert rule is not None and rule.fix_safety == "unsafe"
    example = next(e for e in rule.firing() if e.fixed)
    text = _strip_markers(example.code)
    client.initialize(tmp_path)
    uri = _doc(tmp_path, text)
    client.open(uri, text)
    diags = client.wait_diagnostics(uri)
    d = next(d for d in diags if d["code"] == "RSH102")
    fixes = [a for a in _actions(client, uri, d) if not a["title"].startswith("Add `# noqa")]
    assert fixes and all(a["title"].endswith("(unsafe)") and not a.get("isPreferred") for a in fixes)
    assert client.shutdown() == 0


def test_noqa_action_appends_and_silences(client: LspClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    uri = _doc(tmp_path, BUGGY)
    client.open(uri, BUGGY)
    [diag] = client.wait_diagnostics(uri)
    [action] = [a for a in _actions(client, uri, diag) if a["title"] == "Add `# noqa: RSH201`"]
    assert action["kind"] == "quickfix"
    new_text = apply_workspace_edit(BUGGY, uri, action["edit"])
    assert new_text.splitlines()[BUG_LINE] == BUGGY.splitlines()[BUG_LINE] + "  # noqa: RSH201"
    client.change_full(uri, new_text, version=2)
    assert client.wait_diagnostics(uri) == []
    assert client.shutdown() == 0


def test_noqa_action_extends_existing_comment(client: LspClient, tmp_path: Path) -> None:
    lines = BUGGY.splitlines(keepends=True)
    lines[BUG_LINE] = lines[BUG_LINE].rstrip("\n") + "  # noqa: E501\n"
    text = "".join(lines)
    client.initialize(tmp_path)
    uri = _doc(tmp_path, text)
    client.open(uri, text)
    [diag] = client.wait_diagnostics(uri)
    [action] = [a for a in _actions(client, uri, diag) if a["title"].startswith("Add `# noqa")]
    new_text = apply_workspace_edit(text, uri, action["edit"])
    assert new_text.splitlines()[BUG_LINE].endswith("  # noqa: E501,RSH201")
    client.change_full(uri, new_text, version=2)
    assert client.wait_diagnostics(uri) == []
    assert client.shutdown() == 0


def test_utf16_columns_after_non_ascii(client: LspClient, tmp_path: Path) -> None:
    lines = BUGGY.splitlines(keepends=True)
    # An astral character (two UTF-16 code units) and an accented one before the finding.
    prefix = "label = 'größe 𝔘'; "
    lines[BUG_LINE] = prefix + lines[BUG_LINE]
    text = "".join(lines)
    client.initialize(tmp_path)
    uri = _doc(tmp_path, text)
    client.open(uri, text)
    [diag] = client.wait_diagnostics(uri)
    start = diag["range"]["start"]
    assert start["line"] == BUG_LINE
    assert start["character"] == utf16_len(prefix) + 4 == len(prefix) + 4 + 1
    body = lines[BUG_LINE].rstrip("\n")
    assert diag["range"]["end"]["character"] == utf16_len(body)
    fix = _offered_fix(_actions(client, uri, diag))
    new_text = apply_workspace_edit(text, uri, fix["edit"])
    assert new_text.splitlines()[BUG_LINE] == prefix + FIXED.splitlines()[BUG_LINE]
    client.change_full(uri, new_text, version=2)
    assert client.wait_diagnostics(uri) == []
    assert client.shutdown() == 0


def test_save_lints_without_waiting_for_the_change_debounce(client: LspClient, tmp_path: Path) -> None:
    # A debounce of an hour: only didSave can make the server look at the new text.
    client.initialize(tmp_path, options={"reshard-lint": {"debounce": 3600}})
    clean = FIXED
    uri = _doc(tmp_path, clean)
    client.open(uri, clean)
    assert client.wait_diagnostics(uri) == []
    client.change_full(uri, BUGGY, version=2)
    (tmp_path / "train.py").write_text(BUGGY, encoding="utf-8")
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    msg = client.wait_for(lambda m: m["method"] == "textDocument/publishDiagnostics")
    assert msg["params"]["version"] == 2
    assert [d["code"] for d in msg["params"]["diagnostics"]] == ["RSH201"]
    assert client.shutdown() == 0


def test_broken_buffer_keeps_last_good_diagnostics(client: LspClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    uri = _doc(tmp_path, BUGGY)
    client.open(uri, BUGGY)
    [diag] = client.wait_diagnostics(uri)
    broken = BUGGY + "def half_typed(:\n"
    client.change_full(uri, broken, version=2)
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    # No quick fixes from a buffer that does not parse (their edits could be stale) ...
    assert _actions(client, uri, diag) == []
    # ... and nothing is published for it: the next publication is for the repaired text.
    client.change_full(uri, FIXED, version=3)
    msg = client.wait_for(lambda m: m["method"] == "textDocument/publishDiagnostics")
    assert msg["params"]["version"] == 3 and msg["params"]["diagnostics"] == []
    published = [m for m in client.notifications if m.get("method") == "textDocument/publishDiagnostics"]
    assert [m["params"]["version"] for m in published] == [1, 3]
    assert "Traceback" not in client.stderr
    assert client.shutdown() == 0


def test_settings_ignore_and_close_clears(client: LspClient, tmp_path: Path) -> None:
    client.initialize(tmp_path, options={"reshard-lint": {"ignore": ["RSH2"]}})
    uri = _doc(tmp_path, BUGGY)
    client.open(uri, BUGGY)
    assert client.wait_diagnostics(uri) == []
    client.notify("workspace/didChangeConfiguration", {"settings": {"reshard-lint": {"ignore": []}}})
    assert [d["code"] for d in client.wait_diagnostics(uri)] == ["RSH201"]
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.wait_diagnostics(uri) == []
    assert client.shutdown() == 0


def test_runtime_from_settings_and_from_the_project(client: LspClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.reshard-lint]\nruntime = "single-controller"\n')
    client.initialize(tmp_path)
    uri = _doc(tmp_path, BUGGY)
    client.open(uri, BUGGY)
    # The project runs single-controller: moving between device sets works there.
    assert client.wait_diagnostics(uri) == []
    client.notify("workspace/didChangeConfiguration",
                  {"settings": {"reshard-lint": {"runtime": "multi-controller"}}})
    assert [d["code"] for d in client.wait_diagnostics(uri)] == ["RSH201"]
    assert client.shutdown() == 0


def test_per_file_runtime_from_the_project_and_from_settings(client: LspClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.reshard-lint.per-file-runtime]\n"tests/*" = "single-controller"\n')
    (tmp_path / "tests").mkdir()
    client.initialize(tmp_path)
    test_uri, src_uri = _doc(tmp_path, BUGGY, "tests/test_train.py"), _doc(tmp_path, BUGGY, "train.py")
    client.open(test_uri, BUGGY)
    client.open(src_uri, BUGGY)
    # tests/* run single-controller: moving between device sets works there; train.py is the default's.
    assert client.wait_diagnostics(test_uri) == []
    assert [d["code"] for d in client.wait_diagnostics(src_uri)] == ["RSH201"]
    # The editor's own table replaces the project's; its globs are relative to the project's root.
    client.notify("workspace/didChangeConfiguration",
                  {"settings": {"reshard-lint": {"per-file-runtime": {"train.py": "single-controller"}}}})
    assert [d["code"] for d in client.wait_diagnostics(test_uri)] == ["RSH201"]
    assert client.wait_diagnostics(src_uri) == []
    assert client.shutdown() == 0


def test_library_objects_from_the_project(client: LspClient, tmp_path: Path) -> None:
    # A project's own object that keeps a tree (docs/library-objects.md): the editor reads it as check does.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.reshard-lint.library-objects]\n"mylib.Trainer.load" = { makes = "trainer" }\n'
        '[tool.reshard-lint.library-kinds]\ntrainer = { keeps = ["state"], assign = true }\n')
    client.initialize(tmp_path)
    uri = _doc(tmp_path, TRAINER)
    client.open(uri, TRAINER)
    assert [(d["code"], d["range"]["start"]["line"]) for d in client.wait_diagnostics(uri)] == [("RSH301", 9)]
    assert client.shutdown() == 0


def test_fix_all_source_action(client: LspClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)

    def fix_all(name: str, text: str) -> list[dict[str, Any]]:
        uri = _doc(tmp_path, text, name)
        client.open(uri, text)
        client.wait_diagnostics(uri)
        end = {"line": len(text.splitlines()), "character": 0}
        whole = {"start": {"line": 0, "character": 0}, "end": end}
        return client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": whole,
            "context": {"diagnostics": [], "only": ["source.fixAll"]}})

    [action] = fix_all("safe.py", SAFE_BUGGY)
    assert action["kind"] == "source.fixAll.reshard-lint"
    assert apply_workspace_edit(SAFE_BUGGY, (tmp_path / "safe.py").as_uri(), action["edit"]) == SAFE_FIXED
    # Fix-all (often run on save) never moves data: RSH201's fix is unsafe, so nothing is offered.
    assert fix_all("train.py", BUGGY) == []
    assert client.shutdown() == 0


def test_exit_without_shutdown_is_an_error_exit(tmp_path: Path) -> None:
    c = LspClient(SERVER, cwd=tmp_path)
    try:
        c.initialize(tmp_path)
        c.notify("exit")
        assert c.proc.wait(timeout=30) == 1
    finally:
        c.close()


# --- a 2,000-line file: how long from didOpen to diagnostics (reported, not asserted) ------

_HEADER = '''\
"""Pipeline-parallel training utilities (generated for the reshard-lint editor benchmark)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

'''

_BLOCK = '''\
def stage_{i}_init(rng, shape=(1024, 1024)):
    """Build the parameters of stage {i} on the whole mesh."""
    mesh = Mesh(np.array(jax.devices()), ('data',))
    w = jax.random.normal(rng, shape)
    w = jax.device_put(w, NamedSharding(mesh, P('data')))
    b = jnp.zeros(shape[-1:])
    b = jax.device_put(b, NamedSharding(mesh, P()))
    return {{'w': w, 'b': b}}


@functools.partial(jax.jit, static_argnums=(2,))
def stage_{i}_apply(params, x, activation='relu'):
    y = x @ params['w'] + params['b']
    if activation == 'relu':
        y = jax.nn.relu(y)
    return y


def stage_{i}_step(params, batch, lr=1e-3):
    def loss_fn(p):
        out = stage_{i}_apply(p, batch['x'])
        return jnp.mean((out - batch['y']) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return params, loss


def stage_{i}_hand_off(params):
    full = Mesh(np.array(jax.devices()), ('x',))
    acts = jax.device_put(np.ones((8, 128)), NamedSharding(full, P('x')))
    {handoff}
    return acts

'''


def _big_file(lines_wanted: int = 2000, findings_every: int = 12) -> tuple[str, int]:
    parts = [_HEADER]
    i = findings = 0
    while sum(p.count("\n") for p in parts) < lines_wanted:
        if i % findings_every == 5:
            # A real bug: hand the activations to half of the devices.
            handoff = ("half = Mesh(np.array(jax.devices()[:4]), ('x',))\n"
                       "    acts = jax.device_put(acts, NamedSharding(half, P('x')))")
            findings += 1
        else:
            handoff = "acts = jax.device_put(acts, NamedSharding(full, P()))"
        parts.append(_BLOCK.format(i=i, handoff=handoff))
        i += 1
    return "".join(parts), findings


def test_two_thousand_line_file_time_to_diagnostics(client: LspClient, tmp_path: Path,
                                                    record_property: Any) -> None:
    text, findings = _big_file()
    n_lines = text.count("\n")
    assert n_lines >= 2000
    client.initialize(tmp_path)
    uri = _doc(tmp_path, text, "pipeline.py")
    # A warm-up on another file, so that imports and rule construction are not counted.
    warm = _doc(tmp_path, BUGGY, "warm.py")
    client.open(warm, BUGGY)
    client.wait_diagnostics(warm)
    t0 = time.perf_counter()
    client.open(uri, text)
    diags = client.wait_diagnostics(uri)
    elapsed = time.perf_counter() - t0
    assert [d["code"] for d in diags] == ["RSH201"] * findings
    # Then an edit (debounced) of the same file, as a keystroke would cause.
    edited = text.replace("lr=1e-3", "lr=2e-3", 1)
    t1 = time.perf_counter()
    client.change_full(uri, edited, version=2)
    client.wait_diagnostics(uri)
    after_change = time.perf_counter() - t1
    record_property("didopen_to_diagnostics_s", round(elapsed, 3))
    record_property("didchange_to_diagnostics_s_incl_debounce", round(after_change, 3))
    print(f"\n{n_lines}-line file, {findings} findings: "
          f"didOpen -> publishDiagnostics {elapsed * 1000:.0f} ms; "
          f"didChange -> publishDiagnostics {after_change * 1000:.0f} ms (incl. the debounce)")
    assert client.shutdown() == 0


def test_reshard_lint_lsp_subcommand(tmp_path: Path) -> None:
    """The route editors are told to use: the `lsp` subcommand of the installed command."""
    from ..conftest import tool

    # --stdio: VS Code's language client and others add it on their own.
    c = LspClient([tool("reshard-lint"), "lsp", "--stdio"], cwd=tmp_path)
    try:
        init = c.initialize(tmp_path)
        assert init["serverInfo"]["name"] == "reshard-lint"
        uri = _doc(tmp_path, BUGGY)
        c.open(uri, BUGGY)
        assert [d["code"] for d in c.wait_diagnostics(uri)] == ["RSH201"]
        assert c.shutdown() == 0
    finally:
        c.close()


def test_form_feed_is_not_a_line_break(client: LspClient, tmp_path: Path) -> None:
    # Python and LSP end lines at \n, \r\n and \r only; str.splitlines() also breaks at \f.
    text = BUGGY.replace("import jax\n", "import jax\n\x0c\n", 1)
    init = client.initialize(tmp_path)
    assert init["capabilities"]["textDocumentSync"]["change"] == 1  # full
    uri = _doc(tmp_path, text)
    client.open(uri, text)
    [diag] = client.wait_diagnostics(uri)
    assert diag["range"]["start"] == {"line": BUG_LINE + 1, "character": 4}
    fix = _offered_fix(_actions(client, uri, diag))
    fixed = FIXED.replace("import jax\n", "import jax\n\x0c\n", 1)
    assert apply_workspace_edit(text, uri, fix["edit"]) == fixed
    assert client.shutdown() == 0


def test_changes_are_debounced_into_one_analysis(client: LspClient, tmp_path: Path) -> None:
    # A long quiet time, so that the five changes surely fall inside one window.
    client.initialize(tmp_path, options={"debounce": 5})
    uri = _doc(tmp_path, BUGGY)
    client.open(uri, BUGGY)
    client.wait_diagnostics(uri)
    for version in range(2, 7):
        client.change_full(uri, BUGGY + f"\nstep = {version}\n", version)
    msg = client.wait_for(lambda m: m["method"] == "textDocument/publishDiagnostics")
    assert msg["params"]["version"] == 6
    published = [m["params"]["version"] for m in client.notifications
                 if m.get("method") == "textDocument/publishDiagnostics"]
    assert published == [1, 6]
    assert client.shutdown() == 0


def test_a_newer_version_replaces_the_analysis_of_an_older_one(client: LspClient, tmp_path: Path) -> None:
    # No debounce: every change asks for an analysis at once, and each makes the one
    # before it stale. Only the newest version's diagnostics may reach the editor.
    text, findings = _big_file(600, findings_every=4)
    client.initialize(tmp_path, options={"debounce": 0})
    uri = _doc(tmp_path, text, "pipeline.py")
    client.open(uri, text)
    for version in range(2, 7):
        client.change_full(uri, text + f"\nstep = {version}\n", version)
    msg = client.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                          and m["params"]["version"] == 6)
    assert [d["code"] for d in msg["params"]["diagnostics"]] == ["RSH201"] * findings
    published = [m["params"]["version"] for m in client.notifications
                 if m.get("method") == "textDocument/publishDiagnostics"]
    assert published[-1] == 6 and published == sorted(published)
    assert client.shutdown() == 0


def test_utf32_positions_when_the_client_offers_only_utf32(client: LspClient, tmp_path: Path) -> None:
    lines = BUGGY.splitlines(keepends=True)
    prefix = "label = 'größe 𝔘'; "
    lines[BUG_LINE] = prefix + lines[BUG_LINE]
    text = "".join(lines)
    init = client.initialize(tmp_path, capabilities={"general": {"positionEncodings": ["utf-32"]}})
    assert init["capabilities"]["positionEncoding"] == "utf-32"
    uri = _doc(tmp_path, text)
    client.open(uri, text)
    [diag] = client.wait_diagnostics(uri)
    assert diag["range"]["start"] == {"line": BUG_LINE, "character": len(prefix) + 4}
    assert client.shutdown() == 0


def test_code_action_kinds_filter(client: LspClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    uri = _doc(tmp_path, SAFE_BUGGY)
    client.open(uri, SAFE_BUGGY)
    [diag] = client.wait_diagnostics(uri)

    def kinds(only: list[str]) -> set[str]:
        return {a["kind"] for a in client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diag["range"],
            "context": {"diagnostics": [diag], "only": only}})}

    assert kinds(["quickfix"]) == {"quickfix"}
    assert kinds(["source"]) == {"source.fixAll.reshard-lint"}
    assert kinds(["source.fixAll"]) == {"source.fixAll.reshard-lint"}
    assert kinds(["source.organizeImports"]) == set()
    assert kinds(["quick"]) == set()  # a kind is a dotted path, not a string prefix
    assert client.shutdown() == 0


def test_without_pygls_the_command_says_what_to_install(tmp_path: Path) -> None:
    """A plain `pip install reshard-lint` (no `lsp` extra), in a fresh virtualenv."""
    import shutil
    import subprocess

    from ..conftest import ROOT

    # pip builds in the source tree (build/, egg-info): give it a copy, not the checkout.
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "bench", "tests", "build", "*.egg-info", ".venv", "venv", ".reshard-lint-cache",
        ".hypothesis", ".pytest_cache", "__pycache__"))
    venv = tmp_path / "venv"
    # No pip of its own (ensurepip costs ~9 s of CPU): this session's pip installs into it.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                    "--disable-pip-version-check", str(src)], check=True, capture_output=True, timeout=900)
    probe = subprocess.run([str(py), "-c", "import pygls"], capture_output=True)
    assert probe.returncode != 0  # the test is about an environment without pygls
    proc = subprocess.run([str(venv / "bin" / "reshard-lint"), "lsp"], input="", capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    # what can be installed: the extra's dependency, or the clone with the extra; never the
    # bare name from an index, where reshard-lint is not published
    assert "pip install 'pygls>=1.3'" in proc.stderr
    assert "pip install '/path/to/reshard-lint[lsp]'" in proc.stderr
    assert "install 'reshard-lint[lsp]'" not in proc.stderr
    assert "Traceback" not in proc.stderr


def test_project_configuration_applies_in_the_editor(client: LspClient, tmp_path: Path) -> None:
    # The same pyproject.toml that `reshard-lint check` reads: RSH201 off for scripts/,
    # and the editor shows what the command line would.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.reshard-lint]\n[tool.reshard-lint.per-file-ignores]\n"scripts/*" = ["RSH201"]\n',
        encoding="utf-8")
    (tmp_path / "scripts").mkdir()
    client.initialize(tmp_path)
    quiet_uri = _doc(tmp_path, BUGGY, "scripts/train.py")
    client.open(quiet_uri, BUGGY)
    assert client.wait_diagnostics(quiet_uri) == []
    loud_uri = _doc(tmp_path, BUGGY, "train.py")
    client.open(loud_uri, BUGGY)
    assert [d["code"] for d in client.wait_diagnostics(loud_uri)] == ["RSH201"]
    assert client.shutdown() == 0


def test_editor_settings_override_the_project(client: LspClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.reshard-lint]\nignore = ["RSH201"]\n', encoding="utf-8")
    client.initialize(tmp_path, options={"reshard-lint": {"ignore": []}})
    uri = _doc(tmp_path, BUGGY)
    client.open(uri, BUGGY)
    assert [d["code"] for d in client.wait_diagnostics(uri)] == ["RSH201"]
    assert client.shutdown() == 0


def test_mesh_from_another_module_with_its_unsaved_edits(client: LspClient, tmp_path: Path) -> None:
    # A project: the meshes in mypkg/mesh.py, the transfer in mypkg/sync.py.
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    mesh_text = ("import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n"
                 "TRAIN = Mesh(np.array(jax.devices()), ('x',))\n"
                 "ROLLOUT = Mesh(np.array(jax.devices()[:2]), ('x',))\n")
    (pkg / "mesh.py").write_text(mesh_text)
    sync_text = ("import jax\nimport numpy as np\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
                 "from .mesh import ROLLOUT, TRAIN\n"
                 "w = jax.device_put(np.zeros(8), NamedSharding(TRAIN, P('x')))\n"
                 "r = jax.device_put(w, NamedSharding(ROLLOUT, P()))\n")
    (pkg / "sync.py").write_text(sync_text)
    client.initialize(tmp_path, options={"reshard-lint": {"debounce": 0.05}})
    sync, mesh = (pkg / "sync.py").as_uri(), (pkg / "mesh.py").as_uri()
    client.open(sync, sync_text)
    [d] = client.wait_diagnostics(sync)
    assert d["code"] == "RSH201" and "(mypkg/mesh.py:4, jax.devices())" in d["message"]
    assert [(r["location"]["uri"], r["location"]["range"]["start"]["line"]) for r in d["relatedInformation"]] \
        == [(mesh, 3), (mesh, 4)]
    # Editing the mesh module in the editor, unsaved: the importer is linted again from
    # the editor's text. Rollouts on every device: nothing to report.
    client.open(mesh, mesh_text)
    client.wait_diagnostics(mesh)
    client.change_full(mesh, mesh_text.replace("jax.devices()[:2]", "jax.devices()"), version=2)
    msg = client.wait_for(lambda m: m["method"] == "textDocument/publishDiagnostics"
                          and m["params"]["uri"] == sync)
    assert msg["params"]["diagnostics"] == []
    client.change_full(mesh, mesh_text, version=3)
    msg = client.wait_for(lambda m: m["method"] == "textDocument/publishDiagnostics"
                          and m["params"]["uri"] == sync)
    assert [d["code"] for d in msg["params"]["diagnostics"]] == ["RSH201"]
    assert client.shutdown() == 0
