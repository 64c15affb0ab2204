"""Runtime strict mode: make a single-host run fail where a multi-host job would.

The static rules stop where a mesh comes from a config file, another module or a
parameter, and JAX raises its cross-host reshard errors only with several processes. While
strict mode is on, ``jax.device_put`` (and its pytree form, ``Array.to_device``),
``jax.make_array_from_process_local_data`` and
``multihost_utils.host_local_array_to_global_array`` are checked before JAX runs them, as
are calls of functions made by ``jax.jit(f, in_shardings=...)`` while strict mode is on
(RSH203, RSH204: an argument on another device set or order, which crashes the process on
the second call), as are reads of an array's value (RSH305, RSH306: ``_value``, and numpy's
conversion functions once something is put on one device of another simulated process),
as is a ``Mesh`` built from a device order another process draws otherwise (RSH101: an
unseeded or per-process shuffle, a device set's order), and fail with the same rule codes
the linter uses::

    from reshard_lint.runtime import strict

    with strict(processes=2):          # treat jax.devices() as 2 equal hosts
        run_one_training_step()

This is the only part of reshard-lint that uses jax, and it imports jax only when strict
mode is switched on.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator, Sequence

from . import _state
from ._state import Reorder, StrictConfig
from .errors import ReshardError, ReshardWarning, StrictConfigError

__all__ = ["ReshardError", "ReshardWarning", "StrictConfig", "StrictConfigError", "active",
           "disable", "enable", "strict", "suspended", "watch_seeds"]


def _set_wrappers(install: bool, config: StrictConfig | None) -> None:
    """Install or remove the JAX wrappers for ``config`` (``_state`` calls this, holding its lock)."""
    if install:
        from . import _patch  # imports jax: only reached once strict mode is really used

        _patch.install(config)
    else:
        patch = sys.modules.get("reshard_lint.runtime._patch")  # never installed: nothing to undo
        if patch is not None:
            patch.uninstall()


_state.register_wrappers(_set_wrappers)


@contextmanager
def strict(processes: int | None = None, reorder: Reorder = "warn",
           platform: str | None = None, process: int = 0,
           platforms: Sequence[str] = _state.PLATFORM_CHOICES) -> Iterator[StrictConfig]:
    """Strict mode for the ``with`` block (process-wide: JAX's entry points are global).

    Nests: an inner block's settings win until it exits, then the outer ones apply again.
    ``processes``: split ``jax.devices()`` into that many equal simulated hosts, in order
    (``None``: the real split under multi-controller JAX, else 2 when the device count is even
    and above 1, else 1; ``1`` turns RSH301-304 off). ``reorder``: what RSH202 does,
    ``'warn'``, ``'raise'`` or ``'ignore'``. ``platform``: simulate that platform's device
    ids, hosts and mesh-builder orders on this process's CPU devices (a name from
    ``reshard_lint.runtime.platforms.CATALOGUE``, such as ``"tpu-v5e-16"``). ``process``:
    which simulated process the run plays (0, the default; ``-1`` the last): a bug only
    another process hits (a put onto ``jax.devices()[0]``, process 0's device) shows when
    the run plays that process. ``platforms``: the platforms the project targets (default
    ``("tpu", "gpu", "cpu")``): a move between meshes that device-order builders
    (``jax.make_mesh``, ``create_device_mesh``, a list sorted by id ...) order differently on
    one of them is reported naming it, whichever platform the run simulates (``()``: this
    run's own order only).
    """
    config = StrictConfig(processes=processes, reorder=reorder, platform=platform, process=process,
                          platforms=(platforms,) if isinstance(platforms, str) else tuple(platforms))
    token = _state.push(config)
    try:
        yield config
    finally:
        _state.pop(token)


@contextmanager
def suspended() -> Iterator[None]:
    """No checks inside the block, even under ``strict()`` or ``enable()``."""
    token = _state.push(None)
    try:
        yield
    finally:
        _state.pop(token)


def enable(processes: int | None = None, reorder: Reorder = "warn",
           platform: str | None = None, process: int = 0,
           platforms: Sequence[str] = _state.PLATFORM_CHOICES) -> StrictConfig:
    """Strict mode for the whole process until ``disable()``; a second call replaces the settings.

    ``strict()`` blocks still take precedence while they are open. The settings are
    ``strict()``'s.
    """
    config = StrictConfig(processes=processes, reorder=reorder, platform=platform, process=process,
                          platforms=(platforms,) if isinstance(platforms, str) else tuple(platforms))
    _state.set_process_config(config)
    return config


def disable() -> None:
    """Undo ``enable()``. Once no ``strict()`` block is open either, JAX's own functions are back."""
    _state.set_process_config(None)


def active() -> StrictConfig | None:
    """The settings checks use right now, or None when strict mode is off."""
    return _state.current


def watch_seeds() -> None:
    """Follow the seeds of ``random``'s and ``numpy.random``'s global generators from here to
    the end of the process. Call it first, before any code that may seed them: strict mode then
    knows they are still as each process seeded them from its own entropy (until it sees a
    seed), and a mesh built from a device order they draw raises RSH101. Without it, strict mode
    does not know what ran before it was switched on, and those draws never raise unless it
    sees ``seed()`` / ``seed(jax.process_index())``. The pytest plugin calls it before the
    conftest files load when ``--reshard-strict`` (or the ini option) is given. Imports numpy,
    not jax; the hooks stay for the rest of the process.
    """
    from . import _seeds

    _seeds.watch()
