"""The JAX versions a project runs on, read from what it installs or pins.

A rule whose failure depends on the JAX version (RSH308: ``process_allgather`` of a
global array without ``tiled=True`` raises from JAX 0.8) says which version it means.
Read, in this order, from the project root (``roots.find_root``):

1. an installed ``jax-X.dist-info`` in a virtual environment at the root (``.venv``,
   ``venv``, ``env``): the version that runs;
2. requirement lines naming ``jax`` (``jax==0.4.30``, ``jax[tpu]>=0.8,<0.9``) in
   ``pyproject.toml`` (``[project]`` dependencies and optional dependencies),
   ``requirements*.txt`` and ``setup.cfg`` (``install_requires``): every bound they set.

Poetry's ``^``/``~`` forms, markers and anything else are not read: no bound.
Standard library only; the result is kept per root and the files' modification times.
"""

from __future__ import annotations

import configparser
import glob
import os
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..core import vocabulary as api
from .roots import find_root

Version = tuple[int, ...]

_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(\[[^\]]*\])?\s*(.*)$")
_CLAUSE = re.compile(r"^\s*(==|>=|<=|~=|!=|>|<)\s*([0-9][0-9A-Za-z.*+\-]*)\s*$")
_VENVS = (".venv", "venv", "env")


@dataclass(frozen=True)
class JaxVersions:
    """What the project says of its JAX: ``text`` for messages (``jax==0.10.2 in
    pyproject.toml``), ``low`` the lowest version it allows (inclusive) and ``high`` the
    first version it excludes from above, where known."""

    text: str
    low: Optional[Version]
    high: Optional[Version]

    def all_from(self, version: Version) -> bool:
        """Every version it allows is ``version`` or later."""
        return self.low is not None and self.low >= version

    def none_from(self, version: Version) -> bool:
        """Every version it allows is before ``version``."""
        return self.high is not None and self.high <= version


def parse_version(text: str) -> Optional[Version]:
    """``0.4.30`` -> (0, 4, 30); a pre-release or wildcard tail is dropped."""
    parts: list[int] = []
    for piece in text.split("."):
        m = re.match(r"\d+", piece)
        if m is None:
            break
        parts.append(int(m.group(0)))
        if m.group(0) != piece:
            break
    return tuple(parts) if parts else None


def _next(version: Version) -> Version:
    """The first release after every ``version.*``: (0, 4, 30) -> (0, 4, 31)."""
    return version[:-1] + (version[-1] + 1,)


def bounds(spec: str) -> Optional[tuple[Optional[Version], Optional[Version]]]:
    """(low inclusive, high exclusive) of a specifier set such as ``>=0.8,<0.9``; None
    when a clause is not read."""
    low: Optional[Version] = None
    high: Optional[Version] = None
    spec = spec.split(";", 1)[0].strip()
    if not spec:
        return (None, None)
    for clause in spec.split(","):
        m = _CLAUSE.match(clause)
        if m is None:
            return None
        op, v = m.group(1), parse_version(m.group(2).rstrip(".*"))
        if v is None:
            return None
        lo: Optional[Version] = None
        hi: Optional[Version] = None
        if op == "==":
            lo, hi = v, _next(v)
        elif op in (">=", ">"):
            lo = v if op == ">=" else _next(v)
        elif op == "<":
            hi = v
        elif op == "<=":
            hi = _next(v)
        elif op == "~=":
            lo, hi = v, (_next(v[:-1]) if len(v) > 1 else None)
        if lo is not None and (low is None or lo > low):
            low = lo
        if hi is not None and (high is None or hi < high):
            high = hi
    return (low, high)


def _requirement(line: str) -> Optional[tuple[str, tuple[Optional[Version], Optional[Version]]]]:
    """(the requirement as written, its bounds) for a line that names jax."""
    line = line.split("#", 1)[0].strip().strip("\"',")
    m = _REQ.match(line)
    if m is None or m.group(1).lower() != api.JAX_PACKAGE:
        return None
    found = bounds(m.group(3))
    return (line, found) if found is not None else None


def _pyproject_lines(path: str) -> list[str]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ValueError):
        return []
    project = data.get("project") if isinstance(data, dict) else None
    if not isinstance(project, dict):
        return []
    lines = [d for d in project.get("dependencies") or [] if isinstance(d, str)]
    optional = project.get("optional-dependencies")
    if isinstance(optional, dict):
        for group in optional.values():
            lines.extend(d for d in group or [] if isinstance(d, str))
    return lines


def _setup_cfg_lines(path: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return []
    return parser.get("options", "install_requires", fallback="").splitlines()


def _text_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _installed(root: str) -> Optional[tuple[str, Version, str]]:
    """(the environment, the version, its METADATA file) of a JAX installed at the root."""
    for venv in _VENVS:
        for info in sorted(glob.glob(os.path.join(root, venv, "lib", "python*", "site-packages",
                                                  f"{api.JAX_PACKAGE}-*.dist-info"))):
            v = parse_version(os.path.basename(info)[len(api.JAX_PACKAGE) + 1:-len(".dist-info")])
            if v is not None:
                return (f"{venv}/", v, os.path.join(info, "METADATA"))
    return None


def _sources(root: str) -> list[str]:
    out = [os.path.join(root, "pyproject.toml"), os.path.join(root, "setup.cfg")]
    out += sorted(glob.glob(os.path.join(root, "requirements*.txt")))
    return [p for p in out if os.path.isfile(p)]


def jax_versions(path: str) -> Optional[JaxVersions]:
    """What the project of ``path`` installs or pins of JAX; None where it says nothing."""
    if not path or path.startswith("<"):
        return None
    root = find_root(path)
    stamps = tuple((p, os.path.getmtime(p)) for p in _sources(root))
    return _read(root, stamps)


def pin_files(path: str) -> list[str]:
    """The files ``jax_versions`` reads for ``path`` (an installed JAX: its METADATA): a
    result that rests on them holds while they are unchanged (the cache's dependencies)."""
    if not path or path.startswith("<"):
        return []
    root = find_root(path)
    out = _sources(root)
    installed = _installed(root)
    if installed is not None:
        out.append(installed[2])
    return out


@lru_cache(maxsize=64)
def _read(root: str, stamps: tuple[tuple[str, float], ...]) -> Optional[JaxVersions]:
    installed = _installed(root)
    if installed is not None:
        where, v, _ = installed
        text = ".".join(map(str, v))
        return JaxVersions(f"JAX {text} (installed in {where})", v, _next(v))
    low: Optional[Version] = None
    high: Optional[Version] = None
    said: list[str] = []
    for p, _ in stamps:
        name = os.path.basename(p)
        lines = _pyproject_lines(p) if name == "pyproject.toml" else \
            _setup_cfg_lines(p) if name == "setup.cfg" else _text_lines(p)
        for line in lines:
            req = _requirement(line)
            if req is None:
                continue
            written, (lo, hi) = req
            if lo is None and hi is None:
                continue
            said.append(f"{written} in {name}")
            if lo is not None and (low is None or lo > low):
                low = lo
            if hi is not None and (high is None or hi < high):
                high = hi
    if not said:
        return None
    return JaxVersions(", ".join(said), low, high)
