"""The platform order model against JAX's own mesh builders on mock devices.

Every claim the linter's model makes about device order on TPU, GPU and CPU
(reshard_lint/analysis/devices.py ``builder_order``, ``Model.enumeration``) is checked
here against the installed JAX's ``mesh_utils.create_device_mesh`` and ``jax.make_mesh``
run on mock topologies, so a JAX upgrade that changes a builder's order fails a test.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from reshard_lint.analysis import devices as dv

from .topologies import CPUS, GPUS, TPUS, create_device_mesh, ids, key, make_mesh, shapes

pytest.importorskip("jax")

COUNTS = (8, 16, 64)


def _natural(m: dv.Model) -> dv.DevArr:
    return dv.natural(m)


def _builder(shape: tuple[int, ...]) -> dv.DevFn:
    """The model of jax.make_mesh(shape, ...): the first prod(shape) devices, in the platform's order."""
    def build(m: dv.Model) -> dv.DevArr:
        if math.prod(shape) > m.n:
            raise dv.ModelError("the mesh shape does not fit the devices")
        return dv.builder_order(dv.natural(m).flat[:math.prod(shape)], shape, m)
    return build


def _grid16(m: dv.Model) -> dv.DevArr:
    """np.array(jax.devices()).reshape(4, 4): a program written for sixteen devices."""
    return dv.natural(m).reshape((4, 4))


def _by_id(m: dv.Model) -> dv.DevArr:
    return dv.natural(m).sorted_by_id()


def _model(platform: str, a: dv.DevFn, b: dv.DevFn, n: int) -> str:
    return dv.Evaluator((platform,)).compare(a, b, (n,))


def _multi_host(n: int) -> list:
    return [t for t in TPUS if t.n == n and t.hosts > 1]


@pytest.mark.parametrize("topo", TPUS, ids=lambda t: t.name)
def test_tpu_order_depends_on_the_device_set_and_shape_only(topo) -> None:
    """The model's TPU order is a function of the sorted ids and the shape without size-1 axes."""
    rnd = random.Random(0)
    shuffled = list(topo.devices)
    rnd.shuffle(shuffled)
    for shape in shapes(topo.n):
        got = create_device_mesh(shape, topo.devices)
        if got is None:
            continue
        assert create_device_mesh(shape, topo.devices[::-1]) == got, shape
        assert create_device_mesh(shape, shuffled) == got, shape
        assert create_device_mesh(key(shape), topo.devices) == got, shape


@pytest.mark.parametrize("topo", TPUS, ids=lambda t: t.name)
def test_make_mesh_is_create_device_mesh_of_the_same_shape(topo) -> None:
    for shape in shapes(topo.n):
        built, made = create_device_mesh(shape, topo.devices), make_mesh(shape, topo.devices)
        if built is not None and made is not None:
            assert made == built, shape


@pytest.mark.parametrize("n", COUNTS)
def test_two_shapes_differ_where_the_model_says_so(n: int) -> None:
    """Every pair of 1-D/2-D shapes the model calls reordered differs on a multi-host TPU."""
    keys = sorted({key(s) for s in shapes(n, 2)} - {()})
    for a, b in itertools.combinations(keys, 2):
        assert _model("tpu", _builder(a), _builder(b), n) == "reordered", (a, b)
        witnesses = [t.name for t in _multi_host(n)
                     if None not in (x := make_mesh(a, t.devices), y := make_mesh(b, t.devices)) and x != y]
        assert witnesses, f"no mock TPU topology orders {a} and {b} differently"


@pytest.mark.parametrize("n", COUNTS)
def test_the_same_shape_is_the_same_order(n: int) -> None:
    for shape in shapes(n):
        if len(key(shape)) <= 2:
            assert _model("tpu", _builder(shape), _builder(key(shape) or (n,)), n) == "same", shape


@pytest.mark.parametrize("n", COUNTS)
def test_three_axis_shapes_claim_nothing(n: int) -> None:
    """v5e lays (2, 2, 4) like (4, 4) on a 4x4 slice: 3-D shapes are left unknown."""
    for shape in shapes(n):
        if len(key(shape)) == 3:
            assert _model("tpu", _builder(shape), _natural, n) == "unknown", shape
            assert _model("tpu", _builder(shape), _builder((n,)), n) == "unknown", shape
    v5e = next(t for t in TPUS if t.name == "TPU v5e 4x4x1, 4 hosts")
    assert make_mesh((2, 2, 4), v5e.devices) == make_mesh((4, 4), v5e.devices)


@pytest.mark.parametrize("n", COUNTS)
def test_builders_differ_from_enumeration_on_multi_host_tpu(n: int) -> None:
    for k in sorted({key(s) for s in shapes(n, 2)} - {()}):
        assert _model("tpu", _builder(k), _natural, n) == "reordered", k
        assert any(make_mesh(k, t.devices) not in (None, t.enumeration) for t in _multi_host(n)), k


def test_id_order_is_not_enumeration_on_multi_host_tpu() -> None:
    """keras#19968: jax.devices() on two TPU hosts is [0, 1, 4, 5, 2, 3, 6, 7]."""
    two_hosts = next(t for t in TPUS if t.name == "TPU v4 4x2x1, 2 hosts")
    assert two_hosts.enumeration == (0, 1, 4, 5, 2, 3, 6, 7)
    m = dv.Model(8, 4, 0, "tpu", True)
    assert dv.natural(m).flat == two_hosts.enumeration
    for n in COUNTS:
        assert _model("tpu", _by_id, _natural, n) == "reordered"
        assert any(t.enumeration != tuple(sorted(t.enumeration)) for t in _multi_host(n))


def test_make_mesh_takes_the_first_devices_on_every_platform() -> None:
    for topo in (*TPUS, *GPUS, *CPUS):
        if topo.n < 16 or topo.n % 8:
            continue
        got = make_mesh((8,), topo.devices)
        assert got is not None and set(got) == set(topo.enumeration[:8]), topo.name
    for platform in dv.PLATFORMS:
        assert dv.Evaluator((platform,)).compare(_builder((8,)), _grid16, (8, 16)) == "different"


@pytest.mark.parametrize("topo", GPUS, ids=lambda t: t.name)
def test_gpu_builders_sort_by_id(topo) -> None:
    for shape in shapes(topo.n, 2):
        by_id = tuple(sorted(topo.enumeration))
        assert create_device_mesh(shape, topo.devices) == by_id
        assert create_device_mesh(shape, topo.devices[::-1]) == by_id
    # Whether that is enumeration order depends on how ids were assigned: no claim.
    scattered = "by topology" in topo.name
    assert (create_device_mesh((topo.n,), topo.devices) != topo.enumeration) == scattered


def test_gpu_model_claims_only_what_holds_for_both_numberings() -> None:
    reversed_builder = lambda m: dv.builder_order(dv.natural(m).flat[::-1], (m.n,), m)  # noqa: E731
    for n in COUNTS:
        assert _model("gpu", _builder((n,)), _natural, n) == "unknown"
        assert _model("gpu", reversed_builder, _builder((n,)), n) == "same"
        assert _model("gpu", _by_id, _builder((n,)), n) == "same"


@pytest.mark.parametrize("topo", CPUS, ids=lambda t: t.name)
def test_cpu_builders_keep_the_given_order(topo) -> None:
    for shape in shapes(topo.n, 2):
        assert create_device_mesh(shape, topo.devices) == topo.enumeration
        assert create_device_mesh(shape, topo.devices[::-1]) == topo.enumeration[::-1]
    reversed_builder = lambda m: dv.builder_order(dv.natural(m).flat[::-1], (m.n,), m)  # noqa: E731
    assert _model("cpu", _builder((topo.n,)), _natural, topo.n) == "same"
    assert _model("cpu", reversed_builder, _natural, topo.n) == "reordered"
    assert _model("cpu", _by_id, _natural, topo.n) == "same"


@pytest.mark.parametrize("topo", (*TPUS, *GPUS, *CPUS), ids=lambda t: t.name)
def test_jax_test_util_create_mesh_is_make_mesh(topo, monkeypatch) -> None:
    """jax's test helper ``jtu.create_mesh(shape, names)``, which the analysis reads as
    ``jax.make_mesh(shape, names)`` (models/meshes.py), gives the same devices in the same
    order on the job's devices; with fewer devices than the shape it skips the test."""
    from jax._src import test_util as jtu
    from jax._src import xla_bridge

    monkeypatch.setattr(xla_bridge, "devices", lambda *args, **kwargs: list(topo.devices))
    checked = 0
    for shape in shapes(topo.n, 2):
        expected = make_mesh(shape, topo.devices)
        if expected is None:
            continue
        names = tuple(f"a{i}" for i in range(len(shape)))
        assert ids(jtu.create_mesh(shape, names).devices) == expected, shape
        checked += 1
    assert checked
    with pytest.raises(Exception, match="requires"):  # unittest.SkipTest
        jtu.create_mesh((2 * topo.n,), ("x",))


def _part_builder(lo: int, hi: int, shape: tuple[int, ...] | None = None, backwards: bool = False) -> dv.DevFn:
    """create_device_mesh(shape, devices=jax.devices()[lo:hi]) (reversed first when asked)."""
    def build(m: dv.Model) -> dv.DevArr:
        part = dv.natural(m).slice0(lo, hi, None)
        part = part.flip() if backwards else part
        return dv.builder_order(part.flat, shape or (len(part.flat),), m)
    return build


def _part(lo: int, hi: int) -> dv.DevFn:
    return lambda m: dv.natural(m).slice0(lo, hi, None)


@pytest.mark.parametrize("topo", TPUS, ids=lambda t: t.name)
def test_tpu_builders_of_part_of_the_job_keep_its_set_in_an_order_of_their_own(topo) -> None:
    """On part of a TPU job the builders return the devices given, never others, in an
    order that depends on the set and the shape only; that order is sometimes the order
    given and sometimes not, and two shapes sometimes agree: the model knows the set."""
    rnd = random.Random(1)
    parts = [topo.devices[lo:hi] for lo in range(topo.n) for hi in range(lo + 1, topo.n)]
    parts += [tuple(rnd.sample(topo.devices, rnd.randint(1, topo.n - 1))) for _ in range(20)]
    for part in parts:
        for build in (create_device_mesh, make_mesh):
            got = build((len(part),), part)
            if got is None:
                continue
            assert sorted(got) == sorted(d.id for d in part), (build.__name__, part)
            assert build((len(part),), part[::-1]) == got


def test_the_order_of_part_of_a_tpu_job_is_not_the_models_to_claim() -> None:
    given = [t for t in TPUS if t.n >= 8 and t.hosts > 1]
    assert all(create_device_mesh((2,), t.devices[:2]) == t.enumeration[:2] for t in given)
    assert any(create_device_mesh((4,), t.devices[:4]) not in (None, t.enumeration[:4]) for t in given)
    v5e = next(t for t in TPUS if t.name == "TPU v5e 4x4x1, 4 hosts")
    assert make_mesh((8,), v5e.devices) == make_mesh((2, 4), v5e.devices)
    tpu = dv.Evaluator(("tpu",))
    for n in COUNTS:
        # The same part: unknown against the order given, the same for the same shape.
        assert tpu.compare(_part_builder(0, 4), _part(0, 4), (n,)) == "unknown"
        assert tpu.compare(_part_builder(0, 4), _part_builder(0, 4, backwards=True), (n,)) == "same"
        assert tpu.compare(_part_builder(0, 4, (4,)), _part_builder(0, 4, (2, 2)), (n,)) == "unknown"
        # Other devices whatever the order: different.
        assert tpu.compare(_part_builder(0, 4), _part_builder(2, 6), (n,)) == "different"
        assert tpu.compare(_part_builder(0, 2), _part(0, n), (n,)) == "different"
    # A part taken from one: which devices is not known.
    first_two = lambda m: _part_builder(0, 4)(m).slice0(0, 2, None)  # noqa: E731
    assert tpu.compare(first_two, _part(0, 2), (8,)) == "unknown"
    assert tpu.compare(lambda m: _part_builder(0, 4)(m).flip(), _part_builder(0, 4), (8,)) == "unknown"
