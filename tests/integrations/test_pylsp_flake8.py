"""The flake8 route into editors: python-lsp-server's flake8 plugin runs our plugin."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from reshard_lint.rules import rule_by_code

from ..conftest import tool
from .lspclient import LspClient

_RULE = rule_by_code("RSH201")
assert _RULE is not None
BUGGY = re.sub(r"  # RSH\d{3}:\d+$", "", _RULE.firing()[0].code, flags=re.MULTILINE)

PYLSP_SETTINGS = {"pylsp": {"plugins": {
    "flake8": {"enabled": True, "executable": tool("flake8"), "extendSelect": ["RSH"]},
    "pycodestyle": {"enabled": False},
    "pyflakes": {"enabled": False},
    "mccabe": {"enabled": False},
}}}


def test_pylsp_flake8_plugin_publishes_rsh_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(BUGGY, encoding="utf-8")
    uri = path.as_uri()
    c = LspClient([sys.executable, "-m", "pylsp"], cwd=tmp_path)
    try:
        c.initialize(tmp_path, options=PYLSP_SETTINGS)
        # Settings through didChangeConfiguration as well: editors send them this way.
        c.notify("workspace/didChangeConfiguration", {"settings": PYLSP_SETTINGS})
        c.open(uri, BUGGY)
        diags = c.wait_diagnostics(
            uri, timeout=120, check=lambda ds: any(d.get("source") == "flake8" for d in ds))
        rsh = [d for d in diags if str(d.get("code", "")).startswith("RSH")]
        assert [d["code"] for d in rsh] == ["RSH201"], diags
        d = rsh[0]
        # flake8 prints 1-based columns; pylsp turns them back into 0-based ones.
        assert d["range"]["start"] == {"line": 8, "character": 4}
        assert "different device set" in d["message"]
        assert c.shutdown() == 0
    finally:
        c.close()
