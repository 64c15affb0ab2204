"""The trees the tools run on: built from installed packages (bench/corpus/), given as
a directory, the rules' own examples, and scaled copies for the linearity targets."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tools import REPO, _run_quiet, package_dirs, tool_versions

# Import names of the JAX libraries that make up the "user" tree, in the order copied.
USER_PACKAGES = ("flax", "optax", "orbax.checkpoint", "chex", "jraph")
DIST_NAMES = {
    "jax": "jax",
    "flax": "flax",
    "optax": "optax",
    "orbax.checkpoint": "orbax-checkpoint",
    "chex": "chex",
    "jraph": "jraph",
}
# The scale trees copy two small libraries (~17k lines): 16x of the jax tree, or even of
# optax, takes minutes per flake8 run, which buys nothing a smaller base does not show.
# The first choice that is installed wins.
SCALE_CHOICES: tuple[tuple[str, ...], ...] = (("chex", "jraph"), ("optax",), ("jax",))
SCALE_FACTORS = (1, 4, 16)  # run.py sets it from --scales
CORPUS_LAYOUT = 3  # bump when the corpus builder changes, so old corpora get rebuilt
# The jax repository with its tests, as a user has it: a checkout given by path (or
# RESHARD_BENCH_JAX_REPO), or this commit's source archive fetched into bench/corpus/.
JAX_REPO_COMMIT = "cec06d116c05f0d52adfceee3d3b730fdbcb0ce5"
JAX_REPO_ARCHIVE = f"https://github.com/jax-ml/jax/archive/{JAX_REPO_COMMIT}.tar.gz"
JAX_REPO_ENV = "RESHARD_BENCH_JAX_REPO"
# Its heaviest file for reshard-lint: the most mesh code in one module.
HEAVIEST_FILE = "tests/pjit_test.py"
HEAVIEST_COMMANDS = ("rsh_cold", "ast_parse_all")
# Substrings a cheap text prefilter could look for before parsing a file.
PREFILTER_WORDS = ("Mesh", "NamedSharding", "device_put", "devices", "jax")
PREFILTER_CORE = ("Mesh", "NamedSharding", "device_put", "devices")


# ----------------------------------------------------------------------------- corpus


@dataclass
class Tree:
    name: str
    path: Path
    files: int = 0
    lines: int = 0
    bytes: int = 0
    contains: dict[str, int] = field(default_factory=dict)
    scale: int = 0  # 0: not a scale tree
    # Only checked for agreement of the front ends (once), not timed against targets.
    check_only: bool = False
    # Run only these commands here (the heaviest single file); empty: every command.
    commands: tuple[str, ...] = ()


def py_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _engine_prefilter() -> Callable[[str], bool] | None:
    """The engine's own text prefilter, when this checkout has one (stdlib-only module)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    try:
        from reshard_lint.stages.gate import prefilter  # type: ignore[import-not-found]
    except Exception:
        return None
    return prefilter  # type: ignore[no-any-return]


def tree_stats(tree: Tree) -> Tree:
    files = py_files(tree.path)
    tree.files = len(files)
    counts = {w: 0 for w in PREFILTER_WORDS}
    counts["any_core"] = 0
    gate = _engine_prefilter()
    if gate is not None:
        counts["engine_prefilter"] = 0
    lines = size = 0
    for f in files:
        data = f.read_bytes()
        size += len(data)
        lines += data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        text = data.decode("utf-8", "replace")
        for w in PREFILTER_WORDS:
            if w in text:
                counts[w] += 1
        if any(w in text for w in PREFILTER_CORE):
            counts["any_core"] += 1
        if gate is not None and gate(text):
            counts["engine_prefilter"] += 1
    tree.lines, tree.bytes, tree.contains = lines, size, counts
    return tree


def _copy_py(src: Path, dst: Path, limit_lines: int = 0) -> None:
    """Copy the .py files of a package (no caches, data or binaries)."""
    total = 0
    for f in py_files(src):
        if limit_lines and total >= limit_lines:
            break
        target = dst / f.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
        total += f.read_bytes().count(b"\n")


def _scale(base: Path, dst: Path, factor: int) -> None:
    """`factor` copies of a tree under different directory names (so no path repeats)."""
    if dst.exists():
        shutil.rmtree(dst)
    for i in range(factor):
        shutil.copytree(
            base, dst / f"copy{i:02d}", ignore=shutil.ignore_patterns("__pycache__", "pyproject.toml")
        )


def _mark_root(tree: Path) -> None:
    # bench/corpus/ is gitignored, and fixit (trailrunner) skips every file under a
    # gitignored path of the enclosing project; a pyproject.toml makes each tree its own
    # project root. It also keeps the repo's own pyproject.toml out of any tool's config.
    (tree / "pyproject.toml").write_text("# benchmark corpus tree: intentionally empty\n")


def build_managed_corpus(
    root: Path, python: Path, quick: bool, rebuild: bool, log: Callable[[str], None]
) -> tuple[list[Tree], dict[str, Any]]:
    versions = tool_versions(python)
    wanted = {
        "layout": CORPUS_LAYOUT,
        "scales": list(SCALE_FACTORS),
        "quick": quick,
        "packages": {d: versions.get(d) for d in ["jax", *(DIST_NAMES[p] for p in USER_PACKAGES)]},
    }
    manifest_path = root / "manifest.json"
    if manifest_path.exists() and not rebuild:
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("wanted") == wanted:
            trees = [
                Tree(name=t["name"], path=root / t["name"], scale=t.get("scale", 0))
                for t in manifest["trees"]
            ]
            if all(t.path.is_dir() for t in trees):
                log(f"reusing corpus {root}")
                return [tree_stats(t) for t in trees], manifest
    log(f"building corpus {root} from the tool environment's installed packages")
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    dirs = package_dirs(python, ["jax", *USER_PACKAGES])
    limit = 3000 if quick else 0  # lines per package: quick trees take seconds
    trees: list[Tree] = []
    missing: list[str] = []
    if "jax" not in dirs:
        raise SystemExit("jax is not installed in the tool environment; cannot build the corpus")
    _copy_py(Path(dirs["jax"]), root / "jax" / "jax", limit)
    trees.append(Tree("jax", root / "jax"))
    user_parts = [p for p in USER_PACKAGES if p in dirs]
    missing = [p for p in USER_PACKAGES if p not in dirs]
    if user_parts:
        for p in user_parts:
            _copy_py(Path(dirs[p]), root / "user" / Path(*p.split(".")), limit // 3 if quick else 0)
        trees.append(Tree("user", root / "user"))
    scale_src = next(c for c in SCALE_CHOICES if all(p in dirs for p in c))
    base = root / "scale-1x"
    for p in scale_src:
        _copy_py(Path(dirs[p]), base / Path(*p.split(".")), 800 if quick else 20000)
    trees.append(Tree("scale-1x", base, scale=1))
    for factor in SCALE_FACTORS[1:]:
        _scale(base, root / f"scale-{factor}x", factor)
        trees.append(Tree(f"scale-{factor}x", root / f"scale-{factor}x", scale=factor))
    for t in trees:
        _mark_root(t.path)
    manifest = {
        "wanted": wanted,
        "trees": [{"name": t.name, "scale": t.scale} for t in trees],
        "sources": {p: dirs[p] for p in ["jax", *user_parts]},
        "scale_source": scale_src,
        "missing_user_packages": missing,
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return [tree_stats(t) for t in trees], manifest


def given_corpus(root: Path, scratch: Path) -> tuple[list[Tree], dict[str, Any]]:
    """A directory of Python files made by someone else: read it, never write into it."""
    subdirs = sorted(d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".") and py_files(d))
    if subdirs and not any(f.is_file() and f.suffix == ".py" for f in root.iterdir()):
        trees = [Tree(d.name, d) for d in subdirs]
    else:
        trees = [Tree(root.name or "corpus", root)]
    trees = [tree_stats(t) for t in trees]
    base_src = min(trees, key=lambda t: t.lines)
    base = scratch / "scale-1x"
    shutil.copytree(base_src.path, base / base_src.name, ignore=shutil.ignore_patterns("__pycache__"))
    trees.append(tree_stats(Tree("scale-1x", base, scale=1)))
    for factor in SCALE_FACTORS[1:]:
        _scale(base, scratch / f"scale-{factor}x", factor)
        trees.append(tree_stats(Tree(f"scale-{factor}x", scratch / f"scale-{factor}x", scale=factor)))
    return trees, {"given": str(root), "scale_source": base_src.name}


def examples_tree(python: Path, dest: Path) -> Tree | None:
    """The rules' own example programs as files: the jax sources have few or no findings,
    so this is the tree where "flake8 and the CLI find the same diagnostics" has teeth."""
    code = (
        "import json\n"
        "from reshard_lint.rules import all_rules\n"
        "out = []\n"
        "for r in all_rules():\n"
        "    for i, e in enumerate(r.examples):\n"
        "        out.append([f\"{r.code.lower()}_{'invalid' if e.fires else 'valid'}_{i}.py\", e.code])\n"
        "print(json.dumps(out))\n"
    )
    done = _run_quiet([str(python), "-c", code])
    if done.returncode != 0:
        return None
    files = json.loads(done.stdout)
    if not files:
        return None
    (dest / "examples").mkdir(parents=True)
    for name, text in files:
        (dest / "examples" / name).write_text(text)
    return tree_stats(Tree("examples", dest, check_only=True))


PROJECT_PACKAGES = 12  # the multi-module tree: packages of modules that import meshes


def project_tree(dest: Path) -> Tree:
    """A generated project whose meshes cross modules. Each package builds its meshes in
    ``meshes.py`` and re-exports them from ``__init__.py``; a data loader, a trainer and a
    weight sync import them (relatively, through the package, through a module alias),
    and a dozen model modules around them compute without meshes, importing helpers from
    one another, as most modules of a real project do (on maxtext, 60 of 664 files name a
    mesh). One sync per package moves weights from the training mesh to the rollout mesh,
    and one server to a mesh a factory of ``meshes.py`` makes (RSH201 twice, found across
    modules, the second through the factory's body). Deterministic, so every run measures the same tree."""
    root = dest / "project"
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'bench-project'\nversion = '0'\n")
    head = ("import jax\nimport jax.numpy as jnp\nimport numpy as np\n"
            "from jax.sharding import NamedSharding, PartitionSpec as P\n\n")
    body = "".join(
        f"\n\ndef layer_{k}(x, w):\n    y = jnp.dot(x, w) + {k}\n    return jax.nn.relu(y) * 0.5\n"
        for k in range(25))
    for i in range(PROJECT_PACKAGES):
        pkg = root / f"pkg{i}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text("from .meshes import ROLLOUT, TRAIN\n")
        (pkg / "meshes.py").write_text(
            "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n\n"
            "TRAIN = Mesh(np.array(jax.devices()), ('data',))\n"
            "ROLLOUT = Mesh(np.array(jax.devices()[:4]), ('data',))\n\n\n"
            "def serving_mesh(n):\n    return Mesh(np.array(jax.devices()[:n]), ('data',))\n")
        (pkg / "data.py").write_text(head + f"from pkg{i} import TRAIN\n\n\ndef batch(n):\n"
                                     "    return jax.device_put(np.zeros((n, 8)), NamedSharding(TRAIN, P('data')))\n"
                                     + body)
        (pkg / "trainer.py").write_text(
            head + f"import pkg{i}.meshes as meshes\nfrom .layers_0 import layer_3\n\n"
            "SPEC = NamedSharding(meshes.TRAIN, P('data'))\n"
            "params = jax.device_put(np.ones((8, 8)), SPEC)\n"
            "again = jax.device_put(params, NamedSharding(meshes.TRAIN, P()))\n" + body)
        (pkg / "serve.py").write_text(
            head + "from .meshes import TRAIN, serving_mesh\n\n"
            "weights = jax.device_put(np.zeros(8), NamedSharding(TRAIN, P('data')))\n"
            "served = jax.device_put(weights, NamedSharding(serving_mesh(2), P()))\n")
        (pkg / "sync.py").write_text(
            head + "from .meshes import ROLLOUT, TRAIN\n\n"
            "weights = jax.device_put(np.zeros(8), NamedSharding(TRAIN, P('data')))\n"
            "rollout = jax.device_put(weights, NamedSharding(ROLLOUT, P()))\n")
        for j in range(12):
            helper = f"from .layers_{j - 1} import layer_{j % 25}\n" if j else ""
            (pkg / f"layers_{j}.py").write_text(
                "import jax\nimport jax.numpy as jnp\n" + helper + "\nSCALE = 0.5\n" + body)
    return tree_stats(Tree("project", root))


def jax_repo_tree(given: Path | None, fetch: bool, corpus_root: Path,
                  log: Callable[[str], None]) -> tuple[Tree | None, str]:
    """The jax repository tree, or None and why it was skipped."""
    env = os.environ.get(JAX_REPO_ENV)
    path = given or (Path(env) if env else None)
    fetched = corpus_root / f"jax-repo-{JAX_REPO_COMMIT[:12]}"
    if path is None and fetched.is_dir():
        path = fetched
    if path is None and fetch:
        _fetch_archive(fetched, log)
        path = fetched
    if path is None:
        return None, (f"jax repository tree skipped: pass --jax-repo PATH or set {JAX_REPO_ENV} to a checkout "
                      f"of jax-ml/jax (measured at {JAX_REPO_COMMIT[:12]}), or --fetch-jax-repo to download "
                      f"{JAX_REPO_ARCHIVE}")
    path = path.absolute()
    if not (path / HEAVIEST_FILE).is_file():
        return None, f"jax repository tree skipped: {path} has no {HEAVIEST_FILE}"
    # A checkout is read, never written: the tools run with --isolated and no cache there.
    return tree_stats(Tree("jax-repo", path)), f"jax repository tree: {path}"


def _fetch_archive(dest: Path, log: Callable[[str], None]) -> None:
    log(f"downloading {JAX_REPO_ARCHIVE}")
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "jax.tar.gz"
        urllib.request.urlretrieve(JAX_REPO_ARCHIVE, archive)  # noqa: S310 - a pinned https URL
        staging = Path(tmp) / "tree"
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".py")]
            for m in members:
                m.name = m.name.split("/", 1)[1]  # drop the archive's top directory
            tar.extractall(staging, members=members, filter="data")
        _mark_root(staging)
        shutil.move(str(staging), dest)


def heaviest_tree(repo: Tree, scratch: Path) -> Tree:
    """The repository's heaviest file alone, for the one-file target."""
    dest = scratch / "heaviest"
    dest.mkdir(parents=True)
    shutil.copyfile(repo.path / HEAVIEST_FILE, dest / Path(HEAVIEST_FILE).name)
    _mark_root(dest)
    return tree_stats(Tree("heaviest", dest, commands=HEAVIEST_COMMANDS))
