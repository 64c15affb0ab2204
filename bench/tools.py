"""The tools compared: the environments they run in (bench/.venv, bench/.venv-peers),
what each environment can run, and the command line of every measured command."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from trees import Tree

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
VENV = BENCH / ".venv"
PEER_VENV = BENCH / ".venv-peers"
PEER_PACKAGES = ("torchfix", "fixit")
LAUNCHER = BENCH / "flake8_plugins.py"
# Not in the `bench` extra (optional, cheap): installed best effort into bench/.venv.
EXTRA_USER_INSTALLS = ("chex", "jraph")


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


def compile_bytecode(python: Path, log: Callable[[str], None]) -> str | None:
    """Byte-compile reshard_lint as installed for the tool environment, as a user's install has
    it: pip compiles a wheel at install time and Python writes the cache of an editable
    install on its first import. This machine sets PYTHONDONTWRITEBYTECODE, so without this
    step every process of the editable install would compile the package from source
    (0.1-0.17 s per flake8 worker here) while flake8 and pyflakes, installed as wheels,
    would not. Returns a note when the step failed."""
    done = _run_quiet([str(python), "-m", "compileall", "-q", str(REPO / "reshard_lint")])
    if done.returncode != 0:
        return "compileall of reshard_lint failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    log("reshard_lint byte-compiled (compileall) for the tool environment")
    return None


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
    ruff: list[str] = field(default_factory=list)  # how to run ruff, when it is installed
    notes: list[str] = field(default_factory=list)


AST_PARSE_ALL = (
    "import ast, pathlib\n"
    "for p in sorted(pathlib.Path('.').rglob('*.py')):\n"
    "    if '__pycache__' in p.parts: continue\n"
    "    try: ast.parse(p.read_bytes())\n"
    "    except (SyntaxError, ValueError): pass\n"
)


def _script(python: Path, name: str) -> Path | None:
    # Not resolved: a venv's python is a symlink and its scripts sit beside the link.
    candidate = python.parent / name
    return candidate if candidate.exists() else None


def rsh_base_argv(python: Path) -> list[str]:
    script = _script(python, "reshard-lint")
    if script is not None:
        return [str(script)]
    return [str(python), "-c", "import sys; from reshard_lint.frontends.cli import main; sys.exit(main())"]


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
    ruff = _script(python, "ruff")
    ruff_argv = [str(ruff)] if ruff is not None else [str(python), "-m", "ruff"]
    got = _run_quiet([*ruff_argv, "--version"])
    if got.returncode == 0:
        caps.ruff = ruff_argv
    else:
        caps.notes.append("ruff not installed in the tool environment (pip install -e .[bench]): no ruff anchor")
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
    # What Python itself takes to read the tree: ast.parse of every file, one process.
    cmds.append(Command("ast_parse_all", "python: ast.parse every file", "baseline",
                        lambda t: [str(python), "-c", AST_PARSE_ALL]))
    if caps.ruff:
        # The modern speed anchor: pyflakes' checks, in Rust. No cache, no config, like the others.
        cmds.append(Command("ruff_F", "ruff check --select F", "anchor", lambda t: [
            *caps.ruff, "check", "--select", "F", "--isolated", "--no-cache", "--exit-zero",
            "--output-format", "concise", "."]))
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
