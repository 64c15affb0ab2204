"""What the language-server tests share: the server command and a client per test."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from .lspclient import SERVER, LspClient


@pytest.fixture
def client(tmp_path: Path) -> Iterator[LspClient]:
    c = LspClient(SERVER, cwd=tmp_path)
    try:
        yield c
    finally:
        c.close()
