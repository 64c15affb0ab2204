"""A dict or an instance handed to code the analysis does not run may be changed there: what
it held before is not what a later read gets (mutation.handed_on). Each program also runs
under JAX on 8 CPU devices here, which shows the change the analysis must not deny: every
read below is on rollout's devices in the run, where the analysis once said train's
(a wrong "same devices", and a false RSH201 on the instance's mesh)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from reshard_lint.frontends.coverage import file_coverage

_HEAD = textwrap.dedent("""\
    import operator

    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    train = Mesh(np.array(jax.devices()[:4]), ("x",))
    rollout = Mesh(np.array(jax.devices()[4:]), ("x",))


    class Trainer:
        def __init__(self, mesh):
            self.mesh = mesh


    a = jax.device_put(np.zeros(8), NamedSharding(train, P("x")))
    """)

CASES = {
    # a package's function fills the dict in place
    "dict-to-function": ('conf = {"mesh": train}\noperator.setitem(conf, "mesh", rollout)\n'
                         'b = jax.device_put(a, NamedSharding(conf["mesh"], P()))\n'),
    # a dict inside a tuple handed on
    "dict-in-tuple": ('conf = {"mesh": train}\noperator.setitem(*(conf, "mesh", rollout))\n'
                      'b = jax.device_put(a, NamedSharding(conf["mesh"], P()))\n'),
    # a callable the analysis does not know sets the instance's attribute
    "instance-to-unknown-callable": ('t = Trainer(train)\noperator.methodcaller("__setattr__", "mesh", rollout)(t)\n'
                                     'b = jax.device_put(a, NamedSharding(t.mesh, P()))\n'),
    # a method of an object the analysis does not know
    "instance-to-unknown-method": ('import types\nt = Trainer(train)\n'
                                   'types.SimpleNamespace(f=setattr).f(t, "mesh", rollout)\n'
                                   'b = jax.device_put(a, NamedSharding(t.mesh, P()))\n'),
    # vars() and __dict__ hand out the attributes
    "vars": 't = Trainer(train)\nvars(t)["mesh"] = rollout\nb = jax.device_put(a, NamedSharding(t.mesh, P()))\n',
    "__dict__": 't = Trainer(train)\nt.__dict__["mesh"] = rollout\nb = jax.device_put(a, NamedSharding(t.mesh, P()))\n',
    "object.__setattr__": ('t = Trainer(train)\nobject.__setattr__(t, "mesh", rollout)\n'
                           'b = jax.device_put(a, NamedSharding(t.mesh, P()))\n'),
}


@pytest.mark.parametrize("body", list(CASES.values()), ids=list(CASES))
def test_what_unrun_code_is_given_is_not_known_after(body: str) -> None:
    source = _HEAD + body
    sites = file_coverage(source, "t.py", {}).sites
    last = max(sites, key=lambda s: s.line)
    assert last.verdict == "unresolved", (last.verdict, last.detail)
    # The run: b is on rollout's devices (4-7), not train's.
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    probe = source + "print(sorted(d.id for d in b.sharding.device_set))\n"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-4:] == ["[4,", "5,", "6,", "7]"]
