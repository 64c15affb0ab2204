"""Reading Python files as Python does: coding cookies, BOMs, line endings.

A file that cannot be read or decoded raises ``SourceError`` with a reason a user can
act on; the caller reports it and goes on with the other files.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import stat
import tokenize
from dataclasses import dataclass


class SourceError(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class Source:
    path: str
    text: str  # decoded, without the BOM, line endings as in the file
    raw: bytes  # the exact bytes read
    encoding: str
    bom: bool
    newline: str  # the first line ending in the file ('\n' when there is none)


def decode(raw: bytes, path: str) -> Source:
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise SourceError(path, f"contains a null byte at offset {nul}; not a Python source file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        if "invalid or missing" in str(exc):
            # detect_encoding reads the first two lines; undecodable bytes there land here.
            raise SourceError(path, "not valid UTF-8 in its first lines; declare the file's encoding "
                                    "with a '# -*- coding: ... -*-' line or save it as UTF-8") from None
        raise SourceError(path, f"bad encoding declaration: {exc}") from None
    bom = raw.startswith(codecs.BOM_UTF8)
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    body = raw[len(codecs.BOM_UTF8):] if bom else raw
    try:
        text = body.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        raise SourceError(path, f"not valid {encoding}{where}; declare the file's encoding with a "
                                "'# -*- coding: ... -*-' line or save it as UTF-8") from None
    newline = "\n"
    for i, ch in enumerate(text):
        if ch == "\r":
            newline = "\r\n" if text[i + 1:i + 2] == "\n" else "\r"
            break
        if ch == "\n":
            break
    return Source(path, text, raw, encoding, bom, newline)


def read_source(path: str) -> Source:
    """The file at ``path``, decoded, or SourceError saying why it cannot be linted."""
    return decode(read_bytes(path), path)


def read_bytes(path: str) -> bytes:
    """The bytes of the file at ``path``, or SourceError saying why it cannot be read.

    Only regular files are read: opening a FIFO would block the whole run until
    something writes to it, and a device could be endless. The check is made on the
    open descriptor (opened non-blocking) so that a path swapped after it was listed
    cannot slip through.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise SourceError(path, "is a directory, not a file") from None
    except PermissionError:
        raise SourceError(path, "cannot be read: permission denied") from None
    except FileNotFoundError:
        if os.path.islink(path):
            raise SourceError(path, "is a symbolic link to a file that does not exist") from None
        raise SourceError(path, "does not exist (or was deleted after it was listed)") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SourceError(path, "is a symbolic link loop") from None
        raise SourceError(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise SourceError(path, "is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise SourceError(path, f"is not a regular file (a {_kind(st.st_mode)}); not read")
        chunks = []
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:  # regular files never block; kept for odd filesystems
                continue
            if not chunk:
                break
            chunks.append(chunk)
        raw = b"".join(chunks)
    except SourceError:
        raise
    except PermissionError:
        raise SourceError(path, "cannot be read: permission denied") from None
    except OSError as exc:
        raise SourceError(path, f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return raw


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def encode(src: Source, text: str) -> bytes:
    """The bytes of a new text for ``src``'s file: same encoding and BOM."""
    data = text.encode(src.encoding)
    return (codecs.BOM_UTF8 + data) if src.bom else data
