"""RSH203 at run time: JAX's "Received incompatible devices for jitted computation".

JAX raises this itself, on one host as on many, for ``jit(..., out_shardings=<another
mesh>)``, ``with_sharding_constraint`` / ``reshard`` onto another mesh, an eager operation
between arrays on two meshes, and a committed array used under a ``jax.set_mesh`` context
mesh it is not on. What it lacks is the linter's rule and fix, and, for a constraint inside
``jit``, the line: the error surfaces at the call. Strict mode turns it into RSH203 where
JAX formats its message (``stages._device_assignment_mismatch_error``, reached only on the
error path, so this costs nothing otherwise), naming the constraint's line when JAX knows
it and the user's call otherwise. JAX's own message is kept in full.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from . import _state
from ._where import is_library
from ._format import fmt_ids
from .errors import ReshardError

_INCOMPAT = '"ValueError: Received incompatible devices for jitted computation"'


def _ids(da: Any) -> tuple[int, ...]:
    try:
        return tuple(int(d.id) for d in da)
    except TypeError:  # an abstract mesh: a size, no devices
        return ()


def _location(fails: Sequence[Any]) -> tuple[str, int] | None:
    """The line of a sharding inside the computation (a constraint, a reshard), when JAX
    recorded it: the line the linter reports, not the call that traced it."""
    try:
        from jax._src import source_info_util
    except ImportError:  # pragma: no cover - other jax versions
        return None
    for fail in fails:
        info = getattr(fail, "source_info", None)
        if info is None:
            continue
        # JAX's user frames are all frames outside jax: skip strict mode's own wrappers.
        for frame in source_info_util.user_frames(info.source_info.traceback):
            if not is_library(frame.file_name):
                return frame.file_name, frame.start_line
    return None


def _side(fail: Any, api_name: str) -> str:
    try:
        kind = fail.m_type_str(api_name)
    except Exception:
        kind = str(getattr(fail, "m_type", "a sharding"))
    return str(kind).replace("_", " ").lower() if str(kind).isupper() else str(kind)


def wrap_mismatch_error(original: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(original)
    def _device_assignment_mismatch_error(fun_name: Any, fails: Any, args_flat: Any, api_name: str,
                                          arg_names: Any) -> str:
        __tracebackhide__ = True
        jax_message = original(fun_name, fails, args_flat, api_name, arg_names)
        if _state.current is None or len(fails) != 2:
            return jax_message
        first, second = fails
        a, b = _ids(first.da), _ids(second.da)
        how = ("the same devices in another order" if a and b and set(a) == set(b)
               else "a different device set")
        context = any("context mesh" in _side(f, api_name) for f in fails)
        fix = ("commit the array to the context mesh first (jax.device_put(x, "
               "NamedSharding(mesh, spec))), or leave it uncommitted" if context else
               "jax.device_put(x, <the other side's sharding>) first, or use one mesh for both")
        message = (
            f"RSH203 {api_name}({fun_name}) combines {_side(first, api_name)} on devices "
            f"{fmt_ids(a) if a else '(abstract)'} with {_side(second, api_name)} on devices "
            f"{fmt_ids(b) if b else '(abstract)'}, {how}: JAX raises {_INCOMPAT} on one host "
            f"and on many; {fix}. JAX: {jax_message}")
        raise ReshardError(message, code="RSH203", call=api_name, source=a, target=b,
                           location=_location(fails))

    return _device_assignment_mismatch_error
