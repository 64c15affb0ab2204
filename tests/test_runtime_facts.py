"""What a file's own code says of where it runs (stages/runtime_facts.py), as a user sees it:
a move between device sets (RSH201) is reported in multi-controller code and not in code
that runs in one process, on Pathways, or through colocated Python. Decided from the
program's tree: words in comments, docstrings or another process's environment say nothing.
"""

from __future__ import annotations

import pytest

from reshard_lint.engine.engine import Engine

CROSS = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, NamedSharding(half, P('x')))
"""

ONE_PROCESS = {
    "config.update": "import jax\njax.config.update('jax_num_cpu_devices', 8)\n",
    "from jax import config": "from jax import config\nconfig.update('jax_num_cpu_devices', 8)\n",
    "jax._src.config": "from jax._src import config\nconfig.update('jax_num_cpu_devices', 8)\n",
    "jtu.request_cpu_devices": "from jax._src import test_util as jtu\njtu.request_cpu_devices(8)\n",
    "environ[XLA_FLAGS]": "import os\nos.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'\n",
    "environ[XLA_FLAGS] +=": "import os\nos.environ['XLA_FLAGS'] += ' --xla_force_host_platform_device_count=8'\n",
    "environ from os": "from os import environ\nenviron['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'\n",
    "a name bound to the flag": "import os\nFLAGS = '--xla_force_host_platform_device_count=8'\n"
                                "os.environ['XLA_FLAGS'] = FLAGS\n",
    "an f-string": "import os\nn = 8\nos.environ['XLA_FLAGS'] = f'--xla_force_host_platform_device_count={n}'\n",
    "setdefault": "import os\nos.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=8')\n",
    "update(dict)": "import os\nos.environ.update({'XLA_FLAGS': '--xla_force_host_platform_device_count=8'})\n",
    "update(keyword)": "import os\nos.environ.update(XLA_FLAGS='--xla_force_host_platform_device_count=8')\n",
    "putenv": "import os\nos.putenv('XLA_FLAGS', '--xla_force_host_platform_device_count=8')\n",
    "JAX_NUM_CPU_DEVICES": "import os\nos.environ['JAX_NUM_CPU_DEVICES'] = '8'\n",
    "in a function": "import jax\n\n\ndef setUpModule():\n    jax.config.update('jax_num_cpu_devices', 8)\n\n\n",
    "monkeypatch.setenv": "def test_it(monkeypatch):\n"
                          "    monkeypatch.setenv('XLA_FLAGS', '--xla_force_host_platform_device_count=8')\n\n\n",
    "Pathways' proxy backend": "import jax\njax.config.update('jax_platforms', 'proxy')\n",
    "JAX_PLATFORMS=proxy": "import os\nos.environ['JAX_PLATFORMS'] = 'proxy'\n",
    "JAX_PLATFORMS=proxy,cpu": "import os\nos.environ.setdefault('JAX_PLATFORMS', 'proxy,cpu')\n",
}

SEVERAL_PROCESSES = {
    "nothing said": "",
    "a comment": "# os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'\n",
    "a docstring": '"""Run with XLA_FLAGS=--xla_force_host_platform_device_count=8 and jax_num_cpu_devices."""\n',
    "a child's environment": "import os\nenv = dict(os.environ)\n"
                             "env['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'\n",
    "another flag": "import os\nos.environ['XLA_FLAGS'] = '--xla_dump_to=/tmp/dump'\n",
    "another option": "import jax\njax.config.update('jax_enable_x64', True)\n",
    # jax 0.10.2 raises AttributeError here ("property of 'Config' object has no setter"):
    # the program never gets to one process (tests/multicontroller/test_runtimes.py).
    "an attribute assignment": "import jax\njax.config.jax_num_cpu_devices = 8\n",
    "pathwaysutils in words": "# pathwaysutils would make this single-controller\n",
    # pathwaysutils.initialize() acts only when the proxy backend is selected
    # (pathwaysutils/_initialize.py): maxtext's trainer calls it on every run, Pathways or
    # multi-controller; tpu-inference imports it when JAX_PLATFORMS says proxy.
    "pathwaysutils initialised": "import pathwaysutils\npathwaysutils.initialize()\n",
    "from pathwaysutils": "from pathwaysutils import initialize\ninitialize()\n",
    "pathwaysutils under a condition": "import os\nif 'proxy' in os.environ.get('JAX_PLATFORMS', ''):\n"
                                       "    import pathwaysutils\n    pathwaysutils.initialize()\n",
    "another platform": "import os\nos.environ['JAX_PLATFORMS'] = 'cpu'\n",
    "distributed.initialize wins": "import jax\njax.config.update('jax_num_cpu_devices', 4)\n"
                                   "jax.distributed.initialize()\n",
    "from jax.distributed": "import os\nfrom jax.distributed import initialize\n"
                            "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=4'\ninitialize()\n",
    "jax's multi-process runner": "from jax._src import test_util as jtu\n"
                                  "from jax._src import test_multiprocess as jt_multiprocess\n"
                                  "jtu.request_cpu_devices(8)\n\n\n"
                                  "class T(jt_multiprocess.MultiProcessTest):\n    pass\n\n\n",
}


def _codes(text: str, settings: dict[str, object] | None = None) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in Engine(settings).lint_source(text, "m.py").diagnostics]


@pytest.mark.parametrize("prefix", ONE_PROCESS.values(), ids=list(ONE_PROCESS))
def test_code_that_runs_in_one_process_or_on_pathways(prefix: str) -> None:
    assert _codes(prefix + CROSS) == []
    # A setting says otherwise: the setting wins.
    lines = prefix.count("\n")
    assert _codes(prefix + CROSS, {"runtime": "multi-controller"}) == [(lines + 8, "RSH201")]


@pytest.mark.parametrize("prefix", SEVERAL_PROCESSES.values(), ids=list(SEVERAL_PROCESSES))
def test_code_that_does_not_say_it_runs_in_one_process(prefix: str) -> None:
    assert _codes(prefix + CROSS) == [(prefix.count("\n") + 8, "RSH201")]


COLOCATED = CROSS + """

def helper():
    return jax.device_put(x, NamedSharding(half, P('x')))


@colocated_python.colocated_python
def on_host():
    return helper()


def passed():
    return jax.device_put(x, NamedSharding(half, P('x')))


wrapped = colocated_python(passed)


def controller():
    return jax.device_put(x, NamedSharding(half, P('x')))


print(controller(), helper.__name__)
"""


@pytest.mark.parametrize("spelling", [
    "from jax.experimental import colocated_python\n",
    "import jax.experimental.colocated_python as colocated_python\n",
    "from jax.experimental.colocated_python import api as colocated_python\n",
])
def test_colocated_python_bodies_are_single_controller(spelling: str) -> None:
    text = spelling + COLOCATED.replace("wrapped = colocated_python(passed)",
                                        "wrapped = colocated_python.colocated_python(passed)")
    shift = spelling.count("\n")
    # The call at module level and controller() run on the controller; helper() too, since
    # its name is read outside colocated code (helper.__name__); on_host() and passed() run
    # on the colocated host.
    assert _codes(text) == [(shift + 8, "RSH201"), (shift + 12, "RSH201"), (shift + 28, "RSH201")]
    # helper() read only by on_host(): it runs only there.
    only_there = text.replace("print(controller(), helper.__name__)", "print(controller())")
    assert _codes(only_there) == [(shift + 8, "RSH201"), (shift + 28, "RSH201")]
    # Without colocated Python, every body is the controller's code.
    plain = text.replace("@colocated_python.colocated_python\n", "# (no decorator)\n").replace(
        "wrapped = colocated_python.colocated_python(passed)", "wrapped = passed()")
    assert _codes(plain) == [(shift + 8, "RSH201"), (shift + 12, "RSH201"), (shift + 21, "RSH201"),
                             (shift + 28, "RSH201")]


SINGLE_DEVICE_PUT = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from jax.experimental import multihost_utils

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
y = jax.device_put(x, jax.devices()[0])
"""


@pytest.mark.parametrize("use, fires", [
    ("", False),  # the import alone: no sign of several processes
    ("# multihost_utils.process_allgather(x) and jax.process_index() in a comment\n", False),
    ("print(multihost_utils.process_allgather(x, tiled=True).shape)\n", True),
    ("print(jax.process_index())\n", True),
    ("if jax.process_count() > 1:\n    print('several')\n", True),
    ("jax.distributed.initialize()\n", True),
    ("gather = multihost_utils.process_allgather\n", True),
])
def test_multi_process_signs_are_uses_not_imports(use: str, fires: bool) -> None:
    text = SINGLE_DEVICE_PUT + use
    assert _codes(text) == ([(8, "RSH301")] if fires else [])
    assert _codes(text, {"runtime": "multi-controller"}) == [(8, "RSH301")]
