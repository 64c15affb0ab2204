"""The public JAX projects whose own tests run under the oracle (issue 54 item 3), each at
a pinned version: its sdist (which ships its tests) is downloaded from PyPI at run time,
never committed, and its dependencies are installed beside it at pinned versions, without
their own dependencies (the installed jax, jaxlib, numpy and scipy stay the ones used).

Which test files run is decided by one rule for every project (``selected``): a test file
(``*_test.py`` or ``test_*.py``) whose text names one of ``WORDS`` (it builds a mesh or a
sharding, or puts, fetches or assembles arrays), minus ``left_out`` with the reason.

Three projects are held out (``held_out``): chosen before any run, never run while the
harness was written, run once at the end and reported apart (docs/oracle.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

WORDS = ("device_put", "Mesh(", "make_mesh", "NamedSharding", "PartitionSpec", "with_sharding_constraint",
         "jax.devices(", "local_devices", "reshard", "make_array_from", "SingleDeviceSharding")
_TEST_NAME = re.compile(r"(^test_.*|.*_test)\.py$")
_NOT_TESTS = ("test_utils.py", "test_util.py", "conftest.py")

# pinned dependencies (wheels), by what needs them
_TYPING = ("typing_extensions==4.16.0",)
_CHEX = ("chex==0.1.92", "toolz==1.2.0", *_TYPING)
_OPTAX = ("optax==0.2.8", *_CHEX)
_TREE = ("dm-tree==0.1.10", "wrapt==2.5.2")
_ORBAX = ("orbax-checkpoint==0.12.8", "etils==1.15.0", "importlib_resources==7.1.0", "zipp==4.1.2",
          "fsspec==2026.9.0", "aiofiles==25.1.0", "protobuf==7.36.2", "humanize==4.17.0",
          "simplejson==4.3.0", "psutil==7.2.2", "uvloop==0.23.0", "prometheus-client==0.26.0",
          "msgpack==1.2.4", "tensorstore==0.1.86", "nest-asyncio==1.6.0")
_FLAX_DEPS = (*_OPTAX, *_ORBAX, "rich==15.0.0", "markdown-it-py==4.3.0", "mdurl==0.1.2",
              "treescope==0.1.10", "ml-collections==1.1.0", "einops==0.8.2", "cloudpickle==3.1.3")
_DISTRAX = ("distrax==0.1.9", "tensorflow-probability==0.25.0", "decorator==5.3.2", "gast==0.7.0",
            "six==1.17.0",
            "cloudpickle==3.1.3", *_TREE, *_CHEX)


@dataclass(frozen=True)
class Project:
    name: str  # the PyPI name
    version: str
    deps: tuple[str, ...] = ()
    held_out: bool = False
    left_out: tuple[tuple[str, str], ...] = ()  # (test file, why it does not run)
    timeout: int = 900  # seconds per test file

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"

    def selected(self, src: Path) -> list[str]:
        """The test files that run, relative to the sdist's root, sorted."""
        out = []
        skip = {f for f, _ in self.left_out}
        for py in sorted(src.rglob("*.py")):
            rel = str(py.relative_to(src))
            if not _TEST_NAME.match(py.name) or py.name in _NOT_TESTS or rel in skip:
                continue
            text = py.read_text(encoding="utf-8", errors="replace")
            if any(w in text for w in WORDS):
                out.append(rel)
        return out


PROJECTS = (
    Project("flax", "0.12.8", _FLAX_DEPS, left_out=(
        ("examples/ogbg_molpcba/train_test.py", "imports jraph, which the package index reached here lacks"),
        ("examples/gemma/sampler_test.py", "needs sentencepiece and a tokenizer model file it does not ship"),
        ("examples/gemma/transformer_test.py", "imports the gemma example's tokenizer (sentencepiece)"),
        ("examples/gemma/modules_test.py", "the gemma example's modules: same imports as its siblings"),
    )),
    Project("optax", "0.2.8", _CHEX),
    Project("chex", "0.1.92", (*_TYPING, "toolz==1.2.0", "cloudpickle==3.1.3", *_TREE)),
    Project("penzai", "0.2.5", ("ordered-set==4.1.0", "treescope==0.1.10", *_CHEX)),
    Project("dm-haiku", "0.0.17", ("jmp==0.0.4", "tabulate==0.10.0", *_TREE, *_CHEX)),
    Project("blackjax", "1.7.1", _OPTAX),
    # held out: chosen before the first run, run once at the end
    Project("clu", "0.0.12", ("flax==0.12.8", *_FLAX_DEPS, "packaging==26.4"), held_out=True),
    Project("rlax", "0.1.9", ("dm-env==1.6", *_DISTRAX), held_out=True),
    Project("haliax", "1.3", ("equinox==0.13.8", "jaxtyping==0.3.11", "wadler-lindig==0.1.8", "jmp==0.0.4",
                              *_TYPING), held_out=True),
)

# Projects tried and not kept, with the reason (the figures of docs/oracle.md name them).
TRIED = (
    ("kfac-jax==0.0.8", "does not import with jax 0.10.2: distrax needs tensorflow-probability, whose "
                        "0.25.0 JAX substrate reads jax.interpreters.xla.pytype_aval_mappings"),
    ("orbax-checkpoint==0.12.8", "its sdist ships test helpers but no test file"),
    ("orbax-export==0.0.8", "its sharding tests import tensorflow"),
    ("keras==3.15.1", "its distribution tests import tensorflow"),
    ("equinox==0.13.8", "its sdist ships no tests"),
)


def by_name(name: str) -> Project:
    for p in PROJECTS:
        if p.name == name:
            return p
    raise KeyError(name)
