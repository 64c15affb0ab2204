"""Every name of the JAX, NumPy and flax API reshard-lint knows, in one place.

Three kinds of names, each spelled here and nowhere else (tests/test_vocabulary.py):

- canonical qualified names, the keys the models register their handlers under
  (``analysis/models/``, ``@handles(vocabulary.MAKE_MESH)``), and ``ALIASES``, which folds
  every public spelling of one function into its key (``core/qualnames.canonical``);
- the prefixes of the families the analysis reads by prefix (``jax.numpy.``, ``jax.lax.``);
- API words: the last name of a call, attribute or keyword as code spells it, which the
  stages before the analysis read without resolving imports (the ast gate, the
  components and slicing of long files, the project layer's text scans, ``coverage``),
  grouped by what a finding needs them for. The prefilter's substring words are derived
  from these groups (``DEVICE_SOURCE``, ``BUILDERS``, ``GATE_WORDS``).

Adding a model: its canonical name and public spellings go into ``ALIASES`` (with a
constant for the handler's decorator), and, when the stages must let a file through for
it, its word into the group of what it does (``DEVICE_CALLS``, ``MESH_BUILDERS``,
``ORIGINS`` ...): the prefilter, the gate, the slicer and the project layer follow.

Standard library only, and data only: the prefilter imports it in every process. Other
packages' objects are on its second page, vocabulary_objects.py.
"""

from __future__ import annotations

# The page of other packages' objects (their placement as data: analysis/library.py).
from .vocabulary_objects import LIBRARY_KINDS, LIBRARY_OBJECTS

# --- canonical qualified names (the models' keys) ---------------------------------------

# device sources
DEVICES = "jax.devices"
LOCAL_DEVICES = "jax.local_devices"
DEVICE_COUNT = "jax.device_count"
LOCAL_DEVICE_COUNT = "jax.local_device_count"
PROCESS_INDEX = "jax.process_index"
PROCESS_COUNT = "jax.process_count"
GET_BACKEND = "jax.get_backend"
# meshes
MESH = "jax.sharding.Mesh"
MAKE_MESH = "jax.make_mesh"
# mesh_utils' device grids (canonical keys: their bare names)
CREATE_DEVICE_MESH = "create_device_mesh"
CREATE_HYBRID_DEVICE_MESH = "create_hybrid_device_mesh"
# jax's own test helpers (``from jax._src import test_util as jtu``), models/test_util.py
TEST_UTIL_CREATE_MESH = "jax._src.test_util.create_mesh"
TEST_UTIL_WITH_EXPLICIT_MESH = "jax._src.test_util.with_explicit_mesh"
# shardings
NAMED_SHARDING = "jax.sharding.NamedSharding"
PARTITION_SPEC = "jax.sharding.PartitionSpec"
AXIS_TYPE = "jax.sharding.AxisType"
SINGLE_DEVICE_SHARDING = "jax.sharding.SingleDeviceSharding"
SET_MESH = "jax.set_mesh"
# the device computations without committed operands run on (``with jax.default_device(d):``)
DEFAULT_DEVICE = "jax.default_device"
# arrays
DEVICE_PUT = "jax.device_put"
DEVICE_GET = "jax.device_get"
MAKE_ARRAY_FROM_CALLBACK = "jax.make_array_from_callback"
MAKE_ARRAY_FROM_SINGLE_DEVICE_ARRAYS = "jax.make_array_from_single_device_arrays"
MAKE_ARRAY_FROM_PROCESS_LOCAL_DATA = "jax.make_array_from_process_local_data"
PROCESS_ALLGATHER = "jax.experimental.multihost_utils.process_allgather"
BROADCAST_ONE_TO_ALL = "jax.experimental.multihost_utils.broadcast_one_to_all"
JIT = "jax.jit"
DEFAULT_DEVICE = "jax.default_device"  # a scope: coverage counts it (models/fetches.py)
# Python's own decorator and test the analysis follows (analysis/interpreter.py,
# models/builtins.py): a property's getter runs where the attribute is read.
PROPERTY = "property"
ISINSTANCE = "isinstance"
SHARD_MAP = "jax.shard_map"
WITH_SHARDING_CONSTRAINT = "jax.lax.with_sharding_constraint"
RESHARD = "jax.sharding.reshard"
TREE_MAP = "jax.tree.map"
GRAD = "jax.grad"
VALUE_AND_GRAD = "jax.value_and_grad"
VMAP = "jax.vmap"
CHECKPOINT = "jax.checkpoint"
# NumPy on device arrays (canonical keys ``np.<name>``; every ``numpy.<name>`` is one)
NP_ARRAY = "np.array"
NP_FLIP = "np.flip"
NP_FLIPLR = "np.fliplr"
NP_FLIPUD = "np.flipud"
NP_ROLL = "np.roll"
NP_TRANSPOSE = "np.transpose"
NP_SWAPAXES = "np.swapaxes"
NP_MOVEAXIS = "np.moveaxis"
NP_RESHAPE = "np.reshape"
NP_RAVEL = "np.ravel"
NP_CONCATENATE = "np.concatenate"
NP_RANDOM_PERMUTATION = "np.random.permutation"
NP_RANDOM_SHUFFLE = "np.random.shuffle"
NP_RANDOM_DEFAULT_RNG = "np.random.default_rng"
NP_RANDOM_SEED = "np.random.seed"
# Methods of a random generator (NumPy's ``default_rng``, ``Generator``, ``RandomState``;
# Python's ``random.Random``) that draw new numbers from arguments that are shapes,
# bounds and parameters, never arrays: their results are host data (NumPy arrays, Python
# numbers), whatever the generator's seed. Not ``choice``, ``sample``, ``permutation`` or
# ``shuffle``, which give back elements of what they are given (devices, arrays).
RNG_DRAWS = frozenset({
    "random", "integers", "standard_normal", "normal", "uniform", "standard_exponential", "exponential",
    "standard_gamma", "gamma", "beta", "binomial", "poisson", "lognormal", "laplace", "logistic", "gumbel",
    "multivariate_normal", "dirichlet", "multinomial", "standard_t", "bytes",
    "rand", "randn", "randint", "random_sample", "gauss", "normalvariate", "randrange", "getrandbits",
})
# jax.numpy (canonical keys ``jnp.<name>``)
JNP_ARRAY = "jnp.array"
JNP_ASARRAY = "jnp.asarray"

# Public spellings -> canonical name. Imports bind names to qualified names as the
# analysis walks the file (``import jax.sharding as shd``), and this table folds them.
ALIASES: dict[str, str] = {
    # device sources
    "jax.devices": DEVICES,
    "jax.local_devices": LOCAL_DEVICES,
    "jax.device_count": DEVICE_COUNT,
    "jax.local_device_count": LOCAL_DEVICE_COUNT,
    "jax.process_index": PROCESS_INDEX,
    "jax.process_count": PROCESS_COUNT,
    "jax.extend.backend.get_backend": GET_BACKEND,
    # meshes
    "jax.sharding.Mesh": MESH,
    "jax.Mesh": MESH,
    "jax._src.mesh.Mesh": MESH,
    "jax.interpreters.pxla.Mesh": MESH,
    "jax.experimental.maps.Mesh": MESH,
    "jax.make_mesh": MAKE_MESH,
    "jax.sharding.make_mesh": MAKE_MESH,
    "jax._src.sharding_impls.make_mesh": MAKE_MESH,
    "jax._src.test_util.create_mesh": TEST_UTIL_CREATE_MESH,
    "jax._src.test_util.with_explicit_mesh": TEST_UTIL_WITH_EXPLICIT_MESH,
    "jax.experimental.mesh_utils.create_device_mesh": CREATE_DEVICE_MESH,
    "jax._src.mesh_utils.create_device_mesh": CREATE_DEVICE_MESH,
    "jax.experimental.mesh_utils.create_hybrid_device_mesh": CREATE_HYBRID_DEVICE_MESH,
    "jax._src.mesh_utils.create_hybrid_device_mesh": CREATE_HYBRID_DEVICE_MESH,
    # shardings
    "jax.sharding.NamedSharding": NAMED_SHARDING,
    "jax.NamedSharding": NAMED_SHARDING,
    "jax._src.sharding_impls.NamedSharding": NAMED_SHARDING,
    "jax.sharding.AxisType": AXIS_TYPE,
    "jax._src.mesh.AxisType": AXIS_TYPE,
    "jax.sharding.PartitionSpec": PARTITION_SPEC,
    "jax.P": PARTITION_SPEC,
    "jax.sharding.P": PARTITION_SPEC,
    "jax._src.partition_spec.PartitionSpec": PARTITION_SPEC,
    "jax.sharding.SingleDeviceSharding": SINGLE_DEVICE_SHARDING,
    "jax._src.sharding_impls.SingleDeviceSharding": SINGLE_DEVICE_SHARDING,
    # the same constructor with memory_kind= keyword-only (jax/_src/sharding_impls.py)
    "jax._src.sharding_impls.make_single_device_sharding": SINGLE_DEVICE_SHARDING,
    "jax.set_mesh": SET_MESH,
    "jax.default_device": DEFAULT_DEVICE,
    "jax._src.config.default_device": DEFAULT_DEVICE,
    "jax.sharding.set_mesh": SET_MESH,
    "jax.sharding.use_mesh": SET_MESH,
    "jax.experimental.use_mesh": SET_MESH,
    # arrays
    "jax.device_put": DEVICE_PUT,
    "jax.device_get": DEVICE_GET,
    "jax.api.device_put": DEVICE_PUT,
    "jax._src.api.device_put": DEVICE_PUT,
    "jax.make_array_from_callback": MAKE_ARRAY_FROM_CALLBACK,
    "jax.default_device": DEFAULT_DEVICE,
    "jax.make_array_from_single_device_arrays": MAKE_ARRAY_FROM_SINGLE_DEVICE_ARRAYS,
    "jax.make_array_from_process_local_data": MAKE_ARRAY_FROM_PROCESS_LOCAL_DATA,
    "jax.experimental.multihost_utils.process_allgather": PROCESS_ALLGATHER,
    "jax.experimental.multihost_utils.broadcast_one_to_all": BROADCAST_ONE_TO_ALL,
    "jax.experimental.multihost_utils.host_local_array_to_global_array":
        "host_local_array_to_global_array",
    "jax.jit": JIT,
    "jax.experimental.pjit.pjit": JIT,
    "jax.shard_map": SHARD_MAP,
    "jax.experimental.shard_map.shard_map": SHARD_MAP,
    "jax._src.shard_map.shard_map": SHARD_MAP,
    "jax.lax.with_sharding_constraint": WITH_SHARDING_CONSTRAINT,
    "jax.sharding.reshard": RESHARD,
    "jax.reshard": RESHARD,
    "jax.tree.map": TREE_MAP,
    "jax.grad": GRAD,
    "jax.value_and_grad": VALUE_AND_GRAD,
    "jax.vmap": VMAP,
    "jax.checkpoint": CHECKPOINT,
    "jax.remat": CHECKPOINT,
    "jax.tree_util.tree_map": TREE_MAP,
    "jax.tree_map": TREE_MAP,
    "functools.partial": "functools.partial",
    # numpy on device arrays
    "numpy.array": NP_ARRAY,
    "numpy.asarray": NP_ARRAY,
    "numpy.copy": NP_ARRAY,
    "numpy.flip": NP_FLIP,
    "numpy.fliplr": NP_FLIPLR,
    "numpy.flipud": NP_FLIPUD,
    "numpy.roll": NP_ROLL,
    "numpy.transpose": NP_TRANSPOSE,
    "numpy.swapaxes": NP_SWAPAXES,
    "numpy.moveaxis": NP_MOVEAXIS,
    "numpy.reshape": NP_RESHAPE,
    "numpy.ravel": NP_RAVEL,
    "numpy.concatenate": NP_CONCATENATE,
    "numpy.random.permutation": NP_RANDOM_PERMUTATION,
    "numpy.random.shuffle": NP_RANDOM_SHUFFLE,
    "numpy.random.default_rng": NP_RANDOM_DEFAULT_RNG,
    "numpy.random.RandomState": NP_RANDOM_DEFAULT_RNG,
    "numpy.random.Generator": NP_RANDOM_DEFAULT_RNG,
    "numpy.random.seed": NP_RANDOM_SEED,
    # stdlib
    "random.shuffle": "random.shuffle",
    "random.sample": "random.sample",
    "random.Random": "random.Random",
    "random.SystemRandom": "random.SystemRandom",
    "random.seed": "random.seed",
    "builtins.list": "list",
    "builtins.tuple": "tuple",
    "builtins.reversed": "reversed",
    "builtins.sorted": "sorted",
    "builtins.len": "len",
    "builtins.set": "set",
    "builtins.frozenset": "set",
    "builtins.int": "int",
    "builtins.range": "range",
    "builtins.iter": "iter",
    "builtins.next": "next",
    "builtins.round": "round",
    # the clock's readings: Python numbers (models/iteration.py)
    "time.time": "time.time",
    "time.perf_counter": "time.time",
    "time.monotonic": "time.time",
    "time.time_ns": "time.time",
    "builtins.enumerate": "enumerate",
    "builtins.zip": "zip",
    "builtins.map": "map",
    "builtins.setattr": "setattr",
    "builtins.delattr": "delattr",
    "builtins.vars": "vars",
    "builtins.object.__setattr__": "setattr",
    "builtins.object.__delattr__": "delattr",
    "builtins.slice": "slice",
    "builtins.isinstance": ISINSTANCE,
    "builtins.dict": "dict",
    "builtins.property": PROPERTY,
}

# --- families read by prefix -------------------------------------------------------------

JAX = "jax"
JAX_PREFIX = "jax."
NUMPY_PREFIX = "numpy."  # numpy.<name> -> np.<name>
NP_PREFIX = "np."
JNP_PREFIX = "jax.numpy."  # jax.numpy.<name> -> jnp.<name>; asarray/array also move an array
JNP_KEY_PREFIX = "jnp."
JAX_RANDOM_PREFIX = "jax.random."
LAX_PREFIX = "jax.lax."
NN_PREFIX = "jax.nn."
# jax.lax functions that compute nothing on an array's devices (models/placement.py)
LAX_NOT_COMPUTING = frozenset({"jax.lax.broadcast_shapes", "jax.lax.full_like", "jax.lax.axis_index",
                               "jax.lax.axis_size"})
NOT_COMPUTING_PACKAGES = ("jax.nn.initializers.",)
MEMORY_SPACE_PREFIX = "jax.memory.Space."  # device_put(x, jax.memory.Space.Host)
# The top-level packages the models stand for, even in their own repository (project/).
# Builtins (canonical names above) that iterate a lone generator argument to its end
# where they are called: ``tuple(f(v) for v in xs)`` runs as ``[f(v) for v in xs]`` does.
CONSUMING = frozenset({"list", "tuple", "sorted", "set"})
MODELLED_PACKAGES = frozenset({"jax", "jaxlib"})
# What a fix writes into the user's file (rules/helpers/crossing.py, rules/rsh103_...): the
# spellings of a name it may reuse, and the module and names of the imports it adds
# (``from jax.sharding import NamedSharding``, ``... import PartitionSpec as P``,
# ``import numpy as np``).
NAMED_SHARDING_SHORT = "jax.NamedSharding"
PARTITION_SPEC_SHORT = "jax.P"
SHARDING_MODULE = "jax.sharding"
PARTITION_SPEC_WORD = "PartitionSpec"
PARTITION_SPEC_ALIAS = "P"
NUMPY_MODULE = "numpy"
NUMPY_ALIAS = "np"

# flax and chex classes whose fields the analysis reads as a dataclass's (analysis/classes.py).
DATACLASS_DECORATORS = ("dataclasses.dataclass", "flax.struct.dataclass", "chex.dataclass")
DATACLASS_BASES = ("flax.struct.PyTreeNode", "flax.linen.Module", "flax.linen.module.Module")
# A generator function under it is a context manager: ``with f():`` runs its body to the
# yield (analysis/functions.py), so a ``jax.set_mesh`` around the yield is in force there.
CONTEXT_MANAGER = "contextlib.contextmanager"

# --- API words, as code spells them (the last name of a call or attribute) ---------------

# Calls that produce device lists in enumeration order, and the others that produce
# device lists; attributes that hold them.
FRESH_CALLS = frozenset({"devices", "local_devices"})  # DEVICES_WORD, and it with a prefix
DEVICE_CALLS = FRESH_CALLS | {CREATE_DEVICE_MESH, CREATE_HYBRID_DEVICE_MESH}
DEVICES_WORD = "devices"  # jax.devices(), mesh.devices, array.devices()
DEVICE_SET_WORD = "device_set"  # sharding.device_set
AXIS_NAMES_WORD = "axis_names"  # mesh.axis_names: the tuple of its axis names
DEVICE_ATTRS = frozenset({DEVICES_WORD, DEVICE_SET_WORD})
# ``devices`` names prose too ("the devices"): the text tests look for it as code only.
PROSE_WORDS = frozenset({"devices"})
# Mesh constructors: ``Mesh`` takes a device list made elsewhere; the builders take
# jax.devices() themselves.
MESH_WORD = "Mesh"
MAKE_MESH_WORD = "make_mesh"
MESH_BUILDERS = frozenset({MAKE_MESH_WORD, "create_mesh", "with_explicit_mesh"})
MESH_CTORS = MESH_BUILDERS | {MESH_WORD}
NAMED_SHARDING_WORD = "NamedSharding"
DEVICE_PUT_WORD = "device_put"
SHARD_MAP_WORD = "shard_map"
# Calls and attributes that can reorder a device list.
REORDERS = frozenset({"reversed", "flip", "fliplr", "flipud", "roll", "transpose", "swapaxes",
                      "moveaxis", "permutation", "shuffle", "sample", "sorted", "choice", "list"})
REORDER_ATTRS = frozenset({"T"})
# Calls that give an array a known mesh.
# The methods of other packages' objects (vocabulary_objects.py) that give arrays placed like a target (orbax's restore):
# origins of arrays with a known mesh for the stages (ORIGINS).
LIBRARY_ORIGINS = frozenset(name for kind in LIBRARY_KINDS.values() for methods in [kind.get("methods")]
                            if isinstance(methods, dict) for name, effect in methods.items()
                            if isinstance(effect, dict) and "placed_like" in effect)

ORIGINS = frozenset({DEVICE_PUT_WORD, "make_array_from_callback", "make_array_from_single_device_arrays",
                     "make_array_from_process_local_data", "host_local_array_to_global_array",
                     SHARD_MAP_WORD}) | LIBRARY_ORIGINS
# ... and of them, those that assemble a global array from each process's local data: with
# a mesh of ``local_devices`` (this process's devices only), RSH304, whatever else the file has.
LOCAL_ASSEMBLIES = frozenset({"make_array_from_process_local_data", "host_local_array_to_global_array"})
LOCAL_DEVICES_WORD = "local_devices"
# Keywords that place a call's result (jax.jit(out_shardings=...), jnp.zeros(device=...)).
ORIGIN_KEYWORDS = frozenset({"out_shardings", "device"})
DEVICE_KEYWORD = "device"  # device_put(x, device=d)
MESH_KEYWORD = "mesh"  # NamedSharding(mesh=...)
# The distribution a project pins or installs (project/pins.py: RSH308 names its version).
JAX_PACKAGE = "jax"
TILED_KEYWORD = "tiled"  # multihost_utils.process_allgather(x, tiled=True)
AXIS_TYPES_KEYWORD = "axis_types"  # Mesh(devs, names, axis_types=...), jax.make_mesh(...)
# The members of jax.sharding.AxisType, and the type of every axis a builder gives when
# axis_types is not passed (jax 0.10.2: jax/_src/mesh.py _normalize_axis_types for Mesh and
# jtu.create_mesh; jax/_src/sharding_impls.py make_mesh and jtu.with_explicit_mesh: Explicit).
AXIS_TYPE_AUTO = "Auto"
AXIS_TYPE_EXPLICIT = "Explicit"
AXIS_TYPE_MEMBERS = frozenset({AXIS_TYPE_AUTO, AXIS_TYPE_EXPLICIT, "Manual"})
# Where an array with a known mesh meets something other than a second device source:
# the context mesh, a shard's own device, a fetch to the host.
ADDRESSABLE_SHARDS = "addressable_shards"
ADDRESSABLE_DATA = "addressable_data"
# A shard's attributes the analysis reads (x.addressable_shards[i].data, .device), and
# the array's (models/commitments.py).
SHARD_DATA = "data"
SHARD_DEVICE = "device"
SHARD_ATTRS = frozenset({ADDRESSABLE_SHARDS, SHARD_DATA, SHARD_DEVICE})
# Array methods that fetch the value to the host (models/fetches.py).
FETCH_METHODS = frozenset({"tolist"})
# Reads of a one-element array's value (models/fetches.py): sites for coverage, which no
# rule judges (no mesh axis splits one element).
SCALAR_FETCH_METHODS = frozenset({"item"})
SCALAR_READS = frozenset({"float", "int"})
# The keywords of jax.jit (and pjit) that place its inputs and results.
JIT_SHARDINGS = ("in_shardings", "out_shardings")
# jnp.array(x) and jnp.asarray(x) compute on x's devices: no fetch to the host (RSH305);
# nor are they a computation under the context mesh (analysis/contextmesh.py).
JNP_MAKERS = frozenset({"array", "asarray"})
# Their dtype and copy arguments: (keyword, position, default) per maker. Under jax.set_mesh
# a NumPy array already of the dtype asked for comes back without a copy, uncommitted on the
# process's own device, where every other spelling is committed to the context mesh
# (analysis/models/host.py; tests/multicontroller/test_context_asarray.py, jax 0.10.2).
JNP_MAKER_DTYPE = {"asarray": ("dtype", 1), "array": ("dtype", 1)}
JNP_MAKER_COPY: dict[str, tuple[str, int | None, object]] = {
    "asarray": ("copy", None, None),  # keyword-only, default None: copy only when needed
    "array": ("copy", 2, True),  # default True: always a copy
}
# np.array(x) and np.asarray(x) fetch x (the same words as jnp's makers, the gate tells
# the two apart by the module).
# process_allgather of a global array without tiled=True (RSH308) is such a use too.
PROCESS_ALLGATHER_WORD = "process_allgather"
ONE_MESH_USES = frozenset({ADDRESSABLE_DATA, ADDRESSABLE_SHARDS, "device_get", PROCESS_ALLGATHER_WORD}) \
    | JNP_MAKERS | FETCH_METHODS
# A builder's shape of this process's device count (RSH307): the calls that count this
# process's devices, and the builders that lay out jax.devices() by default.
LOCAL_COUNT_CALLS = frozenset({"local_device_count", "local_devices"})
SHAPED_BUILDERS = frozenset({MAKE_MESH_WORD, CREATE_DEVICE_MESH})
JNP_ALIAS = "jnp"  # ``jnp.f`` or ``jax.numpy.f``
NUMPY_WORD = "numpy"
# A device id used as a position (RSH104): ``d.id``, ``str.split``, but not jax.random.split.
ID_ATTRS = frozenset({"id", "split"})
RANDOM_SPLIT = "random.split"

# What places results on one device whatever the operands (RSH306; the gate's device
# targets besides device_put's): ``with jax.default_device(d):``,
# ``SingleDeviceSharding(d)`` (as jit's out_shardings or a put's target), ``x.to_device(d)``;
# and a ``device=`` keyword (DEVICE_KEYWORD).
ONE_DEVICE_WORDS = frozenset({"default_device", "SingleDeviceSharding"})  # prefilter words too
ONE_DEVICE_PLACERS = ONE_DEVICE_WORDS | frozenset({"to_device"})

# Keywords that place the result of a jnp function (jnp.zeros(device=...),
# jnp.sum(x, out_sharding=...)): the host model leaves such a result unknown
# (models/host.py), and the long-file stages keep such a call (CARRYING_KEYWORDS).
PLACEMENT_KEYWORDS = frozenset({DEVICE_KEYWORD, "sharding", "out_sharding"})

# The long-file stages (stages/components.py): what makes a unit's values device values,
# a call, attribute or keyword that builds or reads devices, meshes, shardings, arrays
# placed on them, device counts and ids.
CARRYING_CALLS = DEVICE_CALLS | MESH_CTORS | frozenset({
    "AbstractMesh", "get_abstract_mesh", NAMED_SHARDING_WORD, "SingleDeviceSharding", "PositionalSharding",
    "GSPMDSharding", "PmapSharding", DEVICE_PUT_WORD, "device_put_replicated", "device_put_sharded",
    "make_array_from_callback", "make_array_from_single_device_arrays", "make_array_from_process_local_data",
    "host_local_array_to_global_array", "global_array_to_host_local_array", "set_mesh", "use_mesh",
    "device_count", "local_device_count", "process_count", "process_index", "addressable_data", "device_get",
    "with_sharding_constraint", "reshard", SHARD_MAP_WORD, "to_device"})
CARRYING_ATTRS = DEVICE_ATTRS | frozenset({ADDRESSABLE_SHARDS, "addressable_devices", "sharding",
                                           "mesh", "id", "device", "process_index"})
# Not ``mesh=``: every modelled API that takes one is a carrying call already (shard_map,
# NamedSharding), and the rest (pallas_call(mesh=plsc.VectorSubcoreMesh(...))) build no
# mesh of devices; as a seed it glued the tests of a Pallas file into one component
# (1,710 more lines through the engine on the jax repository, 2,035 of 3,203 in one file).
CARRYING_KEYWORDS = frozenset({"in_shardings", "out_shardings", "devices", "backend"}) | PLACEMENT_KEYWORDS
# stages/slicing.py: the statements that seed what a generated giant keeps.
SEED_CALLS = DEVICE_CALLS | MESH_CTORS | ORIGINS | REORDERS | frozenset({
    NAMED_SHARDING_WORD, "SingleDeviceSharding", "PartitionSpec", "P", "jit", "pjit", "partial",
    "with_sharding_constraint", "reshard", "set_mesh", "use_mesh", "to_device", "tree_map", "map",
    "seed", "default_rng", "Random", "SystemRandom", "RandomState", "process_index", "device_count",
    "local_device_count", "process_count"})
SEED_ATTRS = DEVICE_ATTRS | REORDER_ATTRS | frozenset({"sharding", "mesh", "flat"})
SEED_KEYWORDS = frozenset({"device", "in_shardings", "out_shardings", "devices"})

# frontends/coverage.py: the final names of the transfer calls, as spelled through any jax import.
TRANSFER_NAMES = frozenset({
    DEVICE_PUT_WORD, "with_sharding_constraint", "reshard", "make_array_from_process_local_data",
    "host_local_array_to_global_array",
})
TRANSFER_HINTS = ("to_device", "in_shardings", "out_shardings", "device=")
# The other calls coverage counts as sites (events.Site, Fetch), as code spells them:
# listed where the analysis never ran them, and a file that spells one is analysed.
SITE_NAMES = frozenset({
    "device_get", "make_array_from_callback", "make_array_from_single_device_arrays", "process_allgather",
    "default_device",
})

# --- the text tests' words (substrings), derived from the groups above ---------------------


def _code_words(*groups: frozenset[str]) -> tuple[str, ...]:
    """Each word as a substring of code: itself, or for a word prose uses too, only as a
    call, an attribute or an import alias. In the order of the groups, the commonest
    first: a text test stops at the first word it finds."""
    out: list[str] = []
    for group in groups:
        for w in sorted(group):
            if w not in out and f"{w}(" not in out:
                out += [f"{w}(", f".{w}", f"{w} as"] if w in PROSE_WORDS else [w]
    return tuple(out)


# A device source as code spells it: a call (jax.devices(), local_devices()), an
# attribute (mesh.devices, also jax.devices or jax.local_devices bound to a name), an
# import alias, a mesh builder (stages/prefilter.py).
DEVICE_SOURCE = _code_words(FRESH_CALLS, DEVICE_ATTRS, MESH_BUILDERS, DEVICE_CALLS)
# The word every device source but the mesh builders says (the prefilter's first scan),
# and the mesh builders whose names do not say it (jtu: jax's own test helpers).
DEVICE_STEM = "device"
BUILDERS = tuple(w for w in DEVICE_SOURCE if DEVICE_STEM not in w)
# Names the gate's paths other than RSH104's need: a mesh constructor (an alias of one
# names it too), a sharding, a transfer, create_device_mesh, whose shape of this process's
# device count is a finding without a mesh (RSH307), and a single-device placement (RSH306).
GATE_WORDS = (MESH_WORD, *sorted(MESH_BUILDERS), NAMED_SHARDING_WORD, DEVICE_PUT_WORD, CREATE_DEVICE_MESH,
              *sorted(ONE_DEVICE_WORDS), f"{DEVICE_KEYWORD}=")
ID_WORDS = tuple(sorted(f".{w}" for w in ID_ATTRS))  # ".id", ".split"

# The project layer's text scans (project/defs.py, module_text.py, module_scan.py,
# projects.py): what a value built from devices reads as (a device source, a mesh or
# sharding constructor, a transfer) ...
VALUE_WORDS = (*DEVICE_SOURCE, MESH_WORD, "mesh", "Sharding", DEVICE_PUT_WORD, "make_array", "shard")
# ... the same words for a regular expression's alternation over a module-level line ...
VALUE_PATTERN = "devices|Mesh|mesh|Sharding|device_put|make_array|shard"
# ... what builds devices itself (a function that only forwards a mesh it is given makes
# nothing its caller does not have) ...
SOURCE_WORDS = (*DEVICE_SOURCE, f"{MESH_WORD}(")
# ... what moves arrays ...
MOVE_WORDS = (f"{DEVICE_PUT_WORD}(", "with_sharding_constraint(", "reshard(")
# ... and what a method that gives an importer a device value says.
BUILD_WORDS = (*SOURCE_WORDS, *MOVE_WORDS, "Sharding(", "make_array")

# --- where the code runs (stages/runtime_facts.py, docs/runtimes.md) -----------------------
# One process with several CPU devices: a jax option set through jax.config.update (or
# jax's own test helper that sets it), or an XLA flag put into the process's environment.
CONFIG_UPDATES = frozenset({"jax.config.update", "jax._src.config.update", "jax._src.config.config.update"})
NUM_CPU_DEVICES = "jax_num_cpu_devices"
NUM_CPU_DEVICES_ENV = "JAX_NUM_CPU_DEVICES"  # the option read from the environment
REQUEST_CPU_DEVICES = "jax._src.test_util.request_cpu_devices"  # jtu: config.update of the option
XLA_FLAGS_ENV = "XLA_FLAGS"
FORCE_HOST_DEVICE_COUNT = "xla_force_host_platform_device_count"
# What writes the process's environment: os.environ[...] = v, os.environ.setdefault/update,
# os.putenv, pytest's monkeypatch.setenv.
ENVIRON = "os.environ"
ENVIRON_WRITERS = frozenset({"setdefault", "update", "__setitem__"})
PUTENV = "os.putenv"
SETENV_METHOD = "setenv"
# Several processes whatever else the code says: the distributed runtime, and jax's
# multi-process test runner (its main() and MultiProcessTest call jax.distributed.initialize).
DISTRIBUTED_INITIALIZE = frozenset({"jax.distributed.initialize", "jax._src.distributed.initialize"})
INITIALIZE_WORD = "initialize"  # the word a module that launches several processes spells
MULTIPROCESS_TEST_MODULE = "jax._src.test_multiprocess"
# Uses (not imports) that say the code is written for several processes (RSH301, RSH305,
# RSH306 wait for one with runtime = "auto"): qualified names, and prefixes of families.
MULTI_PROCESS_USES = frozenset({PROCESS_INDEX, PROCESS_COUNT, "jax.process_indices", "jax.host_id",
                                "jax.host_count", MAKE_ARRAY_FROM_PROCESS_LOCAL_DATA})
MULTI_PROCESS_FAMILIES = ("jax.distributed.", "jax.experimental.multihost_utils.", MULTIPROCESS_TEST_MODULE + ".")
# The words a text must hold for the tree to be read for those uses (a fast "no").
# (``distributed`` alone is in every Apache license header: "distributed under the License".)
DISTRIBUTED_WORDS = ("jax.distributed", "distributed.", "distributed import", "import distributed")
MULTI_PROCESS_WORDS = (*DISTRIBUTED_WORDS, "process_index", "process_count", "process_indices", "host_id",
                       "host_count", "multihost_utils", "process_local_data", "test_multiprocess")
# A single controller: Pathways, and colocated Python, whose functions run on the CPU host
# next to the devices, dispatched by one controller. A process is a Pathways client when it
# selects the proxy backend (jax_platforms / JAX_PLATFORMS holding "proxy"); its client
# package's initialize() does nothing otherwise (pathwaysutils/_initialize.py), so importing
# or initialising the package says nothing.
PLATFORMS_OPTION = "jax_platforms"
PLATFORMS_ENV = "JAX_PLATFORMS"
PATHWAYS_BACKEND = "proxy"
COLOCATED_PYTHON = "jax.experimental.colocated_python.colocated_python"
COLOCATED_PYTHON_CLASS = "jax.experimental.colocated_python.colocated_python_class"
COLOCATED_SPELLINGS = {
    "jax.experimental.colocated_python.api.colocated_python": COLOCATED_PYTHON,
    "jax.experimental.colocated_python.api.colocated_python_class": COLOCATED_PYTHON_CLASS,
}
COLOCATED_WORD = "colocated_python"
# The words a module's text must hold for its tree to be read for where it runs.
RUNTIME_WORDS = (NUM_CPU_DEVICES, NUM_CPU_DEVICES_ENV, "request_cpu_devices", FORCE_HOST_DEVICE_COUNT,
                 PLATFORMS_OPTION, PLATFORMS_ENV, *DISTRIBUTED_WORDS, "test_multiprocess")

# Functions outside the models that change none of the objects they are given: a container
# or an instance handed to any other call the analysis does not run may be changed there
# (mutation.handed_on). exec and eval run code the analysis does not see.
UNCHANGING_CALL_PREFIXES = ("builtins.", "logging.", "warnings.", "math.", "time.", "json.dump", "os.path.",
                            "pprint.", "typing.", "functools.partial")
CHANGING_BUILTINS = frozenset({"builtins.exec", "builtins.eval", "builtins.__import__"})
