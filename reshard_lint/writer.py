"""Writing fixed files: atomically, only over the bytes we read, mode kept."""

from __future__ import annotations

import os
import stat
import tempfile

from .sources import Source, encode


class WriteError(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def write_fixed(src: Source, new_text: str) -> None:
    """Replace ``src.path`` with ``new_text``, or raise WriteError and leave it untouched.

    The file is only replaced while it still holds the bytes that were analysed, through
    a temporary file in the same directory and a rename, so a reader never sees half a
    file and a failed write leaves the original byte for byte.
    """
    path = src.path
    data = encode(src, new_text)
    try:
        with open(path, "rb") as fh:
            current = fh.read()
        st = os.stat(path)
    except OSError as exc:
        raise WriteError(path, f"cannot be re-read before writing: {exc.strerror or exc}") from None
    if current != src.raw:
        raise WriteError(path, "changed on disk since it was read; not fixed (run again)")
    if not os.access(path, os.W_OK):
        raise WriteError(path, "is read-only; not fixed")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = -1, ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".reshard-lint-", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as out:
            fd = -1
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
        tmp = ""
    except OSError as exc:
        raise WriteError(path, f"could not be written: {exc.strerror or exc}; the original is unchanged") from None
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
