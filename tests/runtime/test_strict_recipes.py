"""How strict mode reads the device list handed to ``Mesh(...)`` (runtime/_recipes.py, pure
Python): positions of ``jax.devices()`` on every platform, each platform's id order, or
unknown. No jax: a module written to a file calls a stand-in ``Mesh`` that asks for the
recipe of its own call, with a stand-in ``jax.devices``."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import pytest

from reshard_lint.runtime import _recipes

MODULE = textwrap.dedent('''\
    import operator
    import numpy as np

    ORDER = [3, 1, 2, 0, 4, 5, 6, 7]


    def natural():
        return Mesh(np.array(jax.devices()), ("x",))


    def grid():
        return Mesh(np.array(jax.devices()).reshape(2, 4), ("a", "b"))


    def reversed_list():
        devs = jax.devices()
        return Mesh(np.array(devs[::-1]), ("x",))


    def rotated(cfg):
        devs = jax.devices()
        k = cfg.shift
        return Mesh(np.array(devs[k:] + devs[:k]), ("x",))


    def rolled():
        return Mesh(np.roll(np.array(jax.devices()), 2), ("x",))


    def by_order():
        devs = jax.devices()
        return Mesh(np.array([devs[i] for i in ORDER]), ("x",))


    def transposed():
        return Mesh(np.array(jax.devices()).reshape(2, 4).T, ("a", "b"))


    def half():
        devs = jax.devices()
        return Mesh(np.array(devs[: len(devs) // 2]), ("x",))


    def by_id():
        return Mesh(np.array(sorted(jax.devices(), key=lambda d: d.id)).reshape(2, 4), ("a", "b"))


    def by_id_attrgetter():
        devs = jax.devices()
        ordered = sorted(devs, key=operator.attrgetter("id"))
        return Mesh(np.array(ordered), ("x",))


    def by_process():
        return Mesh(np.array(sorted(jax.devices(), key=lambda d: d.process_index)), ("x",))


    def even_ids():
        return Mesh(np.array([d for d in jax.devices() if d.id % 2 == 0]), ("x",))


    def by_id_reversed():
        return Mesh(np.array(sorted(jax.devices(), key=lambda d: d.id, reverse=True)), ("x",))


    def by_id_then_rotated():
        ordered = sorted(jax.devices(), key=lambda d: d.id)
        return Mesh(np.array(ordered[2:] + ordered[:2]), ("x",))


    def parameter(devs):
        return Mesh(np.array(devs), ("x",))


    def helper():
        return Mesh(np.array(pick(jax.devices())), ("x",))


    def bound_twice(flag):
        devs = jax.devices()
        if flag:
            devs = devs[::-1]
        return Mesh(np.array(devs), ("x",))


    def indexed_by_ids():
        devs = jax.devices()
        ids = [d.id for d in devs]
        return Mesh(np.array([devs[i] for i in ids]), ("x",))


    def local():
        return Mesh(np.array(jax.local_devices()), ("x",))
''')

POSITIONAL = ["natural", "grid", "reversed_list", "rotated", "rolled", "by_order", "transposed", "half"]
ID_SORTED = ["by_id", "by_id_attrgetter"]
UNKNOWN = ["by_process", "even_ids", "by_id_reversed", "by_id_then_rotated", "parameter", "helper",
           "bound_twice", "indexed_by_ids", "local"]


class _Device:
    def __init__(self, i: int) -> None:
        self.id, self.process_index = i, i // 4


_DEVICES = [_Device(i) for i in range(8)]


def _devices() -> list[_Device]:
    return list(_DEVICES)


_devices.__name__ = "devices"


class _Jax:
    devices = staticmethod(_devices)

    @staticmethod
    def local_devices() -> list[_Device]:
        return _DEVICES[:4]


def _is_devices(func: Any, frame: FrameType) -> bool:
    return isinstance(func, __import__("ast").Attribute) and func.attr == "devices" \
        and getattr(func.value, "id", None) == "jax" and frame.f_globals.get("jax") is _Jax


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    path = Path(tmp_path_factory.mktemp("recipes")) / "user_meshes.py"
    path.write_text(MODULE)
    spec = importlib.util.spec_from_file_location("user_meshes", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    seen: dict[str, Any] = {}

    def mesh(devices: Any, names: Any) -> Any:
        caller = sys._getframe(1)
        seen[caller.f_code.co_name] = _recipes.mesh_recipe(caller, _is_devices)
        return seen[caller.f_code.co_name]

    mod.Mesh = mesh  # type: ignore[attr-defined]
    mod.jax = _Jax  # type: ignore[attr-defined]
    mod.pick = lambda devs: devs  # type: ignore[attr-defined]
    return mod


def _recipe(module: ModuleType, name: str) -> Any:
    fn = getattr(module, name)
    args: list[Any] = []
    if name == "rotated":
        args = [type("Cfg", (), {"shift": 3})()]
    elif name == "parameter":
        args = [list(range(8))]
    elif name == "bound_twice":
        args = [True]
    return fn(*args)


@pytest.mark.parametrize("name", POSITIONAL)
def test_positions_of_jax_devices(module: ModuleType, name: str) -> None:
    found = _recipe(module, name)
    assert found is not None and found[0] == _recipes.POSITIONAL, found


@pytest.mark.parametrize("name", ID_SORTED)
def test_sorted_by_id(module: ModuleType, name: str) -> None:
    found = _recipe(module, name)
    assert found is not None and found[0] == _recipes.ID_SORTED, found


@pytest.mark.parametrize("name", UNKNOWN)
def test_unknown(module: ModuleType, name: str) -> None:
    assert _recipe(module, name) is None


def test_the_spelling_is_kept(module: ModuleType) -> None:
    assert _recipe(module, "by_id") == (_recipes.ID_SORTED,
                                        "np.array(sorted(jax.devices(), key=lambda d: d.id)).reshape(2, 4)")
    assert _recipe(module, "reversed_list") == (_recipes.POSITIONAL, "np.array(devs[::-1])")
