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
    try:
        data = encode(src, new_text)
    except UnicodeEncodeError as exc:
        raise WriteError(path, f"the fixed text cannot be written in the file's encoding "
                               f"({src.encoding}): {exc.reason}; not fixed") from None
    # Write through a symbolic link, not over it: replacing the link itself with a
    # regular file would silently detach it from the file it points to.
    target = os.path.realpath(path)
    try:
        # Non-blocking: a path swapped for a FIFO since it was read must not hang the run.
        rfd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(rfd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise WriteError(path, "is no longer a regular file; not fixed")
            current = fh.read()
    except OSError as exc:
        raise WriteError(path, f"cannot be re-read before writing: {exc.strerror or exc}") from None
    if current != src.raw:
        raise WriteError(path, "changed on disk since it was read; not fixed (run again)")
    # Mode bits, not os.access: root may write anything, but a file its owner made
    # read-only is a statement that it must not be rewritten behind their back.
    if st.st_mode & 0o222 == 0 or not os.access(target, os.W_OK):
        raise WriteError(path, "is read-only; not fixed")
    directory = os.path.dirname(target)
    fd, tmp = -1, ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".reshard-lint-", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as out:
            fd = -1
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, target)
        tmp = ""
    except OSError as exc:
        reason = f"could not be written: {exc.strerror or exc}; the original is unchanged"
        raise WriteError(path, reason) from None
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
