"""Where in the user's code a strict-mode error happened. Pure Python, no jax import.

A check runs several frames below the user's call: inside a wrapper, inside JAX (a jitted
call's cache miss, ``np.asarray`` calling ``__array__``), sometimes inside the standard
library (``contextlib``). The linter names a file and line, so strict mode names the
innermost frame that belongs to none of those: the line the user wrote.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
from types import FrameType

_packages: tuple[str, ...] | None = None
_stdlib: str | None = None


def _dirs() -> tuple[tuple[str, ...], str | None]:
    global _packages, _stdlib
    if _packages is None:
        dirs = [os.path.dirname(os.path.abspath(__file__))]  # reshard_lint/runtime
        for name in ("jax", "jaxlib", "numpy", "_pytest", "pluggy"):
            module = sys.modules.get(name)
            file = getattr(module, "__file__", None) if module is not None else None
            if file:
                dirs.append(os.path.dirname(os.path.abspath(file)))
        _packages = tuple(d + os.sep for d in dirs)
        stdlib = sysconfig.get_paths().get("stdlib")
        _stdlib = os.path.abspath(stdlib) + os.sep if stdlib else None
    return _packages, _stdlib


def is_library(filename: str) -> bool:
    if filename.startswith("<"):
        return filename.startswith("<frozen ")  # else exec'd or interactive user code
    path = os.path.abspath(filename)
    packages, stdlib = _dirs()
    if path.startswith(packages):
        return True
    # contextlib, functools ...; a venv's site-packages may sit below the stdlib directory
    return stdlib is not None and path.startswith(stdlib) and os.sep + "site-packages" + os.sep not in path


def user_location(frame: FrameType | None = None) -> tuple[str, int] | None:
    """(filename, line) of the innermost frame outside JAX, numpy, the standard library and
    strict mode itself, starting at ``frame`` (default: the caller's)."""
    f: FrameType | None = frame if frame is not None else sys._getframe(1)
    while f is not None:
        if not is_library(f.f_code.co_filename):
            return f.f_code.co_filename, f.f_lineno
        f = f.f_back
    return None


_REAL = ("jax.", "jaxlib.", "reshard_lint.runtime.")


class _Running(threading.local):
    """``jax_put``: True while JAX's own device_put runs under strict mode's wrapper, in this
    thread: every read of an array's properties then is JAX's (answered truthfully, as
    from_library would find), without looking at the caller's frame, which would make
    Python build a frame object per read. Per thread: another thread's user code reading
    meanwhile is still the user's."""

    jax_put = False  # (a class attribute: every thread starts from it)


running = _Running()

# ids of the globals of modules found to be JAX's (or strict mode's): modules live as long
# as the process, so no other dict can take one of these ids. JAX's device_put asks an
# array's is_fully_addressable on every call: the common answer must be a set lookup.
library_globals: set[int] = set()


def from_library(frame: FrameType) -> bool:
    """Whether ``frame`` runs in JAX's or strict mode's own code (read from its module's
    name): the wrappers answer JAX's own calls truthfully and simulate only the user's."""
    namespace = frame.f_globals
    if id(namespace) in library_globals:
        return True
    name = namespace.get("__name__", "")
    if name == "jax" or name == "jaxlib" or name.startswith(_REAL):
        library_globals.add(id(namespace))
        return True
    return False
