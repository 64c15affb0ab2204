"""Every command line in docs/usage/ runs against the real, installed programs.

Commands come from ```sh / ```bash / ```console blocks, from `run:` steps of workflow
YAML, from pre-commit configs (their `args:`), from editor settings (JSON, Lua, TOML,
Emacs Lisp) and from `[flake8]` INI sections. `reshard-lint` and `flake8` commands are
run in a small fixture directory: exit status 2 or an argparse complaint fails the test,
so a doc that names a flag the programs do not have fails here. `pre-commit` commands
are checked against `pre-commit SUBCOMMAND --help`. Any other program must be listed in
UNCHECKED, so a new kind of command cannot slip in unexamined.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from reshard_lint.lsp import Settings
from reshard_lint.rules import rule_by_code

from ..conftest import ROOT, tool

USAGE = ROOT / "docs" / "usage"
SHELL_INFOS = {"sh", "bash", "shell", "console", "zsh"}
# Programs named in the docs that these tests do not run (installers, editors, git).
UNCHECKED = {"pip", "pipx", "git", "nvim", "code", "uv"}
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
    return {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


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


def _precommit_repo(where: str, repo: dict[str, Any]) -> Iterator[Command]:
    url = str(repo["repo"])
    for hook in repo["hooks"]:
        args = [str(a) for a in hook.get("args", [])]
        if url.rstrip("/").endswith("reshard-lint/reshard-lint"):
            assert hook["id"] in _manifest_ids(), f"{where}: no hook {hook['id']!r} in .pre-commit-hooks.yaml"
            entry = {"reshard-lint": ("reshard-lint", "check"),
                     "reshard-lint-fix": ("reshard-lint", "check", "--fix")}[hook["id"]]
            yield Command(where, (*entry, *args, "train.py"))
        elif "flake8" in url:
            assert "reshard-lint" in hook.get("additional_dependencies", []), where
            yield Command(where, ("flake8", *args, "train.py"))


def all_commands() -> list[Command]:
    out: list[Command] = []
    for path in sorted(USAGE.glob("*.md")):
        out.extend(commands_in(path))
    return out


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


def check(cmd: Command, workdir: Path) -> None:
    argv = list(cmd.argv)
    prog = argv[0]
    if prog in UNCHECKED or (prog.startswith("python") and argv[1:3] == ["-m", "venv"]):
        for word in argv:
            # `pip install 'reshard-lint[lsp]'` must name an extra that exists.
            m = re.fullmatch(r"reshard-lint\[([\w,-]+)\]", word)
            if m:
                missing = set(m.group(1).split(",")) - _pyproject_extras()
                assert not missing, f"{cmd.where}: no extra {missing} in pyproject.toml"
        return
    if prog == "pre-commit":
        return _check_precommit(cmd)
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
                             "check it here or add it to UNCHECKED")
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
    hooks = [w for w in argv[2:] if not w.startswith("-") and "://" not in w]
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


@pytest.mark.parametrize("cmd", COMMANDS, ids=[f"{c.where}:{' '.join(c.argv)[:60]}" for c in COMMANDS])
def test_doc_command(cmd: Command, tmp_path: Path) -> None:
    check(cmd, tmp_path / "work")


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
    known = set(Settings.__dataclass_fields__)
    seen = 0
    for path in USAGE.glob("*.md"):
        for info, first, body in blocks(path):
            for keys in _server_sections(info, body):
                seen += 1
                assert keys <= known, f"{path.name}:{first}: unknown server settings {keys - known}"
    assert seen >= 3  # lsp.md, vscode.md, neovim.md
