"""Keeping Python's cyclic garbage collector and the allocator out of the way of an analysis.

An analysis reads a large tree (Python's) without reference cycles, freed when the call
returns: collections while it is held only rescan it. And importing the engine adds to the
objects every later full collection rescans. Long-lived processes that analyse file
after file (flake8 workers, the language server) therefore pause the collector during
an analysis and freeze what the imports left, once.
"""

from __future__ import annotations

import gc
from typing import Any

_frozen = False
_trim: Any = None  # glibc's malloc_trim, False where there is none
# Files at least this long (characters) leave enough freed heap behind to give back:
# gated (Python's tree), and analysed (the tree with the analysis's values).
# The second was measured with libcst's parser on the benchmark's user tree (files of
# 25-60k characters left the main process of `check` 10 MB above what it held, each trim
# costing ~1 ms) and has not been measured on Python's tree.
GIVE_BACK_CHARS = 100_000
GIVE_BACK_PARSED_CHARS = 25_000


class paused:
    """No collection inside; whatever cycles the analysis leaves are found by the next
    collection after it. The first use then freezes the long-lived objects, unless
    ``freeze`` is False (`check` freezes once itself: ``freeze_imports``).

    A class, not a generator: leaving a generator's ``with`` allocates its StopIteration
    after the collector is back on, and that allocation starts a collection while the
    caller's frame still holds the file's tree (measured: 84 collections rescanning
    trees, 0.14 s, in a `check` worker on the jax repository).
    """

    __slots__ = ("freeze", "enabled")

    def __init__(self, freeze: bool = True) -> None:
        self.freeze = freeze
        self.enabled = False

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        global _frozen
        if self.enabled:
            gc.enable()
        if self.freeze and not _frozen:
            _frozen = True
            freeze_long_lived()


# Long-lived objects made since the last freeze: the project summaries a process keeps
# for later files (project/view.py calls ``kept``).
_kept = 0


def kept() -> None:
    """Something a later file reuses was made (a module's summary, with its tree)."""
    global _kept
    _kept += 1


class paused_keeping(paused):
    """``paused``, and then, where the analysis made summaries that later files reuse,
    a collection and a freeze, in a process that lives for one run (a flake8 worker).

    Without it every full collection of the run rescans them: measured on the
    benchmark's user tree in one process, 115 summaries (the trees of the modules
    analysed files import) took flake8's own parses from 0.56 s to 0.95 s of CPU, and the
    gate's slicing of 30 files from 0.09 s to 0.56 s. Each freeze follows a collection,
    so no garbage is frozen; at most 30 such collections there, of what is not frozen
    yet. Not for the language server: a summary replaced after an edit would be frozen
    garbage."""

    __slots__ = ()

    def __exit__(self, *exc: object) -> None:
        global _kept
        super().__exit__(*exc)
        if _kept:
            _kept = 0
            freeze_long_lived()


def freeze_imports() -> None:
    """Freeze what is alive now without collecting first, once per process.

    For `check`, right after the engine is built: then what is alive is mostly modules,
    and a file's tree the gate may still hold is freed by reference counting as usual
    (ast trees have no cycles). A full collection here would rescan that tree: 0.1 s on
    a 12,000-line file, in a run that may check only that one file.
    """
    global _frozen
    if not _frozen:
        _frozen = True
        gc.freeze()


def freeze_long_lived() -> None:
    """Keep the imported modules' objects out of every later full collection.

    What a front end imports (the engine, its models) adds objects the cyclic collector
    tracks in a flake8 worker, and each of the ~90 full collections of a 600-file run
    rescans them. Freezing moves what is alive now to the permanent generation, where it
    is still freed by reference counting but not rescanned. Collecting first means no
    garbage is frozen; what is frozen is the engine, the front end's own state and the
    current file's, of which at most this one file's reference cycles could outlive
    their use.
    """
    gc.collect()
    gc.freeze()


def give_back() -> None:
    """Return the heap freed by a large file's trees to the operating system (glibc).

    A 4,000-line file Python cannot slice (the engine then takes all of it) grows a process by
    tens of MB, and glibc keeps the freed heap: the next large file grows it again from
    there. Measured on `check` of the jax repository: the main process peaked at 163 MB
    without this and 132 MB with it. A no-op where the C library has no ``malloc_trim``.
    """
    global _trim
    if _trim is None:
        try:
            import ctypes

            _trim = getattr(ctypes.CDLL(None), "malloc_trim", None) or False
        except (OSError, AttributeError, ImportError):
            _trim = False
    if _trim:
        _trim(0)
