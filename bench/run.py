#!/usr/bin/env python3
"""reshard-lint performance benchmark: one command, see docs/performance.md.

    python bench/run.py                 # full run: bench/.venv, corpus, 3 repetitions
    python bench/run.py --quick         # smoke run: small trees, 1 repetition
    python bench/run.py --no-venv --corpus DIR --no-peers --quick   # what the smoke test does

Only the standard library is used here, so any Python 3.10+ can drive it; the tools
under test run in the "tool environment": bench/.venv (made and kept up to date on
demand from `pip install -e .[bench]`), the interpreter given with --python, or this
interpreter with --no-venv. The peers (TorchFix, fixit) get an environment of their own,
bench/.venv-peers, with the same flake8: TorchFix pins libcst<1.6, and sharing one
environment would measure reshard-lint on a libcst no user of it gets.

Every command runs as a child process in its own session. Wall time is the child's
lifetime measured here. Peak memory is taken two ways, because flake8 -j2 is several
processes: "peak MB" is the largest sum of RSS over the child's whole process tree,
sampled from /proc every 20 ms (shared copy-on-write pages of forked workers count once
per process, as psutil would count them), and never less than ru_maxrss from wait4();
"proc MB" is that ru_maxrss alone (the largest single process of the tree, exact).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
VENV = BENCH / ".venv"
PEER_VENV = BENCH / ".venv-peers"
PEER_PACKAGES = ("torchfix", "fixit")
DEFAULT_CORPUS = BENCH / "corpus"
DEFAULT_JSON = BENCH / "results" / "latest.json"
LAUNCHER = BENCH / "flake8_plugins.py"

# Import names of the JAX libraries that make up the "user" tree, in the order copied.
USER_PACKAGES = ("flax", "optax", "orbax.checkpoint", "chex", "jraph")
# Not in the `bench` extra (optional, cheap): installed best effort into bench/.venv.
EXTRA_USER_INSTALLS = ("chex", "jraph")
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
SCALE_FACTORS = (1, 4, 16)
CORPUS_LAYOUT = 3  # bump when the corpus builder changes, so old corpora get rebuilt
# Substrings a cheap text prefilter could look for before parsing a file.
PREFILTER_WORDS = ("Mesh", "NamedSharding", "device_put", "devices", "jax")
PREFILTER_CORE = ("Mesh", "NamedSharding", "device_put", "devices")

TARGET_FLAKE8_RATIO = 1.10
TARGET_COLD_S = 5.0
TARGET_WARM_S = 0.5
TARGET_MEM_RATIO = 2.0
# Throughput at 16x may drop to this fraction of 1x and still count as linear;
# a superlinear cost (a quadratic pass, a growing cache) shows up far below it.
TARGET_LINEAR_MIN = 0.80

DIAG_RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+):?\s*(?P<code>[A-Z]+\d+)\b")
SAMPLE_INTERVAL_S = 0.02
AGREEMENT_COMMANDS = ("flake8_j2_F", "flake8_j2_F_RSH", "rsh_cold", "rsh_warm")


# ----------------------------------------------------------------------------- processes


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(x) for x in fh.read().split())
        except OSError:
            continue
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, IndexError, ValueError):
        return 0


class TreeSampler(threading.Thread):
    """Largest sum of RSS over a process and all its descendants while it runs."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak_kb = 0
        self.max_procs = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            pids, frontier = [], [self.root]
            while frontier:
                pid = frontier.pop()
                pids.append(pid)
                frontier.extend(_children(pid))
            total = sum(_rss_kb(p) for p in pids)
            self.peak_kb = max(self.peak_kb, total)
            self.max_procs = max(self.max_procs, len(pids))
            self._stop_event.wait(SAMPLE_INTERVAL_S)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


@dataclass
class Sample:
    wall_s: float
    rc: int
    peak_tree_kb: int
    peak_proc_kb: int
    max_procs: int
    timed_out: bool
    cpu_s: float = 0.0
    stdout: str = ""
    stderr_tail: str = ""


def _child_env() -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE (set on some CI machines and sandboxes) would make every
    # run compile the tools' modules again; users' installs have their .pyc files, and
    # the untimed warm-up run writes them here.
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(argv: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> Sample:
    env = env if env is not None else _child_env()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True
        )
        sampler = TreeSampler(proc.pid)
        sampler.start()
        timed_out = threading.Event()

        def _kill() -> None:
            timed_out.set()
            _killpg(proc.pid)

        timer = threading.Timer(timeout, _kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): the child's session must not outlive us.
            _killpg(proc.pid)
            timer.cancel()
            raise
        wall = time.perf_counter() - start
        timer.cancel()
        sampler.stop()
        # Pool workers or a fixit child that outlive their parent are ours to end.
        _killpg(proc.pid)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    peak_proc = int(usage.ru_maxrss)  # KiB on Linux
    return Sample(
        wall_s=wall,
        rc=proc.returncode,
        peak_tree_kb=max(sampler.peak_kb, peak_proc),
        peak_proc_kb=peak_proc,
        max_procs=sampler.max_procs,
        timed_out=timed_out.is_set(),
        cpu_s=usage.ru_utime + usage.ru_stime,
        stdout=stdout,
        stderr_tail=stderr[-2000:],
    )


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ----------------------------------------------------------------------------- environment


def _run_quiet(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def _pyproject_hash() -> str:
    return hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()


def _create_venv(venv: Path, log: Callable[[str], None]) -> None:
    if not (venv / "bin" / "python").exists():
        log(f"creating {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)


def ensure_venv(log: Callable[[str], None]) -> tuple[Path, list[str]]:
    """bench/.venv with `.[bench]` installed; reinstalls when pyproject.toml changed."""
    python = VENV / "bin" / "python"
    marker = VENV / ".bench-installed"
    problems: list[str] = []
    if python.exists() and _run_quiet([str(python), "-c", "import torchfix"]).returncode == 0:
        # Made by an older bench/run.py that put the peers here: TorchFix's libcst pin
        # would stay, so start over.
        log(f"recreating {VENV} without the peers (they now live in {PEER_VENV.name})")
        shutil.rmtree(VENV)
    _create_venv(VENV, log)
    if not marker.exists() or marker.read_text().strip() != _pyproject_hash():
        log("installing reshard-lint[bench] into bench/.venv (pip install -e .[bench])")
        done = _run_quiet([str(python), "-m", "pip", "install", "-q", "-e", f"{REPO}[bench]"])
        if done.returncode != 0:
            raise SystemExit(f"pip install -e .[bench] failed:\n{done.stderr[-4000:]}")
        for extra in EXTRA_USER_INSTALLS:
            got = _run_quiet([str(python), "-m", "pip", "install", "-q", extra])
            if got.returncode != 0:
                problems.append(f"optional {extra} did not install: {got.stderr.strip()[-300:]}")
                log(problems[-1])
        marker.write_text(_pyproject_hash() + "\n")
    return python, problems


def ensure_peer_venv(flake8_version: str | None, log: Callable[[str], None]) -> tuple[Path, list[str]]:
    """bench/.venv-peers with TorchFix, fixit and the tool environment's flake8 version."""
    python = PEER_VENV / "bin" / "python"
    wanted = [*PEER_PACKAGES, f"flake8=={flake8_version}" if flake8_version else "flake8"]
    marker = PEER_VENV / ".bench-installed"
    _create_venv(PEER_VENV, log)
    if not marker.exists() or marker.read_text().strip() != " ".join(wanted):
        log(f"installing {' '.join(wanted)} into {PEER_VENV.name}")
        done = _run_quiet([str(python), "-m", "pip", "install", "-q", *wanted])
        if done.returncode != 0:
            return python, [f"peers did not install: {done.stderr.strip()[-300:]}"]
        marker.write_text(" ".join(wanted) + "\n")
    return python, []


def versions_text(python: Path, versions: dict[str, str]) -> str:
    return f"{python} ({', '.join(f'{k} {v}' for k, v in versions.items())})"


def tool_versions(python: Path) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, json\n"
        "out = {}\n"
        "for d in ('flake8','pyflakes','pycodestyle','libcst','reshard-lint','torchfix','fixit','jax',"
        "'flax','optax','orbax-checkpoint','chex','jraph'):\n"
        "    try: out[d] = m.version(d)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(out))\n"
    )
    # Not from the repository: its reshard_lint.egg-info would be found on sys.path[0].
    done = _run_quiet([str(python), "-c", code], cwd=tempfile.gettempdir())
    return json.loads(done.stdout) if done.returncode == 0 else {}


def package_dirs(python: Path, names: Iterable[str]) -> dict[str, str]:
    code = (
        "import importlib.util, json, sys\n"
        "out = {}\n"
        "for name in sys.argv[1:]:\n"
        "    try: spec = importlib.util.find_spec(name)\n"
        "    except Exception: spec = None\n"
        "    if spec is not None and spec.submodule_search_locations:\n"
        "        out[name] = list(spec.submodule_search_locations)[0]\n"
        "print(json.dumps(out))\n"
    )
    done = _run_quiet([str(python), "-c", code, *names])
    return json.loads(done.stdout) if done.returncode == 0 else {}


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["mem_total_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return info


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


def py_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _engine_prefilter() -> Callable[[str], bool] | None:
    """The engine's own text prefilter, when this checkout has one (stdlib-only module)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    try:
        from reshard_lint.gate import prefilter  # type: ignore[import-not-found]
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


# ----------------------------------------------------------------------------- commands


@dataclass
class Command:
    key: str
    label: str
    role: str  # baseline | ours | peer
    argv: Callable[[Tree], list[str]]
    prepare: Callable[[Tree], None] | None = None
    on_scale_trees: bool = False


@dataclass
class Capabilities:
    rsh_plugin: bool = False
    rsh_cli: bool = False
    rsh_cli_help: str = ""
    cache_dir_flag: bool = False
    no_cache_flag: bool = False
    isolated_flag: bool = False
    torchfix: bool = False
    fixit: bool = False
    notes: list[str] = field(default_factory=list)


def _script(python: Path, name: str) -> Path | None:
    # Not resolved: a venv's python is a symlink and its scripts sit beside the link.
    candidate = python.parent / name
    return candidate if candidate.exists() else None


def rsh_base_argv(python: Path) -> list[str]:
    script = _script(python, "reshard-lint")
    if script is not None:
        return [str(script)]
    return [str(python), "-c", "import sys; from reshard_lint.cli import main; sys.exit(main())"]


def flake8_argv(python: Path, keep: str, jobs: int, select: str) -> list[str]:
    keep_args = ["--keep", keep] if keep else []
    return [
        str(python),
        str(LAUNCHER),
        *keep_args,
        "--",
        "--isolated",
        f"-j{jobs}",
        f"--select={select}",
        "--format=%(path)s:%(row)d:%(col)d: %(code)s %(text)s",
        ".",
    ]


def detect(python: Path, peers: frozenset[str], peer_python: Path | None = None) -> Capabilities:
    peer_python = peer_python or python
    caps = Capabilities()
    got = _run_quiet([str(python), str(LAUNCHER), "--keep", "RSH", "--", "--version"])
    caps.rsh_plugin = got.returncode == 0 and "reshard" in got.stdout.lower()
    if not caps.rsh_plugin:
        caps.notes.append("flake8 RSH plugin not loadable: " + (got.stderr.strip().splitlines() or ["?"])[-1])
    got = _run_quiet([*rsh_base_argv(python), "check", "--help"])
    caps.rsh_cli = got.returncode == 0
    if caps.rsh_cli:
        caps.rsh_cli_help = got.stdout
        caps.cache_dir_flag = "--cache-dir" in got.stdout
        caps.no_cache_flag = "--no-cache" in got.stdout
        caps.isolated_flag = "--isolated" in got.stdout
    else:
        caps.notes.append(
            "reshard-lint check not available: " + (got.stderr.strip().splitlines() or ["?"])[-1]
        )
    if "torchfix" in peers:
        got = _run_quiet([str(peer_python), str(LAUNCHER), "--keep", "TOR", "--", "--version"])
        caps.torchfix = got.returncode == 0 and "torchfix" in got.stdout.lower()
        if not caps.torchfix:
            caps.notes.append("TorchFix flake8 plugin not available")
    if "fixit" in peers:
        got = _run_quiet([str(peer_python), "-m", "fixit", "--version"])
        caps.fixit = got.returncode == 0
        if not caps.fixit:
            caps.notes.append("fixit not available")
    return caps


def make_commands(python: Path, caps: Capabilities, cache_root: Path,
                  peer_python: Path | None = None) -> list[Command]:
    peer = peer_python or python
    cmds = [
        Command(
            "flake8_j2_F",
            "flake8 -j2 --select=F",
            "baseline",
            lambda t: flake8_argv(python, "", 2, "F"),
            on_scale_trees=True,
        ),
    ]
    if caps.rsh_plugin:
        cmds.append(
            Command(
                "flake8_j2_F_RSH",
                "flake8 -j2 --select=F,RSH",
                "ours",
                lambda t: flake8_argv(python, "RSH", 2, "F,RSH"),
                on_scale_trees=True,
            )
        )
    cmds.append(
        Command("flake8_j1_F", "flake8 -j1 --select=F", "baseline", lambda t: flake8_argv(python, "", 1, "F"))
    )
    if caps.rsh_cli:
        # --isolated for the same reason flake8 gets it: no config from around the corpus.
        rsh = [*rsh_base_argv(python), "check", *(["--isolated"] if caps.isolated_flag else [])]

        def cache_dir(t: Tree) -> Path:
            return cache_root / t.name

        def clear(t: Tree) -> None:
            shutil.rmtree(cache_dir(t), ignore_errors=True)

        if caps.cache_dir_flag:
            # Cold = an empty cache dir, as on a user's first run: it pays for writing the
            # cache, and it leaves the cache that the warm run right after it reads.
            cmds.append(
                Command(
                    "rsh_cold",
                    "reshard-lint check (cold)",
                    "ours",
                    lambda t: [*rsh, "--cache-dir", str(cache_dir(t)), "."],
                    prepare=clear,
                    on_scale_trees=True,
                )
            )
            cmds.append(
                Command(
                    "rsh_warm",
                    "reshard-lint check (warm)",
                    "ours",
                    lambda t: [*rsh, "--cache-dir", str(cache_dir(t)), "."],
                )
            )
        elif caps.no_cache_flag:
            cmds.append(
                Command(
                    "rsh_cold",
                    "reshard-lint check --no-cache",
                    "ours",
                    lambda t: [*rsh, "--no-cache", "."],
                    on_scale_trees=True,
                )
            )
            # The tool's default cache location: primed by an untimed run (see run_all).
            cmds.append(
                Command("rsh_warm", "reshard-lint check (warm, default cache)", "ours", lambda t: [*rsh, "."])
            )
        else:
            cmds.append(
                Command("rsh_cold", "reshard-lint check", "ours", lambda t: [*rsh, "."], on_scale_trees=True)
            )
    if caps.torchfix:
        # F is kept on, like ours: what a user pays for adding the plugin to their flake8.
        cmds.append(
            Command(
                "torchfix_j2",
                "flake8 -j2 --select=F,TOR (TorchFix)",
                "peer",
                lambda t: flake8_argv(peer, "TOR", 2, "F,TOR"),
            )
        )
    if caps.fixit:
        cmds.append(
            Command(
                "fixit",
                "fixit lint (built-in rules)",
                "peer",
                lambda t: [str(peer), "-m", "fixit", "lint", "."],
            )
        )
    return cmds


# ----------------------------------------------------------------------------- diagnostics


def parse_diags(stdout: str, prefix: str | None) -> set[tuple[str, int, int, str]]:
    out: set[tuple[str, int, int, str]] = set()
    for line in stdout.splitlines():
        m = DIAG_RE.match(line.strip())
        if not m:
            continue
        code = m.group("code")
        if prefix is not None and not code.startswith(prefix):
            continue
        out.add((os.path.normpath(m.group("path")), int(m.group("line")), int(m.group("col")), code))
    return out


def compare_diags(tree: Tree, first: dict[str, Sample]) -> dict[str, Any] | None:
    """Does adding RSH to flake8 lose nothing, and do flake8 and the CLI agree?"""
    rec: dict[str, Any] = {}
    base, ours = first.get("flake8_j2_F"), first.get("flake8_j2_F_RSH")
    if base and ours:
        f_base, f_ours = parse_diags(base.stdout, "F"), parse_diags(ours.stdout, "F")
        rec["F_count"] = len(f_base)
        rec["F_equal_with_RSH_on"] = f_base == f_ours
    cli_cold, cli_warm = first.get("rsh_cold"), first.get("rsh_warm")
    if ours:
        rec["RSH_flake8_count"] = len(parse_diags(ours.stdout, "RSH"))
    if cli_cold:
        cold = parse_diags(cli_cold.stdout, "RSH")
        rec["RSH_cli_count"] = len(cold)
        codes: dict[str, int] = {}
        for d in cold:
            codes[d[3]] = codes.get(d[3], 0) + 1
        rec["RSH_cli_by_code"] = dict(sorted(codes.items()))
        if ours:
            plugin = parse_diags(ours.stdout, "RSH")
            rec["RSH_flake8_equals_cli"] = plugin == cold
            rec["only_in_flake8"] = sorted(":".join(map(str, d)) for d in plugin - cold)[:10]
            rec["only_in_cli"] = sorted(":".join(map(str, d)) for d in cold - plugin)[:10]
        if cli_warm:
            rec["RSH_warm_equals_cold"] = parse_diags(cli_warm.stdout, "RSH") == cold
    return rec or None


# ----------------------------------------------------------------------------- running


@dataclass
class Result:
    tree: str
    command: str
    label: str
    role: str
    walls_s: list[float] = field(default_factory=list)
    # user+sys of the whole process tree: less sensitive than wall time to other load
    # on the machine, and the number to look at when asking where time goes.
    cpus_s: list[float] = field(default_factory=list)
    median_cpu_s: float | None = None
    peak_mb: float = 0.0
    peak_proc_mb: float = 0.0
    max_procs: int = 0
    status: str = "ok"  # ok | error | timeout
    detail: str = ""
    median_wall_s: float | None = None
    files_per_s: float | None = None
    lines_per_s: float | None = None
    ratio_vs_flake8_j2_F: float | None = None


def run_all(
    trees: list[Tree],
    commands: list[Command],
    repeat: int,
    peer_repeat: int,
    timeout: float,
    peer_timeout: float,
    log: Callable[[str], None],
) -> tuple[dict[tuple[str, str], Result], dict[str, Any]]:
    results: dict[tuple[str, str], Result] = {}
    first: dict[str, dict[str, Sample]] = {t.name: {} for t in trees}
    primed: set[str] = set()
    for rep in range(repeat):
        for tree in trees:
            for cmd in commands:
                if tree.scale and not cmd.on_scale_trees:
                    continue
                if cmd.role == "peer" and rep >= peer_repeat:
                    continue
                if tree.check_only and (rep > 0 or cmd.key not in AGREEMENT_COMMANDS):
                    continue
                res = results.setdefault(
                    (tree.name, cmd.key), Result(tree.name, cmd.key, cmd.label, cmd.role)
                )
                if res.status != "ok":
                    continue  # a command that failed or timed out once is not retried
                if cmd.key == "rsh_warm" and "--cache-dir" not in cmd.argv(tree) and tree.name not in primed:
                    measure(cmd.argv(tree), tree.path, timeout)
                    primed.add(tree.name)
                if cmd.prepare:
                    cmd.prepare(tree)
                limit = peer_timeout if cmd.role == "peer" else timeout
                sample = measure(cmd.argv(tree), tree.path, limit)
                ok_rcs = {0, 1} if cmd.key != "fixit" else {0, 1, 2}
                if sample.timed_out:
                    res.status, res.detail = "timeout", f"> {limit:.0f} s"
                elif sample.rc not in ok_rcs or "Traceback (most recent call last)" in sample.stderr_tail:
                    res.status = "error"
                    res.detail = (
                        f"rc={sample.rc}: " + (sample.stderr_tail.strip().splitlines() or [""])[-1][:200]
                    )
                res.walls_s.append(round(sample.wall_s, 4))
                res.cpus_s.append(round(sample.cpu_s, 4))
                res.peak_mb = max(res.peak_mb, round(sample.peak_tree_kb / 1024, 1))
                res.peak_proc_mb = max(res.peak_proc_mb, round(sample.peak_proc_kb / 1024, 1))
                res.max_procs = max(res.max_procs, sample.max_procs)
                if rep == 0:
                    first[tree.name][cmd.key] = sample
                log(
                    f"rep {rep + 1}/{repeat} {tree.name:<10} {cmd.key:<16} {sample.wall_s:8.2f} s "
                    f"{sample.peak_tree_kb / 1024:8.1f} MB rc={sample.rc}"
                    + (f" [{res.status}]" if res.status != "ok" else "")
                )
    by_tree = {t.name: t for t in trees}
    for (tname, _key), res in results.items():
        if res.walls_s and res.status == "ok":
            res.median_wall_s = round(statistics.median(res.walls_s), 4)
            res.median_cpu_s = round(statistics.median(res.cpus_s), 4)
            res.files_per_s = round(by_tree[tname].files / res.median_wall_s, 1)
            res.lines_per_s = round(by_tree[tname].lines / res.median_wall_s, 1)
    for (tname, key), res in results.items():
        base = results.get((tname, "flake8_j2_F"))
        if res.median_wall_s and base and base.median_wall_s:
            res.ratio_vs_flake8_j2_F = round(res.median_wall_s / base.median_wall_s, 3)
    diags = {}
    for t in trees:
        rec = compare_diags(t, first[t.name])
        if rec:
            diags[t.name] = rec
    return results, diags


# ----------------------------------------------------------------------------- targets


@dataclass
class Target:
    name: str
    measured: float | int | None  # int: a count of diagnostics
    limit: float
    unit: str
    status: str  # MET | NOT MET | N/A
    note: str = ""


def _judge(
    name: str, measured: float | None, limit: float, unit: str, higher_is_better: bool = False, note: str = ""
) -> Target:
    if measured is None:
        return Target(name, None, limit, unit, "N/A", note or "not measured")
    ok = measured >= limit if higher_is_better else measured <= limit
    return Target(name, round(measured, 3), limit, unit, "MET" if ok else "NOT MET", note)


def evaluate(
    trees: list[Tree], results: dict[tuple[str, str], Result], diags: dict[str, Any]
) -> list[Target]:
    def med(t: str, k: str) -> float | None:
        r = results.get((t, k))
        return r.median_wall_s if r and r.status == "ok" else None

    def cpu(t: str, k: str) -> float | None:
        r = results.get((t, k))
        return r.median_cpu_s if r and r.status == "ok" else None

    def peak(t: str, k: str) -> float | None:
        r = results.get((t, k))
        return r.peak_mb if r and r.status == "ok" and r.walls_s else None

    out: list[Target] = []
    names = [t.name for t in trees if not t.scale and not t.check_only]
    for t in [*names, *(t.name for t in trees if t.check_only)]:
        base, ours = med(t, "flake8_j2_F"), med(t, "flake8_j2_F_RSH")
        cpu_base, cpu_ours = cpu(t, "flake8_j2_F"), cpu(t, "flake8_j2_F_RSH")
        if t in names:
            out.append(
                _judge(
                    f"{t}: flake8 -j2 F,RSH / F",
                    ours / base if ours and base else None,
                    TARGET_FLAKE8_RATIO,
                    "x",
                    note=f"CPU-time ratio {cpu_ours / cpu_base:.3f}x" if cpu_ours and cpu_base else "",
                )
            )
        d = diags.get(t, {})
        same = d.get("RSH_flake8_equals_cli")
        f_same = d.get("F_equal_with_RSH_on")
        if same is None or f_same is None:
            out.append(
                Target(
                    f"{t}: every diagnostic still found",
                    None,
                    1,
                    "",
                    "N/A",
                    "needs both the flake8 plugin and the CLI",
                )
            )
        else:
            out.append(
                Target(
                    f"{t}: every diagnostic still found",
                    d.get("RSH_cli_count", 0),
                    0,
                    "",
                    "MET" if same and f_same and d.get("RSH_warm_equals_cold", True) else "NOT MET",
                    f"RSH flake8={d.get('RSH_flake8_count')} cli={d.get('RSH_cli_count')}; "
                    f"F unchanged={f_same}; warm==cold={d.get('RSH_warm_equals_cold')}",
                )
            )
    jax = "jax" if "jax" in names else (names[0] if names else "")
    if jax:
        for key, limit in (("rsh_cold", TARGET_COLD_S), ("rsh_warm", TARGET_WARM_S)):
            c = cpu(jax, key)
            out.append(
                _judge(
                    f"{jax}: reshard-lint check {key[4:]}",
                    med(jax, key),
                    limit,
                    "s",
                    note=f"CPU {c:.2f} s" if c is not None else "",
                )
            )
        for t in names:
            ours, base = peak(t, "rsh_cold"), peak(t, "flake8_j1_F")
            out.append(
                _judge(
                    f"{t}: peak RSS check / flake8 -j1 F",
                    ours / base if ours and base else None,
                    TARGET_MEM_RATIO,
                    "x",
                )
            )
    # Judged on lines per CPU second: the cost, which is what must grow linearly; wall
    # time on a shared machine also measures everyone else. The wall ratio is in the note.
    by_scale = {t.scale: t for t in trees if t.scale}
    for key in ("rsh_cold", "flake8_j2_F_RSH"):
        t1 = by_scale.get(1)
        r1 = results.get((t1.name, key)) if t1 else None
        for factor in SCALE_FACTORS[1:]:
            tn = by_scale.get(factor)
            rn = results.get((tn.name, key)) if tn else None
            name = f"linear: {key} lines per CPU s at {factor}x / 1x"
            if t1 and tn and r1 and rn and r1.median_cpu_s and rn.median_cpu_s and r1.lines_per_s:
                measured = (tn.lines / rn.median_cpu_s) / (t1.lines / r1.median_cpu_s)
                wall = f"wall lines/s ratio {rn.lines_per_s / r1.lines_per_s:.2f}x" if rn.lines_per_s else ""
                out.append(_judge(name, measured, TARGET_LINEAR_MIN, "x", higher_is_better=True, note=wall))
            else:
                out.append(Target(name, None, TARGET_LINEAR_MIN, "x", "N/A", "not measured"))
    return out


# ----------------------------------------------------------------------------- report


def _fmt(v: float | None, digits: int = 2) -> str:
    if v is None:
        return "-"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def render(
    trees: list[Tree], results: dict[tuple[str, str], Result], targets: list[Target], diags: dict[str, Any]
) -> str:
    parts = [
        "Trees",
        _table(
            ["tree", "files", "lines", "MB", *PREFILTER_WORDS, "any of the first 4", "pass gate.prefilter"],
            [
                [
                    t.name,
                    str(t.files),
                    f"{t.lines:,}",
                    f"{t.bytes / 1e6:.1f}",
                    *(str(t.contains.get(w, 0)) for w in PREFILTER_WORDS),
                    str(t.contains.get("any_core", 0)),
                    str(t.contains.get("engine_prefilter", "-")),
                ]
                for t in trees
            ],
        ),
    ]
    target_of = {
        "flake8_j2_F_RSH": f"<= {TARGET_FLAKE8_RATIO:.2f}x",
        "rsh_cold": f"<= {TARGET_COLD_S:g} s (jax); mem <= {TARGET_MEM_RATIO:g}x j1",
        "rsh_warm": f"<= {TARGET_WARM_S:g} s (jax)",
    }
    rows = []
    for t in trees:
        for (tname, key), r in results.items():
            if tname != t.name:
                continue
            rows.append(
                [
                    t.name,
                    r.label,
                    _fmt(r.median_wall_s),
                    _fmt(r.median_cpu_s),
                    str(len(r.walls_s)),
                    _fmt(r.files_per_s, 1),
                    _fmt(r.lines_per_s, 0),
                    _fmt(r.peak_mb, 1),
                    _fmt(r.peak_proc_mb, 1),
                    _fmt(r.ratio_vs_flake8_j2_F, 2) + ("x" if r.ratio_vs_flake8_j2_F else ""),
                    target_of.get(key, r.role),
                    r.status + (f" ({r.detail})" if r.detail else ""),
                ]
            )
    parts += [
        "",
        "Measurements (median wall over repetitions; peak MB = largest over repetitions)",
        _table(
            [
                "tree",
                "command",
                "median s",
                "cpu s",
                "n",
                "files/s",
                "lines/s",
                "peak MB",
                "proc MB",
                "vs flake8 -j2 F",
                "target",
                "status",
            ],
            rows,
        ),
    ]
    parts += [
        "",
        "Targets",
        _table(
            ["target", "measured", "limit", "status", "note"],
            [
                [
                    x.name,
                    (str(x.measured) if isinstance(x.measured, int) else _fmt(x.measured, 3))
                    + (x.unit if x.measured is not None else ""),
                    f"{x.limit:g}{x.unit}" if x.unit else "equal sets",
                    x.status,
                    x.note,
                ]
                for x in targets
            ],
        ),
    ]
    if diags:
        parts += [
            "",
            "Diagnostics",
            _table(
                [
                    "tree",
                    "F (flake8)",
                    "F same with RSH on",
                    "RSH flake8",
                    "RSH cli",
                    "flake8 == cli",
                    "warm == cold",
                    "by code",
                ],
                [
                    [
                        t,
                        str(d.get("F_count", "-")),
                        str(d.get("F_equal_with_RSH_on", "-")),
                        str(d.get("RSH_flake8_count", "-")),
                        str(d.get("RSH_cli_count", "-")),
                        str(d.get("RSH_flake8_equals_cli", "-")),
                        str(d.get("RSH_warm_equals_cold", "-")),
                        json.dumps(d.get("RSH_cli_by_code", {})),
                    ]
                    for t, d in diags.items()
                ],
            ),
        ]
    return "\n".join(parts)


# ----------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="small trees, 1 repetition (smoke run)")
    p.add_argument(
        "--repeat", type=int, default=None, help="repetitions of every command (default 3; --quick 1)"
    )
    env = p.add_mutually_exclusive_group()
    env.add_argument("--python", type=Path, help="run the tools with that interpreter's environment")
    env.add_argument(
        "--no-venv", action="store_true", help="run the tools with this interpreter's environment"
    )
    p.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="corpus root (default bench/corpus/full, or bench/corpus/quick with --quick; built from "
        "installed packages). A directory of .py files without a manifest is used as it is: each "
        "subdirectory is a tree",
    )
    p.add_argument(
        "--rerender", type=Path, metavar="JSON", help="run nothing: report again from a results JSON"
    )
    p.add_argument("--rebuild-corpus", action="store_true", help="rebuild the corpus even if it is current")
    p.add_argument("--no-peers", action="store_true", help="skip TorchFix and fixit")
    p.add_argument("--peer-python", type=Path,
                   help="run TorchFix and fixit with that interpreter (default bench/.venv-peers)")
    p.add_argument("--peers", default="torchfix,fixit", help="which peers to run (default torchfix,fixit)")
    p.add_argument(
        "--no-examples",
        action="store_true",
        help="skip the tree of the rules' example programs (the agreement check with findings)",
    )
    p.add_argument(
        "--peer-repeat",
        type=int,
        default=1,
        help="repetitions of the peers (default 1: fixit alone takes ~5 min on the jax tree, "
        "and a reference number more than 10x off needs no median)",
    )
    p.add_argument("--timeout", type=float, default=None, help="seconds per run (default 600; --quick 120)")
    p.add_argument(
        "--peer-timeout", type=float, default=None, help="seconds per peer run (default 300; --quick 60)"
    )
    p.add_argument(
        "--scales",
        default=",".join(map(str, SCALE_FACTORS)),
        help="scale factors of the linearity trees, first one 1 (default 1,4,16)",
    )
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write the results JSON")
    return p.parse_args(argv)


def rerender(src: Path, dest: Path) -> int:
    """Targets and table again from a results JSON (e.g. after a change to the report)."""
    data = json.loads(src.read_text())
    trees = [Tree(**{**t, "path": Path(t["path"])}) for t in data["trees"]]
    fields = set(Result.__dataclass_fields__)
    results = {
        (r["tree"], r["command"]): Result(**{k: v for k, v in r.items() if k in fields})
        for r in data["results"]
    }
    global SCALE_FACTORS
    SCALE_FACTORS = tuple(data["settings"].get("scale_factors", SCALE_FACTORS))
    targets = evaluate(trees, results, data["diagnostics"])
    report = render(trees, results, targets, data["diagnostics"])
    print(report)
    data["targets"] = [asdict(t) for t in targets]
    data["table"] = report
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(data, indent=2) + "\n")
    print(f"\nresults JSON: {dest}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.rerender:
        return rerender(args.rerender, args.json)
    global SCALE_FACTORS
    SCALE_FACTORS = tuple(int(x) for x in args.scales.split(","))
    if SCALE_FACTORS[0] != 1:
        raise SystemExit("--scales must start with 1")
    started = time.time()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    def log(msg: str) -> None:
        print(f"[bench {time.time() - started:6.1f}s] {msg}", file=sys.stderr, flush=True)

    repeat = args.repeat or (1 if args.quick else 3)
    peer_repeat = min(repeat, args.peer_repeat)
    timeout = args.timeout or (120.0 if args.quick else 600.0)
    peer_timeout = args.peer_timeout or (60.0 if args.quick else 300.0)
    problems: list[str] = []
    if args.python:
        python = args.python.absolute()
    elif args.no_venv:
        python = Path(sys.executable)
    else:
        python, problems = ensure_venv(log)
    versions = tool_versions(python)
    log(f"tool environment: {versions_text(python, versions)}")

    scratch = Path(tempfile.mkdtemp(prefix="rsh-bench-"))
    try:
        corpus = (
            args.corpus.absolute() if args.corpus else DEFAULT_CORPUS / ("quick" if args.quick else "full")
        )
        managed = not corpus.exists() or (corpus / "manifest.json").exists() or not any(corpus.rglob("*.py"))
        if managed:
            trees, manifest = build_managed_corpus(corpus, python, args.quick, args.rebuild_corpus, log)
        else:
            trees, manifest = given_corpus(corpus, scratch)
        for t in trees:
            log(f"tree {t.name}: {t.files} files, {t.lines:,} lines")
        peers = frozenset() if args.no_peers else frozenset(x for x in args.peers.split(",") if x)
        peer_python, peer_versions = python, versions
        if peers and args.peer_python:
            peer_python = args.peer_python.absolute()
        elif peers and not args.no_venv:
            peer_python, peer_problems = ensure_peer_venv(versions.get("flake8"), log)
            problems += peer_problems
        if peer_python != python:
            peer_versions = tool_versions(peer_python)
            log(f"peer environment: {versions_text(peer_python, peer_versions)}")
        caps = detect(python, peers, peer_python)
        for note in caps.notes:
            log(note)
        examples = (
            examples_tree(python, scratch / "examples-tree")
            if (caps.rsh_cli or caps.rsh_plugin) and not args.no_examples
            else None
        )
        if examples is not None:
            trees.append(examples)
            log(f"tree examples: {examples.files} rule example programs")
        commands = make_commands(python, caps, scratch / "cache", peer_python)
        # Byte-compiles each tool and fails fast on a broken command before the timed runs;
        # a --quick run measures nothing worth that.
        warm_tree = Tree("warmup", scratch / "warmup")
        (warm_tree.path / "pkg").mkdir(parents=True)
        (warm_tree.path / "pkg" / "mod.py").write_text(
            # A finding, so that the warm-up goes through the whole engine, libcst and rules.
            "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n\n"
            "mesh = Mesh(np.array(jax.devices()[::-1]), ('x',))\n"
        )
        for cmd in commands if not args.quick else ():
            measure(cmd.argv(warm_tree), warm_tree.path, timeout)
        load_before = os.getloadavg()
        if load_before[0] > 0.5 * (os.cpu_count() or 1):
            log(
                f"warning: load average {load_before[0]:.2f} before the run: other work on this machine "
                "makes wall times noisy (CPU seconds are reported too)"
            )
        results, diags = run_all(trees, commands, repeat, peer_repeat, timeout, peer_timeout, log)
        load_after = os.getloadavg()
        targets = evaluate(trees, results, diags)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    report = render(trees, results, targets, diags)
    envs = f"Tools: {versions_text(python, versions)}"
    if peer_python != python:
        envs += f"\nPeers: {versions_text(peer_python, peer_versions)}"
    report = envs + "\n\n" + report
    print(report)
    payload = {
        "schema": 1,
        "when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "tool_python": str(python),
        "versions": versions,
        "peer_python": str(peer_python),
        "peer_versions": peer_versions,
        "load_average": {"before": load_before, "after": load_after},
        "settings": {
            "repeat": repeat,
            "peer_repeat": peer_repeat,
            "quick": args.quick,
            "timeout_s": timeout,
            "peer_timeout_s": peer_timeout,
            "peers": sorted(peers),
            "corpus": str(corpus),
            "scale_factors": list(SCALE_FACTORS),
        },
        "capabilities": {k: v for k, v in asdict(caps).items() if k != "rsh_cli_help"},
        "setup_problems": problems,
        "corpus": manifest,
        "trees": [{**asdict(t), "path": str(t.path)} for t in trees],
        "results": [asdict(r) for r in results.values()],
        "diagnostics": diags,
        "targets": [asdict(t) for t in targets],
        "table": report,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"\nresults JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
