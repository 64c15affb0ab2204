"""pytest plugin: ``--reshard-strict`` runs every test under reshard-lint's strict mode.

Loaded through the ``pytest11`` entry point in every pytest run where reshard-lint is
installed, so it must cost nothing when unused: jax is imported only once strict mode is
switched on (by the flag, the ini option, or a ``reshard_strict`` marker on a test).
"""

from __future__ import annotations

import os
from typing import Any, Generator

import pytest

from .errors import ReshardError

_SECTION = "reshard-lint strict mode"
# Set when the flag or ini option switched strict mode on:
# (processes, reorder, platform, process, platforms).
_ENABLED = pytest.StashKey[tuple[int | None, str, str | None, int, tuple[str, ...]]]()
_PLATFORMS = ("tpu", "gpu", "cpu")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reshard-lint", "reshard-lint runtime strict mode")
    group.addoption("--reshard-strict", action="store_true", default=None, dest="reshard_strict",
                    help="check every jax.device_put for cross-host reshard bugs (RSH201/202, "
                         "RSH301-304) and every call of a function jitted with in_shardings "
                         "(RSH203/204), and fail the test where a multi-host job would fail")
    group.addoption("--no-reshard-strict", action="store_false", dest="reshard_strict",
                    help="turn strict mode off even when the ini file turns it on")
    group.addoption("--reshard-strict-processes", default=None, dest="reshard_strict_processes",
                    metavar="N", help="simulate N equal hosts over jax.devices() "
                                      "(default: auto, 2 for an even device count; 1 = off)")
    group.addoption("--reshard-strict-reorder", default=None, dest="reshard_strict_reorder",
                    choices=("warn", "raise", "ignore"),
                    help="what RSH202 (same devices, other order) does (default: warn)")
    group.addoption("--reshard-strict-platform", default=None, dest="reshard_strict_platform",
                    metavar="NAME", help="simulate a platform's device ids, hosts and mesh orders "
                                         "(tpu-v5e-16, gpu-2x4, cpu-2x4 ...: "
                                         "reshard_lint.runtime.platforms.CATALOGUE)")
    group.addoption("--reshard-strict-platforms", default=None, dest="reshard_strict_platforms",
                    metavar="LIST", help="the platforms a move between two meshes is judged "
                                         "under, comma-separated (default: tpu,gpu,cpu, or the "
                                         "platforms of [tool.reshard-lint] in pyproject.toml)")
    group.addoption("--reshard-strict-process", default=None, dest="reshard_strict_process",
                    metavar="K", help="which simulated process the run plays (default 0; -1 or "
                                      "'last': the last), to check what only that process does")
    parser.addini("reshard_strict", type="bool", default=False,
                  help="run every test under reshard-lint strict mode")
    parser.addini("reshard_strict_processes", default="auto",
                  help="simulated hosts for reshard-lint strict mode (auto or N)")
    parser.addini("reshard_strict_reorder", default="warn",
                  help="what RSH202 does in strict mode: warn, raise or ignore")
    parser.addini("reshard_strict_platform", default="",
                  help="platform strict mode simulates (tpu-v5e-16, gpu-2x4 ...; empty: none)")
    parser.addini("reshard_strict_platforms", default="",
                  help="platforms strict mode judges moves under (tpu,gpu,cpu; empty: "
                       "[tool.reshard-lint] platforms, else all three)")
    parser.addini("reshard_strict_process", default="0",
                  help="which simulated process strict mode plays (0 default, -1 or last: the last)")


def _processes(raw: Any) -> int | None:
    text = str(raw).strip().lower()
    if text in ("", "auto", "none"):
        return None
    try:
        return int(text)
    except ValueError:
        raise pytest.UsageError(f"reshard-lint: processes must be 'auto' or an integer, not {raw!r}")


def _process(raw: Any) -> int:
    text = str(raw).strip().lower()
    if text in ("", "first"):
        return 0
    if text == "last":
        return -1
    try:
        return int(text)
    except ValueError:
        raise pytest.UsageError(f"reshard-lint: process must be an integer, 'first' or 'last', "
                                f"not {raw!r}") from None


def _platform_list(raw: Any, where: str) -> tuple[str, ...]:
    items = [p.strip().lower() for p in (raw.split(",") if isinstance(raw, str) else raw)]
    items = [p for p in items if p]
    bad = [p for p in items if p not in _PLATFORMS]
    if bad or not items:
        raise pytest.UsageError(f"reshard-lint: {where} must list some of tpu, gpu, cpu, not {raw!r}")
    return tuple(p for p in _PLATFORMS if p in items)


def _project_platforms(config: pytest.Config) -> tuple[str, ...] | None:
    """``platforms`` of ``[tool.reshard-lint]`` in the run's pyproject.toml (the linter's
    setting: the project's target platforms are one fact), or None."""
    path = os.path.join(str(config.rootpath), "pyproject.toml")
    if not os.path.isfile(path):
        return None
    import tomllib

    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh).get("tool", {}).get("reshard-lint", {})
    except (OSError, ValueError):
        return None  # the linter reports a broken file; strict mode keeps its default
    raw = table.get("platforms") if isinstance(table, dict) else None
    return _platform_list(raw, "[tool.reshard-lint] platforms") if raw is not None else None


def _settings(config: pytest.Config) -> tuple[bool, int | None, str, str | None, int, tuple[str, ...]]:
    enabled = config.getoption("reshard_strict")
    if enabled is None:
        enabled = bool(config.getini("reshard_strict"))
    processes = config.getoption("reshard_strict_processes")
    if processes is None:
        processes = config.getini("reshard_strict_processes")
    reorder = config.getoption("reshard_strict_reorder") or str(config.getini("reshard_strict_reorder"))
    if reorder not in ("warn", "raise", "ignore"):
        raise pytest.UsageError(f"reshard-lint: reshard_strict_reorder must be warn, raise or ignore, "
                                f"not {reorder!r}")
    platform = config.getoption("reshard_strict_platform") or str(config.getini("reshard_strict_platform")).strip()
    process = config.getoption("reshard_strict_process")
    if process is None:
        process = config.getini("reshard_strict_process")
    # The flag, the ini option, the linter's setting in pyproject.toml, all three.
    raw = config.getoption("reshard_strict_platforms") \
        or str(config.getini("reshard_strict_platforms")).strip()
    platforms = _platform_list(raw, "reshard_strict_platforms") if raw else \
        (_project_platforms(config) or _PLATFORMS)
    return bool(enabled), _processes(processes), reorder, platform or None, _process(process), platforms


def _requested(config: pytest.Config) -> bool:
    """Whether the flag or the ini option switches strict mode on, read as early as pytest
    allows (the command line as parsed before the conftest files load)."""
    enabled = getattr(config.known_args_namespace, "reshard_strict", None)
    if enabled is None:
        enabled = config.getini("reshard_strict")
    return bool(enabled)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """pytest's earliest hook for a plugin loaded by entry point or ``-p``: it runs before
    the conftest files and test modules are imported. When strict mode is on for the run,
    the global generators' seeds are followed from here (``watch_seeds()``), so that a
    ``random.seed(0)`` in a conftest or a test module's body is seen (RSH101, _seeds.py)."""
    if _requested(early_config):
        from . import watch_seeds

        watch_seeds()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "reshard_strict(processes=None, reorder='warn', platform=None, process=0, "
        "platforms=('tpu', 'gpu', 'cpu'), enabled=True): run this test under reshard-lint strict "
        "mode with these settings (enabled=False: no checks)")
    enabled, processes, reorder, platform, process, platforms = _settings(config)
    if enabled:
        # Switched on here, before collection, so test modules that bind
        # `from jax import device_put` at import time get the checked function too.
        from . import enable
        from .errors import StrictConfigError

        try:
            enable(processes=processes, reorder=reorder, platform=platform,  # type: ignore[arg-type]
                   process=process, platforms=platforms)
        except StrictConfigError as e:
            raise pytest.UsageError(f"reshard-lint: {e}") from None
        config.stash[_ENABLED] = (processes, reorder, platform, process, platforms)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _ENABLED in config.stash:
        from . import disable

        disable()


def pytest_report_header(config: pytest.Config) -> str | None:
    if _ENABLED not in config.stash:
        return None
    processes, reorder, platform, process, platforms = config.stash[_ENABLED]
    shown = "auto" if processes is None else processes
    where = f", platform={platform}" if platform else ""
    played = f", process={process}" if process else ""
    targets = f", platforms={','.join(platforms)}" if platforms != _PLATFORMS else ""
    return f"reshard-lint strict mode: on (processes={shown}, reorder={reorder}{where}{played}{targets})"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    if _ENABLED in item.config.stash:
        from ._state import new_program

        new_program()  # what one test told the simulated pod must not decide another's verdicts
    marker = item.get_closest_marker("reshard_strict")
    if marker is None:
        yield
        return
    kwargs = dict(marker.kwargs)
    if marker.args:
        kwargs.setdefault("enabled", marker.args[0])
    from . import strict, suspended

    if not kwargs.pop("enabled", True):
        with suspended():
            yield
        return
    # The marker's settings win for what it names; the rest are the run's (flags, then ini),
    # so reshard_strict(processes=2) under --reshard-strict-platform=tpu-v5e-16 simulates 2
    # processes of that platform instead of silently dropping the platform.
    _, processes, reorder, platform, process, platforms = _settings(item.config)
    for key, value in (("processes", processes), ("reorder", reorder), ("platform", platform),
                       ("process", process), ("platforms", platforms)):
        kwargs.setdefault(key, value)
    with strict(**kwargs):
        yield


def _finding(excinfo: pytest.ExceptionInfo[BaseException] | None) -> ReshardError | None:
    seen: set[int] = set()
    exc: BaseException | None = excinfo.value if excinfo is not None else None
    while exc is not None and id(exc) not in seen:  # the error may be wrapped by user code
        if isinstance(exc, ReshardError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    found = _finding(call.excinfo)
    if found is None:
        return
    from ._format import fmt_ids

    report = outcome.get_result()
    lines = [
        f"test:    {item.nodeid}",
        f"rule:    {found.code} (in {found.call})",
        f"source:  {fmt_ids(found.source) if found.source else '-'}",
        f"target:  {fmt_ids(found.target) if found.target else '-'}",
        f"message: {found}",
    ]
    report.sections.append((_SECTION, "\n".join(lines)))
