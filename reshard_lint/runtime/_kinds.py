"""What strict mode saw an array made as, where that matters on the other processes. No jax.

``global``: put on a device picked from the global list by a line every process runs
alike (on every process the same device; only its owner holds it). ``local``: the
process's own piece (``x.addressable_data(i)``, a put on ``jax.local_devices()[k]``): on
process k, k's copy on k's device. Arrays are remembered by id and dropped when
collected; an array not remembered is unknown (see ``_everyone``).
"""

from __future__ import annotations

import weakref
from typing import Any

GLOBAL, LOCAL = "global", "local"

# id(array) -> (kind, the device a global pick named (None for local), how it was spelled,
# a weak reference to the array: an id is reused once its array is gone)
kinds: dict[int, tuple[str, Any, str, Any]] = {}


def remember(array: Any, kind: str, device: Any, spelled: str) -> None:
    key = id(array)

    def gone(ref: Any) -> None:
        entry = kinds.get(key)
        if entry is not None and entry[3] is ref:
            del kinds[key]

    try:
        ref = weakref.ref(array, gone)
    except TypeError:  # not weakly referenceable: stays unknown
        return
    kinds[key] = (kind, device, spelled, ref)


def kind_of(array: Any) -> tuple[str, Any, str, Any] | None:
    entry = kinds.get(id(array))
    if entry is None or entry[3]() is not array:
        return None
    return entry


def remember_local(array: Any, spelled: str = "x.addressable_data(i)") -> None:
    if hasattr(array, "sharding"):
        remember(array, LOCAL, None, spelled)


def forget() -> None:
    kinds.clear()
