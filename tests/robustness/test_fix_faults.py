"""--fix under faults: the original file survives byte for byte, and no temp file is left.

Everything here is real: a read-only mode, a file changed on disk between reading and
writing, and a write that fails midway because the process may not write more than a
few bytes to any file (RLIMIT_FSIZE, which binds root too; SIGXFSZ ignored so the
write fails with EFBIG instead of killing the process).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from reshard_lint.core.sources import read_source
from reshard_lint.core.writer import WriteError, write_fixed

CLI = str(Path(sys.executable).parent / "reshard-lint")
# RSH102 fixes jax.devices()[::-1] -> jax.devices() (an unsafe fix: --unsafe-fixes).
CODE = ("# caf\xe9: a latin-1 file keeps its encoding\n"
        "import jax\nfrom jax.sharding import Mesh\nm = Mesh(jax.devices()[::-1], ('x',))\n")
FIXED = CODE.replace("jax.devices()[::-1]", "jax.devices()")


def _fix(cwd: Path, *paths: str, fsize: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    argv = [CLI, "check", "--no-cache", "--fix", "--unsafe-fixes", "--format", "concise", *paths]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, preexec_fn=limit,
                          stdin=subprocess.DEVNULL)


def _temps(d: Path) -> list[str]:
    return [p.name for p in d.iterdir() if p.name.startswith(".reshard-lint-")]


def test_fix_works_when_nothing_fails(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CODE, encoding="utf-8")
    proc = _fix(tmp_path, "a.py")
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == FIXED, proc.stdout + proc.stderr
    assert _temps(tmp_path) == []


def test_read_only_file_is_not_fixed_even_as_root(tmp_path: Path) -> None:
    ro, rw = tmp_path / "ro.py", tmp_path / "rw.py"
    ro.write_text(CODE, encoding="utf-8")
    rw.write_text(CODE, encoding="utf-8")
    ro.chmod(0o444)
    before = ro.read_bytes()
    proc = _fix(tmp_path, "ro.py", "rw.py")
    assert ro.read_bytes() == before
    assert ro.stat().st_mode & 0o777 == 0o444
    assert "ro.py: is read-only; not fixed" in proc.stderr, proc.stderr
    assert "ro.py:4:5: RSH102" in proc.stdout  # still reported: it was not fixed
    assert rw.read_text(encoding="utf-8") == FIXED  # the other file is fixed all the same
    assert proc.returncode != 0
    assert _temps(tmp_path) == []
    # The writer itself refuses, whoever runs it.
    with pytest.raises(WriteError, match="is read-only; not fixed"):
        write_fixed(read_source(str(ro)), FIXED)
    assert ro.read_bytes() == before


def test_file_changed_on_disk_after_reading_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(CODE, encoding="utf-8")
    src = read_source(str(path))
    edited = CODE + "print('the user typed this meanwhile')\n"
    path.write_text(edited, encoding="utf-8")
    with pytest.raises(WriteError, match=r"changed on disk since it was read; not fixed \(run again\)"):
        write_fixed(src, FIXED)
    assert path.read_text(encoding="utf-8") == edited
    assert _temps(tmp_path) == []


def test_file_deleted_after_reading_is_not_recreated(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(CODE, encoding="utf-8")
    src = read_source(str(path))
    path.unlink()
    with pytest.raises(WriteError, match="cannot be re-read before writing"):
        write_fixed(src, FIXED)
    assert not path.exists() and _temps(tmp_path) == []


def test_write_failing_midway_leaves_the_original(tmp_path: Path) -> None:
    # The fixed text is written to a temp file first; with at most 20 bytes allowed per
    # file the write fails part-way (EFBIG) and the original must be untouched.
    good = tmp_path / "a.py"
    good.write_bytes(CODE.encode("latin-1").replace(b"#", b"# -*- coding: latin-1 -*-\n#", 1))
    before = good.read_bytes()
    proc = _fix(tmp_path, "a.py", fsize=20)
    assert good.read_bytes() == before, proc.stderr
    assert _temps(tmp_path) == [], _temps(tmp_path)
    assert "a.py: could not be written: File too large; the original is unchanged" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.returncode != 0


def test_writer_failing_midway_in_process(tmp_path: Path) -> None:
    # The same fault, straight at the writer, in a child process with the limit.
    path = tmp_path / "a.py"
    path.write_text(CODE, encoding="utf-8")
    before = path.read_bytes()
    script = (
        "import resource, signal, sys\n"
        "from reshard_lint.core.sources import read_source\n"
        "from reshard_lint.core.writer import WriteError, write_fixed\n"
        "src = read_source(sys.argv[1])\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (10, 10))\n"
        "try:\n"
        "    write_fixed(src, src.text.replace('[::-1]', '') + '#' * 4096 + '\\n')\n"
        "except WriteError as exc:\n"
        "    print(exc.reason)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                          timeout=120)
    expected = "could not be written: File too large; the original is unchanged"
    assert proc.stdout.strip() == expected, proc.stderr
    assert path.read_bytes() == before
    assert _temps(tmp_path) == []


def test_fix_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_text(CODE, encoding="utf-8")
    link = tmp_path / "link.py"
    os.symlink("real.py", link)
    write_fixed(read_source(str(link)), FIXED)
    assert link.is_symlink() and real.read_text(encoding="utf-8") == FIXED
    assert _temps(tmp_path) == []
