"""Every command line in docs/usage/ and the README runs against the real programs.

Commands come from ```sh / ```bash / ```console blocks, from `run:` steps of workflow
YAML, from pre-commit configs (their hooks' entries and `args:`), from editor settings
(JSON, Lua, TOML, Emacs Lisp) and from `[flake8]` INI sections. `reshard-lint` and
`flake8` commands are run in a small fixture directory: exit status 2 or an argparse
complaint fails the test, so a doc that names a flag the programs do not have fails here.
`pip` commands are run in a new virtual environment, with a copy of this tree where the
docs write a clone's path (CLONE). `pre-commit` commands are checked against
`pre-commit SUBCOMMAND --help` here and run, with the configurations of pre-commit.md, by
tests/integrations/test_precommit.py. Every other command must be in RUN_ELSEWHERE or
NOT_RUN with the reason, so a new kind of command cannot slip in unexamined.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import yaml

from reshard_lint.frontends.lsp import Settings
from reshard_lint.rules import rule_by_code

from ..conftest import ROOT, tool

USAGE = ROOT / "docs" / "usage"
README = ROOT / "README.md"
SHELL_INFOS = {"sh", "bash", "shell", "console", "zsh"}
# What the docs write for the path of a clone of reshard-lint's repository (no package
# index serves it yet); the tests put a copy of this tree there.
CLONE = "/path/to/reshard-lint"
# Where a workflow of github-actions.md finds the copy, in the repository it checks.
VENDORED = "./tools/reshard-lint"
# The hosted form of pre-commit.md, whose URL and tag do not exist yet.
HOSTED_URL = "<the repository's URL>"
# Commands run as written by another test (the key: the command's words joined by spaces).
RUN_ELSEWHERE: dict[str, str] = {
    "python3 -m venv .venv": "tests/test_quickstart.py::test_example_command_runs_on_a_copy (slow)",
    ".venv/bin/pip install -q .": "tests/test_quickstart.py::test_example_command_runs_on_a_copy (slow)",
    ".venv/bin/reshard-lint check --exit-zero examples/":
        "tests/test_quickstart.py::test_example_command_runs_on_a_copy (slow)",
    ".venv/bin/pip install -q -e .[test]": ".ci/run (CI) runs the README's test command as written; "
                                           "tests/test_quickstart.py checks the two match",
    ".venv/bin/python -m pytest": ".ci/run (CI) runs the README's test command as written",
}
# Commands no test runs, and why.
NOT_RUN: dict[str, str] = {
    "python bench/run.py": "the benchmark takes about ten minutes on two idle cores; "
                           "tests/test_bench_smoke.py runs bench/run.py on a tiny corpus",
}
# The docs whose pre-commit commands tests/integrations/test_precommit.py runs.
PRECOMMIT_DOCS = {"pre-commit.md", "github-actions.md"}
# What argparse, optparse and our own config checks print when a command line is wrong.
USAGE_ERRORS = ("unrecognized arguments", "invalid choice", "error: argument", "no such option",
                "unknown option", "expected one argument", "the following arguments are required")

_RULE = rule_by_code("RSH201")
assert _RULE is not None
BUGGY = re.sub(r"  # RSH\d{3}:\d+$", "", _RULE.firing()[0].code, flags=re.MULTILINE)


@dataclass(frozen=True)
class Command:
    where: str  # file:line, for the test id and messages
    argv: tuple[str, ...]
    stdin: str = ""


# --- extraction ------------------------------------------------------------------------------

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[\w.+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                    re.MULTILINE | re.DOTALL)


def blocks(path: Path) -> Iterator[tuple[str, int, str]]:
    """(info string, line of the first body line, dedented body) of each fenced block."""
    text = path.read_text(encoding="utf-8")
    for m in _FENCE.finditer(text):
        indent = m.group("indent")
        body = "".join(line[len(indent):] if line.startswith(indent) else line
                       for line in m.group("body").splitlines(keepends=True))
        yield m.group("info").lower(), text.count("\n", 0, m.start("body")) + 1, body


def shell_lines(info: str, body: str) -> Iterator[tuple[int, str]]:
    pending = ""
    start = 0
    for i, raw in enumerate(body.splitlines()):
        line = raw.strip()
        if info == "console":
            if not pending:
                if not line.startswith("$ "):
                    continue  # output
                line = line[2:]
        if not pending and (not line or line.startswith("#")):
            continue
        if not pending:
            start = i
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        yield start, pending + line
        pending = ""


def simple_commands(line: str) -> Iterator[tuple[str, ...]]:
    """The simple commands of a shell line: split at | && || ; and without redirections."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    words = list(lex)
    current: list[str] = []
    skip_next = False
    for w in words:
        if skip_next:
            skip_next = False
            continue
        if w in ("|", "||", "&&", ";", "&"):
            if current:
                yield tuple(current)
            current = []
        elif w in (">", ">>", "<", "2>", "&>"):
            skip_next = True
        else:
            current.append(w)
    if current:
        yield tuple(current)


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)


def _manifest_ids() -> set[str]:
    return set(_manifest())


def _lua_strings(text: str) -> list[str]:
    return [a or b for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", text)]


def commands_in(path: Path) -> Iterator[Command]:
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    for info, first, body in blocks(path):
        if info in SHELL_INFOS:
            for offset, line in shell_lines(info, body):
                for argv in simple_commands(line):
                    yield Command(f"{rel}:{first + offset}", argv)
        elif info in ("yaml", "yml"):
            doc = yaml.safe_load(body)  # a doc with broken YAML fails collection, loudly
            for node in _walk(doc):
                run = node.get("run")
                if isinstance(run, str):
                    for line in run.splitlines():
                        for argv in simple_commands(line):
                            yield Command(f"{rel}:{first}", argv)
                if "hooks" in node and "repo" in node:
                    yield from _precommit_repo(f"{rel}:{first}", node)
        elif info in ("json", "jsonc"):
            doc = json.loads(body)
            for node in _walk(doc):
                if "flake8.args" in node:
                    yield Command(f"{rel}:{first}", ("flake8", *node["flake8.args"], "."))
                if "glspc.server.command" in node:
                    yield Command(f"{rel}:{first}", (node["glspc.server.command"],
                                                     *node.get("glspc.server.commandArguments", [])))
                if isinstance(node.get("command"), list):
                    yield Command(f"{rel}:{first}", tuple(node["command"]))
        elif info == "toml":
            doc = tomllib.loads(body)
            for node in _walk(doc):
                if isinstance(node.get("command"), str):
                    yield Command(f"{rel}:{first}", (node["command"], *node.get("args", [])))
        elif info == "lua":
            for m in re.finditer(r"\bcmd\s*=\s*\{([^}]*)\}", body):
                yield Command(f"{rel}:{first}", tuple(_lua_strings(m.group(1))))
            for m in re.finditer(r"extra_args\s*=\s*\{([^}]*)\}", body):
                yield Command(f"{rel}:{first}", ("flake8", *_lua_strings(m.group(1)), "."))
        elif info in ("elisp", "emacs-lisp", "lisp"):
            for m in re.finditer(r"\(\"reshard-lint\"((?:\s+\"[^\"]*\")*)\)", body):
                yield Command(f"{rel}:{first}", ("reshard-lint", *re.findall(r"\"([^\"]*)\"", m.group(1))))
        elif info in ("ini", "cfg"):
            if "[flake8]" in body:
                yield Command(f"{rel}:{first}", ("flake8", "--config", "@ini", "."), stdin=body)


def _manifest() -> dict[str, dict[str, Any]]:
    return {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def _precommit_repo(where: str, repo: dict[str, Any]) -> Iterator[Command]:
    """The command each hook runs on a file. A `repo: local` hook installs the clone
    (additional_dependencies) and, for reshard-lint's own hook ids, runs what
    .pre-commit-hooks.yaml says; the hosted form takes the hooks from that file."""
    url = str(repo["repo"])
    for hook in repo["hooks"]:
        args = [str(a) for a in hook.get("args", [])]
        if url == "local":
            assert hook.get("language") == "python", where
            assert CLONE in [str(d) for d in hook.get("additional_dependencies", [])], \
                f"{where}: a local hook without reshard-lint's clone ({CLONE}) in additional_dependencies"
            if hook["id"] in _manifest():
                manifest = _manifest()[hook["id"]]
                assert (hook["entry"], hook["types"]) == (manifest["entry"], manifest["types"]), where
            yield Command(where, (*shlex.split(hook["entry"]), *args, "train.py"))
        elif url == HOSTED_URL:
            assert hook["id"] in _manifest(), f"{where}: no hook {hook['id']!r} in .pre-commit-hooks.yaml"
            yield Command(where, (*shlex.split(_manifest()[hook["id"]]["entry"]), *args, "train.py"))
        else:
            raise AssertionError(f"{where}: a pre-commit repository no test runs: {url}")


def all_commands() -> list[Command]:
    out: list[Command] = []
    for path in [*sorted(USAGE.glob("*.md")), README]:
        out.extend(commands_in(path))
    return out


def copy_source_tree(dest: Path) -> Path:
    """This repository as it is on disk (tracked and new files, not bench/): what a clone
    of it holds, uncommitted work included."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if not src.is_file() or rel.startswith("bench/"):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    return dest


# --- running ---------------------------------------------------------------------------------


def _fixture(root: Path, argv: tuple[str, ...]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "train.py").write_text(BUGGY, encoding="utf-8")
    for word in argv[1:]:
        if word.startswith("-") or word.startswith("/") or "$" in word or "://" in word:
            continue
        p = root / word
        if word.endswith((".py", ".toml", ".cfg", ".ini")):
            p.parent.mkdir(parents=True, exist_ok=True)
            if not p.exists():
                p.write_text(BUGGY if word.endswith(".py") else "", encoding="utf-8")
        elif word.endswith("/"):
            p.mkdir(parents=True, exist_ok=True)
            (p / "model.py").write_text(BUGGY, encoding="utf-8")


def _pyproject_extras() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["project"]["optional-dependencies"])


@dataclass
class PipEnv:
    """A new virtual environment for the docs' pip commands, and a copy of this tree as
    the clone they name (CLONE, or `.` inside it) and as VENDORED in a project."""
    venv: Path
    source: Path
    project: Path
    done: set[tuple[str, ...]]


def _run_pip(cmd: Command, env: PipEnv) -> None:
    if cmd.argv in env.done:
        return
    words = [w.replace(CLONE, str(env.source)) for w in cmd.argv[1:]]
    cwd = env.source if any(w == "." or w.startswith(".[") for w in words) else env.project
    clean = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    bin_dir = env.venv / "bin"
    proc = subprocess.run([str(bin_dir / "pip"), *words], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=clean)
    assert proc.returncode == 0, f"{cmd.where}: {' '.join(cmd.argv)}:\n{proc.stdout}{proc.stderr}"
    version = subprocess.run([str(bin_dir / "reshard-lint"), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("reshard-lint "), cmd.where
    if any("[lsp]" in w for w in words):
        lsp = subprocess.run([str(bin_dir / "python"), "-c", "import pygls"], capture_output=True, text=True)
        assert lsp.returncode == 0, f"{cmd.where}: the lsp extra did not install pygls: {lsp.stderr}"
    if "flake8" in words:
        f8 = subprocess.run([str(bin_dir / "flake8"), "--version"], capture_output=True, text=True)
        assert "reshard-lint" in f8.stdout, f"{cmd.where}: flake8 does not list the plugin: {f8.stdout}"
    env.done.add(cmd.argv)


def check(cmd: Command, workdir: Path, pip_env: Callable[[], PipEnv] | None = None) -> None:
    argv = list(cmd.argv)
    prog = argv[0]
    if " ".join(argv) in RUN_ELSEWHERE or " ".join(argv) in NOT_RUN:
        return
    if prog == "pip":
        for word in argv:
            # `pip install '/path/to/reshard-lint[lsp]'` must name an extra that exists (pip
            # only warns about one that does not).
            m = re.fullmatch(r"(?:.*/)?(?:reshard-lint|\.)\[([\w,-]+)\]", word)
            if m:
                missing = set(m.group(1).split(",")) - _pyproject_extras()
                assert not missing, f"{cmd.where}: no extra {missing} in pyproject.toml"
        assert pip_env is not None, f"{cmd.where}: pip commands run in test_doc_command"
        return _run_pip(cmd, pip_env())
    if prog == "pre-commit":
        _check_precommit(cmd)
        doc = cmd.where.split(":")[0].rsplit("/", 1)[-1]
        assert doc in PRECOMMIT_DOCS, \
            f"{cmd.where}: tests/integrations/test_precommit.py runs the pre-commit commands of {PRECOMMIT_DOCS} only"
        return
    stdin = ""
    if prog == "reshard-lint":
        argv[0] = tool("reshard-lint")
    elif prog == "flake8":
        argv[0] = tool("flake8")
        if "@ini" in argv:
            (workdir / "docs.ini").parent.mkdir(parents=True, exist_ok=True)
            workdir.mkdir(parents=True, exist_ok=True)
            (workdir / "docs.ini").write_text(cmd.stdin, encoding="utf-8")
            argv[argv.index("@ini")] = "docs.ini"
            _check_flake8_ini_keys(cmd)
    elif prog.startswith("python") and argv[1:2] == ["-m"] and argv[2].startswith("reshard_lint"):
        argv[0] = sys.executable
    else:
        raise AssertionError(f"{cmd.where}: the docs run {prog!r}, which no test checks; "
                             "check it here or add it to RUN_ELSEWHERE or NOT_RUN with the reason")
    if "-" in argv[1:]:
        stdin = BUGGY
    _fixture(workdir, cmd.argv)
    # The language server reads stdin: at end of input it stops (status 1, no shutdown).
    proc = subprocess.run(argv, cwd=workdir, input=stdin, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), f"{cmd.where}: {' '.join(cmd.argv)} exited {proc.returncode}:\n{out}"
    bad = [e for e in USAGE_ERRORS if e in proc.stderr]
    assert not bad, f"{cmd.where}: {' '.join(cmd.argv)}: {bad}\n{out}"
    assert "Traceback" not in proc.stderr, f"{cmd.where}: {' '.join(cmd.argv)}\n{out}"


def _flake8_options() -> set[str]:
    help_text = subprocess.run([tool("flake8"), "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"--([a-z][a-z0-9-]+)", help_text))


def _check_flake8_ini_keys(cmd: Command) -> None:
    # flake8 ignores unknown keys in configuration files; the docs must not rely on that.
    known = _flake8_options()
    section = re.split(r"^\[flake8\]\s*$", cmd.stdin, flags=re.MULTILINE)[1]
    section = re.split(r"^\[", section, flags=re.MULTILINE)[0]
    keys = re.findall(r"^([A-Za-z][\w-]*)\s*[=:]", section, flags=re.MULTILINE)
    unknown = [k for k in keys if k.replace("_", "-") not in known]
    assert not unknown, f"{cmd.where}: flake8 has no option {unknown}"


def _check_precommit(cmd: Command) -> None:
    argv = list(cmd.argv)
    sub = next((w for w in argv[1:] if not w.startswith("-")), None)
    assert sub is not None, cmd.where
    proc = subprocess.run([tool("pre-commit"), sub, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, f"{cmd.where}: pre-commit has no subcommand {sub!r}:\n{proc.stderr}"
    for word in argv[1:]:
        if word.startswith("-"):
            flag = word.split("=", 1)[0]
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", proc.stdout), \
                f"{cmd.where}: `pre-commit {sub}` has no option {flag}"
    hooks = [w for w in argv[2:] if not w.startswith("-") and "://" not in w and w != CLONE]
    for hook in hooks:
        assert hook in _manifest_ids(), f"{cmd.where}: no hook {hook!r} in .pre-commit-hooks.yaml"


COMMANDS = all_commands()


def test_docs_have_commands() -> None:
    programs = {c.argv[0] for c in COMMANDS}
    assert {"reshard-lint", "flake8", "pre-commit"} <= programs
    wanted = {"flake8.md", "pre-commit.md", "github-actions.md", "vscode.md", "neovim.md", "lsp.md"}
    assert wanted <= {p.name for p in USAGE.glob("*.md")}
    for name in wanted:
        assert any(c.where.startswith(f"docs/usage/{name}:") for c in COMMANDS), name


@pytest.fixture(scope="module")
def pip_env(tmp_path_factory: pytest.TempPathFactory) -> PipEnv:
    root = tmp_path_factory.mktemp("docs-pip")
    source = copy_source_tree(root / "reshard-lint")
    project = root / "project"
    (project / "tools").mkdir(parents=True)
    os.symlink(source, project / VENDORED)
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, timeout=300)
    return PipEnv(root / "venv", source, project, set())


@pytest.mark.parametrize("cmd", COMMANDS, ids=[f"{c.where}:{' '.join(c.argv)[:60]}" for c in COMMANDS])
def test_doc_command(cmd: Command, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    check(cmd, tmp_path / "work", lambda: request.getfixturevalue("pip_env"))


def test_the_lists_of_commands_not_run_here_are_current() -> None:
    lines = {" ".join(c.argv) for c in COMMANDS}
    assert not set(RUN_ELSEWHERE) - lines and not set(NOT_RUN) - lines, \
        (set(RUN_ELSEWHERE) - lines, set(NOT_RUN) - lines)
    # Every reason names where the command runs instead, or why it cannot.
    assert all(RUN_ELSEWHERE.values()) and all(NOT_RUN.values())


def test_the_docs_install_from_a_clone() -> None:
    """No index serves reshard-lint yet: the docs install a clone (or `.` in it)."""
    pips = [c for c in COMMANDS if c.argv[:2] == ("pip", "install")]
    assert len(pips) >= 6
    for c in pips:
        targets = [w for w in c.argv[2:] if not w.startswith("-") and w != "flake8"]
        assert targets and all(w.startswith((CLONE, VENDORED, ".")) for w in targets), c


@pytest.mark.parametrize("line", [
    "reshard-lint check --no-such-flag src/",
    "reshard-lint check --format xml",
    "reshard-lint lsp --no-such-flag",
    "flake8 --reshard-no-such-option=1 src/",
    "pre-commit run --no-such-flag",
    "pre-commit run no-such-hook --all-files",
    "pip install 'reshard-lint[no-such-extra]'",
    "make lint",
])
def test_a_wrong_command_fails_the_check(line: str, tmp_path: Path) -> None:
    [argv] = list(simple_commands(line))
    with pytest.raises(AssertionError):
        check(Command("synthetic", argv), tmp_path / "work")


def test_extraction_of_all_block_kinds(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "```console\n$ reshard-lint check \\\n    src/\nsrc/a.py:1:1: RSH201 ...\n```\n"
        "* item\n\n  ```sh\n"
        "  flake8 --select RSH . | head -n 3 && reshard-lint check --format sarif > out.sarif\n  ```\n"
        "```yaml\nsteps:\n  - run: reshard-lint check --format github\n```\n"
        "```lua\nvim.lsp.start({ cmd = { 'reshard-lint', 'lsp' } })\n```\n",
        encoding="utf-8")
    got = [c.argv for c in commands_in(doc)]
    assert got == [("reshard-lint", "check", "src/"), ("flake8", "--select", "RSH", "."),
                   ("head", "-n", "3"), ("reshard-lint", "check", "--format", "sarif"),
                   ("reshard-lint", "check", "--format", "github"),
                   ("reshard-lint", "lsp")]


def _server_sections(info: str, body: str) -> Iterator[set[str]]:
    """Key sets of the language server's settings sections in a block."""
    if info in ("json", "jsonc"):
        doc = json.loads(body)
        parents = [doc] + [n[k] for n in _walk(doc) for k in n
                           if k.lower().endswith("initializationoptions") and isinstance(n[k], dict)]
        for parent in parents:
            if isinstance(parent.get("reshard-lint"), dict):
                yield set(parent["reshard-lint"])
    elif info == "lua":
        for m in re.finditer(r"init_options\s*=\s*\{\s*\[['\"]reshard-lint['\"]\]\s*=\s*\{([^{}]*)\}", body):
            yield set(re.findall(r"(\w+)\s*=", m.group(1)))


def test_lsp_settings_in_docs_are_known_keys() -> None:
    # A key is written as in [tool.reshard-lint] (per-file-runtime); the server takes it or
    # the field's own name (per_file_runtime).
    known = set(Settings.__dataclass_fields__) | {k.replace("_", "-") for k in Settings.__dataclass_fields__}
    seen = 0
    for path in USAGE.glob("*.md"):
        for info, first, body in blocks(path):
            for keys in _server_sections(info, body):
                seen += 1
                assert keys <= known, f"{path.name}:{first}: unknown server settings {keys - known}"
    assert seen >= 3  # lsp.md, vscode.md, neovim.md
