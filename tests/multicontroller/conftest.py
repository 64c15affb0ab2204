"""Kill whatever a multicontroller test left running, even when it failed."""

from __future__ import annotations

from typing import Iterator

import pytest

from . import harness


@pytest.fixture(autouse=True)
def _no_stray_workers() -> Iterator[None]:
    yield
    # A failing or interrupted test must not leave jax processes holding ports and CPU.
    harness.kill_all()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    harness.kill_all()
