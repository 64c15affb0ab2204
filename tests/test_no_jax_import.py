"""Linting never imports jax: not through the engine, not through the CLI.

A static analyzer that imported jax would be slow to start, would need jax installed,
and on a TPU or GPU host could grab the accelerator. Each check runs in a fresh
interpreter, because the test session itself may already hold jax.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A program with a finding, so the rules' checks actually run on it.
PROGRAM = textwrap.dedent("""
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    jax.distributed.initialize()
    mesh = Mesh(np.array(jax.devices()), ('x',))
    x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
    half = Mesh(np.array(jax.devices()[:4]), ('x',))
    y = jax.device_put(x, NamedSharding(half, P('x')))
""").lstrip()

JAX_LOADED = "sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib'))"

ENGINE = textwrap.dedent(f"""
    import sys
    from reshard_lint.engine.engine import lint_source
    from reshard_lint.rules import all_rules

    result = lint_source(open(sys.argv[1]).read(), sys.argv[1])
    print('diagnostics', len(result.diagnostics))
    # Every rule's own examples too, so every rule module's check runs here.
    for rule in all_rules():
        for example in rule.examples:
            lint_source(example.code, rule.code + '.py')
    loaded = {JAX_LOADED}
    assert not loaded, loaded
    print('no jax')
""")

CLI = textwrap.dedent(f"""
    import sys
    from reshard_lint.frontends.cli import main

    # One job and no cache: the file is linted in this very process.
    sys.argv = ['reshard-lint', 'check', '--no-cache', '-j', '1', sys.argv[1]]
    try:
        code = main()
    except SystemExit as e:
        code = e.code
    print('exit', code)
    assert code in (0, 1), code  # 2 would be a usage or internal error
    loaded = {JAX_LOADED}
    assert not loaded, loaded
    print('no jax')
""")


def _run(script: str, target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True,
                          text=True, timeout=120, cwd=str(target.parent))


def test_engine_does_not_import_jax(tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    target.write_text(PROGRAM)
    proc = _run(ENGINE, target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no jax" in proc.stdout
    assert "diagnostics 0" not in proc.stdout, "the engine found nothing: did it lint at all?"


def test_cli_does_not_import_jax(tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    target.write_text(PROGRAM)
    proc = _run(CLI, target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no jax" in proc.stdout
    assert "exit 1" in proc.stdout, "a file with a finding must exit 1: " + proc.stdout + proc.stderr
