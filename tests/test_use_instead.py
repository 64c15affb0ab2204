"""Every rule page's "Use instead" program (rules/docs.py ``use_instead``) is one a user
can copy: the linter finds nothing in it, every name it binds is used, and it runs under
real JAX on 8 CPU devices.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from reshard_lint.engine.engine import Engine
from reshard_lint.rules import all_rules
from reshard_lint.rules.docs import use_instead

RULES = all_rules()
ENGINE = Engine()

# Runs each program in a fresh namespace of one interpreter (one JAX start), JAX on 8 CPU
# devices set before its first use; prints {code: error or null} as JSON.
DRIVER = """\
import contextlib, io, json, sys, traceback
import jax
jax.config.update('jax_num_cpu_devices', 8)
programs = json.loads(sys.stdin.read())
out = {}
for code, program in programs.items():
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(program, code + '_use_instead.py', 'exec'), {'__name__': '__main__'})
        out[code] = None
    except BaseException:
        out[code] = traceback.format_exc()[-1500:]
print(json.dumps(out))
"""


def _bound_and_read(tree: ast.AST) -> tuple[set[str], set[str]]:
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound, read


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_use_instead_binds_no_unused_name(rule: type) -> None:
    bound, read = _bound_and_read(ast.parse(use_instead(rule)))
    assert not bound - read, f"{rule.code}'s Use instead binds names it never uses: {sorted(bound - read)}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_use_instead_is_clean(rule: type) -> None:
    result = ENGINE.lint_source(use_instead(rule), "use_instead.py")
    assert result.error is None
    assert [(d.code, d.line, d.message) for d in result.diagnostics] == []


def test_every_use_instead_runs_with_jax_on_8_cpu_devices() -> None:
    programs = {rule.code: use_instead(rule) for rule in RULES}
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    proc = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(programs), capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    failed = {code: err for code, err in json.loads(proc.stdout.splitlines()[-1]).items() if err}
    assert not failed, failed


def test_the_unused_name_check_sees_what_it_looks_for() -> None:
    bound, read = _bound_and_read(ast.parse(
        "import random\nimport jax.numpy as jnp\nfrom a import b\nx = 1\nf = lambda a: a\nprint(f(b))\n"))
    assert bound - read == {"random", "jnp", "x"}
