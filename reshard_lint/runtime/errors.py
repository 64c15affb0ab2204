"""What strict mode raises and warns with. Pure Python: importing this never imports jax."""

from __future__ import annotations


class _ReshardFinding:
    """Fields shared by the error and the warning, so a report can read either the same way."""

    code: str
    call: str
    source: tuple[int, ...]
    target: tuple[int, ...]

    def _set(self, code: str, call: str, source: tuple[int, ...], target: tuple[int, ...]) -> None:
        self.code = code
        self.call = call
        self.source = tuple(source)
        self.target = tuple(target)


def _located(message: str, location: tuple[str, int] | None) -> str:
    return f"{message} [at {location[0]}:{location[1]}]" if location else message


class ReshardError(ValueError, _ReshardFinding):
    """A call that multi-controller JAX would reject, caught on a single host.

    ``code`` is the rule (``RSH201``, ``RSH301`` ...), ``source`` and ``target`` the device
    ids of the array and of the destination, in mesh order (empty where they do not apply).
    A ``ValueError`` because that is what JAX itself raises for most of these calls, so
    code that already handles JAX's error handles this one. ``filename`` and ``lineno``
    name the user's line (the innermost frame outside JAX, numpy, the standard library and
    strict mode), as the linter would, and the message ends with it.
    """

    filename: str | None
    lineno: int | None

    def __init__(self, message: str, *, code: str, call: str,
                 source: tuple[int, ...] = (), target: tuple[int, ...] = (),
                 location: tuple[str, int] | None = None) -> None:
        if location is None:
            from ._where import user_location

            location = user_location()
        super().__init__(_located(message, location))
        self.filename, self.lineno = location if location else (None, None)
        self._set(code, call, source, target)


class ReshardWarning(UserWarning, _ReshardFinding):
    """A call that works but costs more than it looks (RSH202: same devices, other order)."""

    def __init__(self, message: str, *, code: str, call: str,
                 source: tuple[int, ...] = (), target: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self._set(code, call, source, target)


class StrictConfigError(ValueError):
    """Strict mode was configured with settings that cannot describe this machine."""
