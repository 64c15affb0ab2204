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


class ReshardError(ValueError, _ReshardFinding):
    """A call that multi-controller JAX would reject, caught on a single host.

    ``code`` is the rule (``RSH201``, ``RSH301`` ...), ``source`` and ``target`` the device
    ids of the array and of the destination, in mesh order (empty where they do not apply).
    A ``ValueError`` because that is what JAX itself raises for most of these calls, so
    code that already handles JAX's error handles this one.
    """

    def __init__(self, message: str, *, code: str, call: str,
                 source: tuple[int, ...] = (), target: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self._set(code, call, source, target)


class ReshardWarning(UserWarning, _ReshardFinding):
    """A call that works but costs more than it looks (RSH202: same devices, other order)."""

    def __init__(self, message: str, *, code: str, call: str,
                 source: tuple[int, ...] = (), target: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self._set(code, call, source, target)


class StrictConfigError(ValueError):
    """Strict mode was configured with settings that cannot describe this machine."""
