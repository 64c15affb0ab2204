"""Fixes that need a name the file does not import (core/add_imports.py, with libcst).

RSH103's ``Mesh(np.array(devs), ('x',))`` in a file without ``Mesh`` or numpy, and
RSH201/202's ``NamedSharding(x.sharding.mesh, P('x'))`` in a file without
``NamedSharding`` or ``P``: the fix carries the imports it needs and libcst's
AddImportsVisitor adds them as one more edit when the fix is applied or shown with its
edits. libcst is never imported while analysing: not by the flake8 plugin, not by a
plain ``check``. The fixed programs run under JAX on 8 CPU devices.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reshard_lint.core import fixes
from reshard_lint.core.diagnostic import Diagnostic, Edit, Fix, Import

from .conftest import CROSS, FIX_FIXTURES, copy_fixture, run, write

ROOT = Path(__file__).resolve().parents[2]

# Two modules of a project: the shardings are built in one, the transfer is in the other,
# which imports neither NamedSharding nor PartitionSpec (RSH201's fix adds both).
SHARDINGS = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

full = NamedSharding(Mesh(np.array(jax.devices()), ('x',)), P('x'))
half = NamedSharding(Mesh(np.array(jax.devices()[:4]), ('x',)), P('x', None))
rev = NamedSharding(Mesh(np.array(jax.devices()[::-1]), ('x',)), P('x'))
"""
MAIN = '''\
"""Moves an array to the shardings another module builds."""
from __future__ import annotations

from jax import device_put
import numpy

from shardpkg.shardings import full, half, rev

x = device_put(numpy.arange(64.0).reshape(8, 8), full)
y = device_put(x, half)  # to half the devices
z = device_put(x, rev)  # reordered
'''
MAIN_FIXED = '''\
"""Moves an array to the shardings another module builds."""
from __future__ import annotations

from jax import device_put
import numpy

from shardpkg.shardings import full, half, rev
from jax.sharding import NamedSharding, PartitionSpec as P

x = device_put(numpy.arange(64.0).reshape(8, 8), full)
y = device_put(x, NamedSharding(x.sharding.mesh, P('x', None)))  # to half the devices
z = device_put(x, NamedSharding(x.sharding.mesh, P('x')))  # reordered
'''


def _project_with_shardings(project: Path) -> Path:
    write(project, "shardpkg/__init__.py", "")
    write(project, "shardpkg/shardings.py", SHARDINGS)
    return write(project, "shardpkg/main.py", MAIN)


# ---- libcst stays out of the analysis --------------------------------------------------

_NO_LIBCST = """\
import sys
import reshard_lint.frontends.flake8_plugin
assert "libcst" not in sys.modules, "importing the plugin imported libcst"
from flake8.main.application import Application
app = Application()
app.run(["--jobs=1", "--select=RSH", *sys.argv[1:]])
assert app.result_count >= 1, app.result_count
loaded = sorted(m for m in sys.modules if m == "libcst" or m.startswith("libcst."))
assert not loaded, loaded
from reshard_lint.engine.runner import lint_text
for path in sys.argv[1:]:
    found = lint_text(open(path, encoding="utf-8").read(), path, {})
    assert any(d.fix is not None for d in found), path
assert "libcst" not in sys.modules, "analysing (fixes built, not applied) imported libcst"
print("ok")
"""


def test_flake8_and_the_analysis_never_import_libcst(project: Path) -> None:
    plain = write(project, "plain.py", CROSS)  # RSH201 with a fix that needs no import
    needs = copy_fixture("rsh103_import_mesh.in.py", project / "needs.py")  # one that does
    for files in ([plain], [plain, needs]):
        r = subprocess.run([sys.executable, "-c", _NO_LIBCST, *map(str, files)], cwd=project,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.endswith("ok\n"), r.stdout + r.stderr


# ---- the fix with its import ------------------------------------------------------------

def _lint(text: str) -> list[Diagnostic]:
    from reshard_lint.engine.runner import lint_text

    return lint_text(text, "m.py", {})


def test_rsh103_fix_carries_its_imports_and_the_edits_add_them() -> None:
    src = (FIX_FIXTURES / "crlf_rsh103_import_mesh_numpy.in.py").read_bytes().decode()
    [d] = [d for d in _lint(src) if d.code == "RSH103"]
    assert d.fix is not None and d.fix.safe
    assert d.fix.imports == (Import("jax.sharding", "Mesh"), Import("numpy", alias="np"))
    assert "(adds `from jax.sharding import Mesh`, `import numpy as np`)" in d.fix.title
    edits = fixes.edits_of(src, d.fix)
    assert edits is not None and edits[: len(d.fix.edits)] == d.fix.edits
    # Whole lines in the file's line endings: Mesh merged into the jax.sharding import,
    # numpy's import inserted after it.
    assert edits[len(d.fix.edits):] == (
        Edit(2, 0, 3, 0, "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P\r\n"
                         "import numpy as np\r\n"),)


def test_a_name_the_file_uses_otherwise_gets_no_import_and_no_fix() -> None:
    src = textwrap.dedent("""\
        from jax import device_put, devices
        from jax.sharding import NamedSharding, PartitionSpec as P
        import numpy as np

        def Mesh(*devices):  # the file's own Mesh: an import would replace it
            return devices

        sharding = NamedSharding(devices(), P('x'))
        """)
    [d] = [d for d in _lint(src) if d.code == "RSH103"]
    assert d.fix is None


def test_a_fix_whose_import_cannot_be_added_is_not_applied_at_all() -> None:
    src = "import jax\nnp = 1\nx = jax.devices()\n"
    fix = Fix("wrap", (Edit(3, 4, 3, 17, "np.array(jax.devices())"),), True, (Import("numpy", alias="np"),))
    d = Diagnostic("RSH103", 3, 4, "m", 3, 17, fix)
    assert fixes.edits_of(src, fix) is None
    assert fixes.apply(src, [d]) == (src, [])
    ok = Fix("wrap", (Edit(3, 4, 3, 17, "onp.array(jax.devices())"),), True, (Import("numpy", alias="onp"),))
    new, applied = fixes.apply(src, [Diagnostic("RSH103", 3, 4, "m", 3, 17, ok)])
    assert applied and new == "import jax\nimport numpy as onp\n\nnp = 1\nx = onp.array(jax.devices())\n"


def test_the_cache_keeps_a_fixs_imports() -> None:
    from reshard_lint.core.cache import diag_from_dict, diag_to_dict

    fix = Fix("t", (Edit(1, 0, 1, 1, "x"),), False,
              (Import("jax.sharding", "NamedSharding"), Import("jax.sharding", "PartitionSpec", "P")))
    d = Diagnostic("RSH201", 1, 0, "m", 1, 1, fix)
    assert diag_from_dict(json.loads(json.dumps(diag_to_dict(d)))) == d


def test_two_fixes_that_need_the_same_import_converge(project: Path) -> None:
    src = textwrap.dedent("""\
        from jax import device_put, devices
        from jax.sharding import NamedSharding, PartitionSpec as P
        import numpy as np

        a = NamedSharding(devices(), P('x'))
        b = NamedSharding(devices()[:4], P('x'))
        x = device_put(np.arange(8.0), a)
        y = device_put(np.arange(4.0), b)
        """)
    p = write(project, "m.py", src)
    r = run("check", "--fix", "--no-cache", "m.py", cwd=project)
    assert "Fixed 2, 0 remaining." in r.stderr, r.stderr
    text = p.read_text()
    assert text.count("Mesh,") == 1 and "from jax.sharding import Mesh, NamedSharding" in text
    assert "a = NamedSharding(Mesh(np.array(devices()), ('x',)), P('x'))" in text
    assert "b = NamedSharding(Mesh(np.array(devices()[:4]), ('x',)), P('x'))" in text
    again = run("check", "--fix", "--no-cache", "m.py", cwd=project)
    assert p.read_text() == text and "Fixed 0," in again.stderr


def test_rsh201_and_rsh202_add_named_sharding_and_p(project: Path) -> None:
    main = _project_with_shardings(project)
    diff = run("check", "--diff", "--unsafe-fixes", "--no-cache", "shardpkg/main.py", cwd=project)
    assert "+from jax.sharding import NamedSharding, PartitionSpec as P\n" in diff.stdout, diff.stdout
    shown = json.loads(run("check", "--format", "json", "--no-cache", "shardpkg/main.py", cwd=project).stdout)
    assert [f["code"] for f in shown] == ["RSH201", "RSH202"]
    for f in shown:  # JSON shows the import edit with the fix
        assert f["fix"]["edits"][-1]["content"] == "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    r = run("check", "--unsafe-fixes", "--no-cache", "shardpkg/main.py", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    assert main.read_text() == MAIN_FIXED
    r = run("check", "--unsafe-fixes", "--no-cache", "shardpkg/main.py", cwd=project)
    assert main.read_text() == MAIN_FIXED and "Fixed 0," in r.stderr


# ---- the fixed programs run -------------------------------------------------------------

_RUN = """\
import runpy
import sys

import jax

assert len(jax.devices()) == 8, jax.devices()
for path, check in zip(sys.argv[1::2], sys.argv[2::2]):
    g = runpy.run_path(path)
    g.update(jax=jax)
    exec(check, g)
    print("ran", path)
"""

# Each fixed program, and what its fix claims, checked on the result.
CLAIMS = {
    # The devices stay as written, in a mesh: the sharding is built and the data placed.
    "rsh103_import_mesh": "assert list(sharding.mesh.devices.flat) == list(devices()); "
                          "assert x.sharding == sharding",
    "crlf_rsh103_import_mesh_numpy": "assert list(sharding.mesh.devices.flat) == devs; "
                                     "assert x.sharding == sharding",
    "bom_utf8_rsh103_import_numpy": "assert list(sharding.mesh.devices.flat) == jax.devices(); "
                                    "assert x.sharding == sharding",
    "latin1_rsh103_import_mesh_numpy": "assert list(sharding.mesh.devices.flat) == list(devices()); "
                                       "assert x.sharding == sharding",
    # No import, but a rebuilt multi-line target (its mesh argument only, comments kept):
    # the result stays on the array's devices.
    "rsh201_unsafe_multiline_comments": "assert y.sharding.device_set == x.sharding.device_set; "
                                        "assert y.sharding.spec == P('x')",
}


def test_fixed_programs_run_under_jax_on_8_cpu_devices(project: Path) -> None:
    pytest.importorskip("jax")
    args: list[str] = []
    for name, claim in CLAIMS.items():
        target = copy_fixture(f"{name}.in.py", project / f"{name}.py")
        flag = "--unsafe-fixes" if "unsafe" in name else "--fix"
        r = run("check", flag, "--no-cache", target.name, cwd=project)
        assert target.read_bytes() == (FIX_FIXTURES / f"{name}.out.py").read_bytes(), r.stderr
        args += [str(target), claim]
    main = _project_with_shardings(project)
    run("check", "--unsafe-fixes", "--no-cache", "shardpkg/main.py", cwd=project)
    assert main.read_text() == MAIN_FIXED
    # RSH201/202's claim: the result stays on the array's own devices, in their order,
    # with the layout the target asked for (no transfer to other devices).
    args += [str(main), "assert y.sharding.mesh.devices.tolist() == x.sharding.mesh.devices.tolist(); "
                        "assert z.sharding.mesh.devices.tolist() == x.sharding.mesh.devices.tolist(); "
                        "assert y.sharding.spec == half.spec and z.sharding.spec == rev.spec; "
                        "assert (y == x).all() and (z == x).all()"]
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(project),
               XLA_FLAGS=os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8")
    r = subprocess.run([sys.executable, "-c", _RUN, *args], cwd=project, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("ran ") == len(CLAIMS) + 1, r.stdout


# ---- the editor's quick fix ---------------------------------------------------------------

def test_language_server_quick_fix_adds_the_import(tmp_path: Path) -> None:
    from ..integrations.lspclient import LspClient, apply_workspace_edit

    text = (FIX_FIXTURES / "rsh103_import_mesh.in.py").read_text(encoding="utf-8")
    fixed = (FIX_FIXTURES / "rsh103_import_mesh.out.py").read_text(encoding="utf-8")
    path = tmp_path / "train.py"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    c = LspClient([sys.executable, "-m", "reshard_lint.frontends.lsp"], cwd=tmp_path)
    try:
        c.initialize(tmp_path)
        c.open(uri, text)
        [diag] = [d for d in c.wait_diagnostics(uri) if d["code"] == "RSH103"]
        actions = c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diag["range"],
            "context": {"diagnostics": [diag], "triggerKind": 1}})
        [fix] = [a for a in actions if a["kind"] == "quickfix" and not a["title"].startswith("Add `# noqa")]
        assert fix["isPreferred"] and "(adds `from jax.sharding import Mesh`)" in fix["title"]
        assert apply_workspace_edit(text, uri, fix["edit"]) == fixed
        [fix_all] = [a for a in actions if a["kind"].startswith("source.fixAll")]
        assert apply_workspace_edit(text, uri, fix_all["edit"]) == fixed
        assert c.shutdown() == 0
    finally:
        c.close()
