"""RSH103: NamedSharding given a device list or array instead of a Mesh."""

from __future__ import annotations

import ast
from typing import Iterable

from ..analysis import tree
from ..analysis.context import FileContext
from ..core import vocabulary as api
from ..core.diagnostic import Diagnostic, Edit, Fix, Import
from ..analysis.events import ShardingBuilt
from ..analysis.values import DevVal, SeqVal
from .helpers.imports import can_import, import_note, spelled
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""


class ShardingWithoutMesh(Rule):
    code = "RSH103"
    name = "sharding-without-mesh"
    summary = "NamedSharding built on a device list or array instead of a Mesh"
    priority = 10
    fix_safety = "safe"
    events = (ShardingBuilt,)
    what = 'Flags `NamedSharding(first, spec)` when `first` is a device list, a device array or a single device instead of a `Mesh`.'
    why = "`NamedSharding` needs a `Mesh`; given a list it fails at once with `AttributeError: 'list' object has no attribute ...` (on one host and on many). The code usually meant to build a mesh over those devices."
    fix_text = "Safe when the devices are a flat list: for a one-axis `PartitionSpec('x')` the fix wraps them in the 1-D mesh the spec names, `Mesh(np.array(devs), ('x',))`, spelled with the file's own imports (`Mesh`, `jax.sharding.Mesh`, `numpy`'s name); where the file imports no `Mesh` (or `jax`) or no numpy, the fix adds `from jax.sharding import Mesh` or `import numpy as np` with libcst's import codemod (merged into an existing `from jax.sharding import ...`), unless the name is already used for something else in the file. The devices and their order stay as written, and the sharding the code asked for is the only one that spec can mean. Where the analysis cannot tell that the devices are a flat list, the same fix is unsafe (a multi-axis layout would be a guess) and applied only with `--unsafe-fixes`."
    references = ("RUNTIME-FACTS.md: `NamedSharding(jax.devices()[::-1], P('x'))`",)

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: ShardingBuilt) -> Iterable[Diagnostic]:  # type: ignore[override]
        ctx, first = event.ctx, event.first
        if isinstance(first, DevVal):
            what = "a device" if first.single else f"a device list ({first.desc})"
        elif isinstance(first, SeqVal) and first.items and all(
                isinstance(i, DevVal) and i.single for i in first.items):
            what = "a list of devices"
        else:
            return
        line, col, end_line, end_col = ctx.span(event.node)
        # A sharding another module's function builds from what this call hands it
        # (interpreter.handed_in) is reported at the call, and fixed nowhere here.
        where = "" if event.through is None else \
            f"{ctx.code(event.node, 40)} builds a NamedSharding at {ctx.at(event.through)}: "
        msg = (
            f"{where}NamedSharding gets {what} where it needs a Mesh: JAX raises AttributeError "
            "(e.g. \"'list' object has no attribute 'size'\") when the sharding is built; wrap the "
            "devices in a mesh: NamedSharding(Mesh(np.array(devs), ('x',)), spec), or use "
            "jax.make_mesh"
        )
        fix = None if (isinstance(first, DevVal) and first.single) or event.through is not None \
            else _wrap(ctx, event)
        yield Diagnostic(self.code, line, col, msg, end_line, end_col, fix=fix)

    examples = (
        Invalid(_HEAD + """
sharding = NamedSharding(jax.devices()[::-1], P('x'))  # RSH103:12
x = jax.device_put(np.arange(8.0), sharding)
""", fixed=_HEAD + """
sharding = NamedSharding(Mesh(np.array(jax.devices()[::-1]), ('x',)), P('x'))  # RSH103:12
x = jax.device_put(np.arange(8.0), sharding)
"""),
        Invalid(_HEAD + """
devs = jax.devices()
sharding = NamedSharding(devs, P('x'))  # RSH103:12
""", fixed=_HEAD + """
devs = jax.devices()
sharding = NamedSharding(Mesh(np.array(devs), ('x',)), P('x'))  # RSH103:12
"""),
        Invalid(_HEAD + """
grid = np.array(jax.devices()).reshape(2, 4)
sharding = NamedSharding(grid, P('a', 'b'))  # RSH103:12
"""),
        Invalid(_HEAD + """
from jax.sharding import NamedSharding as NS
s = NS(mesh=jax.local_devices(), spec=P())  # RSH103:5
"""),
        Valid(_HEAD + """
mesh = Mesh(np.array(jax.devices()), ('x',))
sharding = NamedSharding(mesh, P('x'))
print(sharding)
"""),
        Valid(_HEAD + """
sharding = NamedSharding(jax.make_mesh((8,), ('x',)), P('x'))
print(sharding)
"""),
        Valid(_HEAD + """
sharding = NamedSharding(mesh=Mesh(jax.devices(), ('x',)), spec=P())
print(sharding)
"""),
        Valid(_HEAD + """
def shard(mesh, spec):
    return NamedSharding(mesh, spec)

print(shard(jax.make_mesh((8,), ('x',)), P('x')))
"""),
        Valid(_HEAD + """
mesh = jax.make_mesh((8,), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
same = NamedSharding(x.sharding.mesh, P())
print(same)
"""),
        Valid(_HEAD + """
from jax.sharding import SingleDeviceSharding
s = SingleDeviceSharding(jax.devices()[0])
print(s)
"""),
        Valid(_HEAD + """
import jax.sharding as shd
mesh = shd.Mesh(np.array(jax.devices()).reshape(2, 4), ('a', 'b'))
print(shd.NamedSharding(mesh, shd.PartitionSpec('a')))
"""),
        Valid(_HEAD + '''
def get_mesh():
    """Returns a Mesh, never a device list (NamedSharding(jax.devices(), spec) fails)."""
    return Mesh(np.array(jax.devices()), ('x',))

print(NamedSharding(get_mesh(), P('x')))
'''),
        Valid(_HEAD + """
class Trainer:
    def __init__(self):
        self.mesh = Mesh(np.array(jax.devices()), ('data',))

    def sharding(self):
        return NamedSharding(self.mesh, P('data'))

print(Trainer().sharding())
"""),
        Valid(_HEAD + """
devices = jax.devices()
mesh = Mesh(np.asarray(devices), ('x',))
sharding = NamedSharding(mesh, P('x'))
print(len(devices), sharding)
"""),
        Valid(_HEAD + """
with jax.make_mesh((8,), ('x',)) as mesh:
    print(NamedSharding(mesh, P('x')))
"""),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

sharding = NamedSharding(Mesh(np.array(jax.devices()), ('x',)), P('x'))
x = jax.device_put(np.arange(8.0), sharding)
print(x.sharding)
""", note="the page's Use instead", instead=True),
    )

    grounding = Grounding(
        multi=Outcome("error", r"AttributeError", where="all"),
        single=Outcome("error", r"AttributeError"),
    )


def _wrap(ctx: FileContext, event: ShardingBuilt) -> Fix | None:
    """``NamedSharding(devs, P('x'))`` -> ``NamedSharding(Mesh(np.array(devs), ('x',)), P('x'))``."""
    spec = event.spec_node
    args = tree.call_args(spec) if isinstance(spec, ast.Call) else []
    value = tree.arg_value(args[0]) if len(args) == 1 else None
    # One literal, str or bytes; an implicit concatenation ('x' 'y') gets no fix.
    if not (isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes))
            and not ctx.module.concatenation(value) and tree.arg_keyword(args[0]) is None):
        return None  # a 1-D mesh is only certain for a one-axis spec
    axis = value.value
    imports: list[Import] = []
    mesh = spelled(ctx, api.MESH)
    if mesh is None:  # the file imports neither: the fix adds `from jax.sharding import Mesh`
        mesh = api.MESH_WORD
        imports.append(Import(api.SHARDING_MODULE, api.MESH_WORD))
    np_name = ctx.spell("module:" + api.NUMPY_MODULE)
    if np_name is None:
        np_name = api.NUMPY_ALIAS
        imports.append(Import(api.NUMPY_MODULE, alias=api.NUMPY_ALIAS))
    if not can_import(ctx, imports):
        return None
    first = ctx.module.code_for_node(event.first_node)
    text = f"{mesh}({np_name}.array({first}), ({axis!r},))"
    line, col, end_line, end_col = ctx.span(event.first_node)
    return Fix(f"Wrap the devices in a 1-D mesh: {text}{import_note(imports)}",
               (Edit(line, col, end_line, end_col, text),), safe=_flat(ctx, event.first),
               imports=tuple(imports))


def _flat(ctx: FileContext, first: object) -> bool:
    """A flat device list on every topology the model runs: the 1-D mesh keeps it as written."""
    if isinstance(first, SeqVal):
        return True
    if not isinstance(first, DevVal):
        return False
    return ctx.devices.observe(first.fn, first.sizes, lambda a: a.ndim) == {1}
