"""How much reshard-lint's strict mode adds to a jax.device_put and to a jitted call.

Run: python bench/strict_overhead.py [--devices 8] [--samples 21] [--only device_put|jit|pod]
                                    [--clock cpu|wall]

Each case times batches of warm device_put calls (each blocked until ready) with strict
mode off and on, alternating off/on batches in the same process so drift hits both
equally, and prints medians and the ratio strict/off: the median, over adjacent off/on
batch pairs, of the pair's ratio, so load from other processes that changes more slowly
than a batch cancels out of it. Cases:
  reshard   committed array, same mesh, new PartitionSpec (a real copy between devices;
            the clean call strict mode sees most in a test suite)
  no-op     device_put(x, x.sharding) (JAX's cheapest path: the worst case for the ratio)
  host      numpy data to a sharding (host-to-device; strict mode only looks at its type)
  jit       a warm call of jax.jit(f, in_shardings=s) on an array committed to s. Strict
            mode checks jitted calls where JAX's C++ dispatch misses its cache, so a warm
            call runs no Python of strict mode's ("check" 0); on a JAX without that path
            each call of a function jitted under strict mode is checked by a wrapper
  jit-tree  the same with a pytree argument ({'w': x, 'b': x})
  eager     an eager op (x + 1) on the committed array: strict mode adds no Python to it
            (JAX's own error for arrays on two meshes is turned into RSH203 on its error
            path only), but the simulated pod's Device attributes are read through it
  fetch     np.asarray of a fresh jitted result replicated over the mesh (readable on
            every process): every read of a value passes strict mode's fetch check (RSH305)
  procs     jax.process_index() + jax.local_devices(): the simulated pod's answers
  numpy     np.asarray of numpy data (no copy: numpy's cheapest call). Strict mode replaces
            numpy's conversion functions only once something is put on one device of
            another simulated process, which this script never does: numpy's own run
Times are the process's CPU time (every thread's: JAX's CPU backend copies on its own
threads) by default: on a shared machine, time spent waiting for a core is not the call's,
and wall time then measures the neighbours (--clock wall measures it anyway).
Transfers on a shared CPU are noisy, so the table also shows the check alone ("check"):
the time strict mode's wrapper spends before calling JAX, measured in a tight loop, and
its share of the plain call ("check/off"), which is the overhead without the noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Callable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int, default=8, help="CPU devices (default 8)")
    parser.add_argument("--samples", type=int, default=21, help="batches per mode (median taken)")
    parser.add_argument("--only", choices=("device_put", "jit", "pod"),
                        help="time only the device_put cases, the jit cases or the simulated "
                             "pod's cases (eager, fetch, procs, numpy)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="time.process_time (every thread's CPU time, the default) or "
                             "time.perf_counter (wall)")
    args = parser.parse_args()
    global _clock
    _clock = time.process_time if args.clock == "cpu" else time.perf_counter

    import jax

    # Must happen before the backend starts; the benchmark owns this process.
    jax.config.update("jax_num_cpu_devices", args.devices)
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    from reshard_lint.runtime import strict

    devs = jax.devices()
    mesh = Mesh(np.array(devs), ("x",))
    rows_sharded = NamedSharding(mesh, P("x", None))
    cols_sharded = NamedSharding(mesh, P(None, "x"))
    n = len(devs)

    sizes = [("1 KB", 1 << 10), ("1 MB", 1 << 20), ("16 MB", 16 << 20)]
    print(f"jax {jax.__version__}, {n} CPU devices ({os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}), {args.samples} batches per mode, {args.clock} times are medians per call")
    header = f"{'case':<8} {'size':>6} {'calls/batch':>11} {'off (us)':>10} {'strict (us)':>12} " \
             f"{'ratio':>7} {'overhead':>9} {'check (us)':>10} {'check/off':>10}"
    print(header)
    print("-" * len(header))
    jit_rows: list[tuple[str, str, int, float, float, float, float]] = []
    for label, nbytes in sizes:
        cols = 8 * n
        rows = max(n, nbytes // 4 // cols)
        data = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
        x = jax.device_put(data, rows_sharded)
        x.block_until_ready()
        calls = max(20, min(2000, (256 << 20) // nbytes))
        cases: list[tuple[str, Callable[[], Any]]] = [
            ("reshard", lambda: jax.device_put(x, cols_sharded).block_until_ready()),
            ("no-op", lambda: jax.device_put(x, x.sharding).block_until_ready()),
            ("host", lambda: jax.device_put(data, rows_sharded).block_until_ready()),
        ]
        check_args = {"reshard": (x, cols_sharded), "no-op": (x, x.sharding), "host": (data, rows_sharded)}
        replicated = jax.device_put(data, NamedSharding(mesh, P()))
        plus_one = jax.jit(lambda a: a + 1)
        pod_cases: list[tuple[str, Callable[[], Any]]] = [
            ("eager", lambda: (x + 1).block_until_ready()),
            ("fetch", lambda: np.asarray(plus_one(replicated))),
        ]
        if label == sizes[0][0]:  # no jax array involved (np.asarray copies nothing): once is enough
            pod_cases.append(("procs", lambda: (jax.process_index(), jax.local_devices())))
            pod_cases.append(("numpy", lambda: np.asarray(data)))
        if args.only == "jit":
            cases = []
        elif args.only == "pod":
            cases = pod_cases
        elif args.only is None:
            cases = cases + pod_cases
        for name, call in cases:
            # The calls that copy nothing cost the same at every size: batches of 2000, so that
            # a batch is not just the few hundred microseconds right after strict mode's entry
            # (which patches JAX's types, leaving Python's attribute caches for them cold).
            per_batch = 20000 if name in ("procs", "numpy") else 2000 if name == "no-op" else calls
            off, on, ratio = measure(call, per_batch, args.samples, strict)
            check = check_cost(*check_args[name]) if name in check_args else \
                pod_check_cost(name, replicated, data, strict)
            print(f"{name:<8} {label:>6} {per_batch:>11} {_us(off):>10} {_us(on):>12} "
                  f"{ratio:>7.3f} {100 * (ratio - 1):>+8.1f}% {check * 1e6:>10.2f} "
                  f"{100 * check / off:>9.2f}%")
        if args.only in (None, "jit"):
            jit_rows.extend(jit_cases(label, x, rows_sharded, calls, args.samples, strict))
    for name, label, calls, off, on, ratio, check in jit_rows:
        print(f"{name:<8} {label:>6} {calls:>11} {off * 1e6:>10.1f} {on * 1e6:>12.1f} "
              f"{ratio:>7.3f} {100 * (ratio - 1):>+8.1f}% {check * 1e6:>10.2f} "
              f"{100 * check / off:>9.2f}%")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def jit_cases(label: str, x: Any, sharding: Any, calls: int, samples: int,
              strict: Callable[..., Any]) -> list[tuple[str, str, int, float, float, float, float]]:
    """Warm jitted calls with in_shardings: (case, size, calls, off, strict, check) in seconds."""
    import jax

    calls = min(calls, 500)
    # Made under strict mode (jax.jit is checked only while it is on), so the same object
    # is timed both ways: off, its wrapper passes the call straight through.
    with strict():
        f = jax.jit(lambda a: a * 2, in_shardings=sharding)
        g = jax.jit(lambda t: t["w"] + t["b"], in_shardings=sharding)
    tree = {"w": x, "b": x}
    rows = []
    for name, fn, arg in (("jit", f, x), ("jit-tree", g, tree)):
        off, on, ratio = measure(lambda: fn(arg).block_until_ready(), calls, samples, strict)
        rows.append((name, label, calls, off, on, ratio, jit_check_cost(fn, arg)))
    return rows


def jit_check_cost(fn: Any, arg: Any, repeats: int = 20000, samples: int = 7) -> float:
    """Median seconds for strict mode's check of one warm jitted call, without the call."""
    from reshard_lint.runtime import StrictConfig
    from reshard_lint.runtime._jit import check_jit_call

    signature = getattr(fn, "_rsh_signature", None)
    if signature is None:
        return 0.0  # JAX's own object: checked on cache misses only
    config = StrictConfig()
    args = (arg,)

    def cost() -> float:
        start = time.perf_counter()
        for _ in range(repeats):
            check_jit_call(config, signature, args)
        return (time.perf_counter() - start) / repeats

    return statistics.median(cost() for _ in range(samples))


def measure(call: Callable[[], Any], calls: int, samples: int,
            strict: Callable[..., Any]) -> tuple[float, float, float]:
    """Median seconds per call off and on (interleaved batches), and the median pair ratio."""
    for _ in range(3):  # warm: compile the reshard, fill strict mode's verdict cache
        call()
        with strict():
            call()
    off: list[float] = []
    on: list[float] = []
    for i in range(samples):
        # Alternate which mode goes first so neither always runs on a warmer cache.
        order = (False, True) if i % 2 == 0 else (True, False)
        for strict_on in order:
            if strict_on:
                with strict():
                    on.append(batch(call, calls))
            else:
                off.append(batch(call, calls))
    ratio = statistics.median(b / a for a, b in zip(off, on))
    return statistics.median(off), statistics.median(on), ratio


def check_cost(x: Any, target: Any, repeats: int = 20000, samples: int = 7) -> float:
    """Median seconds for the wrapper's check alone: what strict mode adds, free of transfer noise."""
    from reshard_lint.runtime import StrictConfig
    from reshard_lint.runtime._checks import check_device_put

    config = StrictConfig()

    def wrapper_cost() -> float:
        start = time.perf_counter()
        for _ in range(repeats):
            check_device_put(config, x, target, "device_put", 2)
        return (time.perf_counter() - start) / repeats

    return statistics.median(wrapper_cost() for _ in range(samples))


def pod_check_cost(name: str, arr: Any, data: Any, strict: Callable[..., Any], repeats: int = 20000,
                   samples: int = 7) -> float:
    """What strict mode adds to the simulated pod's cases, free of transfer noise. eager: 0,
    no Python of strict mode's runs (JAX's C++ dispatch; the RSH203 hook is on JAX's error
    path). fetch: the statements the _value wrapper runs for a value already judged readable
    (a dict lookup). procs: jax.process_index() + jax.local_devices() on minus off, in a
    tight loop (both are sub-microsecond Python calls). numpy: np.asarray(data) on minus off,
    in a tight loop."""
    import jax

    from reshard_lint.runtime import _fetch, _state

    if name == "eager":
        return 0.0

    def fetch_check() -> float:
        start = time.perf_counter()
        for _ in range(repeats):
            config = _state.current
            if config is not None and arr._npy_value is None:
                _fetch._readable.get((arr.sharding, arr.shape, config.split))
        return (time.perf_counter() - start) / repeats

    def procs() -> float:
        start = time.perf_counter()
        for _ in range(repeats):
            jax.process_index()
            jax.local_devices()
        return (time.perf_counter() - start) / repeats

    def host() -> float:
        asarray = np.asarray  # looked up once: strict mode replaces numpy's attribute
        start = time.perf_counter()
        for _ in range(repeats):
            asarray(data)
        return (time.perf_counter() - start) / repeats

    import numpy as np

    tight = host if name == "numpy" else procs
    with strict():
        np.asarray(arr)  # judge it once: later reads take the warm path
        if name == "fetch":
            return statistics.median(fetch_check() for _ in range(samples))
        on = min(tight() for _ in range(samples))
    return max(0.0, on - min(tight() for _ in range(samples)))


def _us(seconds: float) -> str:
    """Microseconds, with the digits a sub-microsecond call needs."""
    return f"{seconds * 1e6:.1f}" if seconds >= 1e-5 else f"{seconds * 1e6:.3f}"


_clock: Callable[[], float] = time.process_time


def batch(call: Callable[[], Any], calls: int) -> float:
    start = _clock()
    for _ in range(calls):
        call()
    return (_clock() - start) / calls


if __name__ == "__main__":
    main()
