"""flake8's workers and the engine: imported once, before flake8 forks them.

flake8 -jN forks its workers from the main process after it has parsed the options
(flake8/checker.py, ``_mp_prefork``), and each worker that meets a file past the gate
imports the engine itself: about 0.03 s of CPU each (docs/performance.md).
Imported in the main process instead, the workers inherit it. Wall time on two cores is
the same (the import moves from the workers to the main process before they start);
the CPU of the run falls by the import of every worker but one.
"""

from __future__ import annotations

from typing import Any


def before_workers(options: Any) -> None:
    """Called with flake8's parsed options, in its main process."""
    if forks_workers(options):
        try:
            preload()
        except Exception:  # noqa: BLE001 - never abort flake8: each worker imports it as before
            pass


def forks_workers(options: Any) -> bool:
    """Will flake8 fork workers for this run, with RSH selected? Not for one file or
    standard input (flake8 checks them in its main process, where a file the gate lets go
    needs no engine at all), nor for one job."""
    try:
        import multiprocessing
        import os

        jobs = options.jobs
        if (multiprocessing.cpu_count() if jobs.is_auto else jobs.n_jobs) <= 1:
            return False

        paths = list(options.filenames or ["."])
        if len(paths) == 1 and (paths[0] == "-" or os.path.isfile(paths[0])):
            return False
        from flake8.style_guide import Decision, DecisionEngine

        return DecisionEngine(options).decision_for("RSH201") is Decision.Selected
    except Exception:  # noqa: BLE001 - another flake8's options: keep the lazy import
        return False


def preload() -> None:
    """What every worker would import at its first file past the gate."""
    from ..engine import engine  # noqa: F401 - imports the rules and the analysis with it
    from ..analysis import interpreter  # noqa: F401
    from ..core.collector import freeze_imports

    freeze_imports()  # the workers' full collections skip what they inherit
