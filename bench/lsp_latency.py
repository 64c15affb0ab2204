"""The language server's time to diagnostics, as an editor sees it.

A real ``reshard-lint lsp`` process of the tool environment, spoken to over stdio by a
small client here (standard library only). The document is generated: a 2,250-line
training module, mostly model code with some sharding code, and two findings. The
time of ``didOpen`` is from sending it to receiving the document's
``publishDiagnostics``; that of ``didChange`` (one edited line) includes the server's
debounce, as a keystroke's would. Each repetition opens the document under a new name,
so no analysis is reused; a warm-up document first pays for imports.
"""

from __future__ import annotations

import json
import os
import queue
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lsp_project

_HEADER = '''\
"""A data-parallel training module (generated for the reshard-lint editor benchmark)."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh():
    return Mesh(np.array(jax.devices()), ('data',))

'''

_MODEL = '''\
@dataclasses.dataclass
class Block{i}Config:
    width: int = {width}
    depth: int = 4
    dropout: float = 0.1


def block_{i}_init(rng, cfg):
    keys = jax.random.split(rng, cfg.depth)
    layers = []
    for k in keys:
        w = jax.random.normal(k, (cfg.width, cfg.width)) / jnp.sqrt(cfg.width)
        layers.append({{'w': w, 'b': jnp.zeros((cfg.width,))}})
    return layers


def block_{i}_apply(layers, x, train=False):
    for layer in layers:
        y = x @ layer['w'] + layer['b']
        x = x + jax.nn.gelu(y)
    return x / (1.0 + jnp.abs(x).mean())


@functools.partial(jax.jit, static_argnums=(3,))
def block_{i}_step(layers, x, y, lr):
    def loss(ls):
        out = block_{i}_apply(ls, x, train=True)
        return jnp.mean((out - y) ** 2)

    value, grads = jax.value_and_grad(loss)(layers)
    layers = jax.tree_util.tree_map(lambda p, g: p - lr * g, layers, grads)
    return layers, value


def block_{i}_shard(layers):
    mesh = data_mesh()
    return jax.device_put(layers, NamedSharding(mesh, P()))

'''

# Two real bugs: data handed to half of the devices, and a mesh on reversed devices.
_FINDINGS = '''\
def hand_off(batch):
    full = Mesh(np.array(jax.devices()), ('x',))
    acts = jax.device_put(batch, NamedSharding(full, P('x')))
    half = Mesh(np.array(jax.devices()[:4]), ('x',))
    return jax.device_put(acts, NamedSharding(half, P('x')))


def reversed_mesh():
    return Mesh(np.array(jax.devices()[::-1]), ('data',))

'''


def document(lines_wanted: int = 2250) -> str:
    parts = [_HEADER]
    i = 0
    while sum(p.count("\n") for p in parts) < lines_wanted:
        parts.append(_MODEL.format(i=i, width=64 * (1 + i % 4)))
        if i == 20:
            parts.append(_FINDINGS)
        i += 1
    return "".join(parts)


EXPECTED_CODES = ["RSH201", "RSH102"]


class Client:
    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.inbox.put(json.loads(out.read(length)))

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def request(self, method: str, params: Any, timeout: float) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m, timeout).get("result")

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def wait(self, match: Any, timeout: float) -> dict[str, Any]:
        deadline = time.perf_counter() + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("no answer from the language server")
            msg = self.inbox.get(timeout=left)
            if match(msg):
                return msg

    def diagnostics(self, uri: str, version: int | None, timeout: float) -> list[dict[str, Any]]:
        msg = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                        and m["params"]["uri"] == uri
                        and (version is None or m["params"].get("version") == version), timeout)
        return msg["params"]["diagnostics"]  # type: ignore[no-any-return]

    def cpu_ms(self) -> float:
        """user+sys of the server process so far (Linux /proc; 0 elsewhere)."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def close(self) -> None:
        try:
            self.request("shutdown", None, 10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - the measurement is done; do not hang on a bad exit
            self.proc.kill()


def _median(samples: list[float]) -> float | None:
    return round(statistics.median(samples), 1) if samples else None


@dataclass
class LspLatency:
    lines: int = 0
    open_ms: list[float] = field(default_factory=list)
    change_ms: list[float] = field(default_factory=list)
    # The server's own CPU time for the same spans (user+sys from /proc): on a loaded
    # machine wall time also measures everyone else.
    open_cpu_ms: list[float] = field(default_factory=list)
    change_cpu_ms: list[float] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    status: str = "ok"
    detail: str = ""
    # The same document as one module of a 100-module project (lsp_project.py): an edit
    # timed to its diagnostics, and whether an edit that removes a dependent's finding
    # made the server re-publish that dependent without it.
    project_modules: int = 0
    project_change_ms: list[float] = field(default_factory=list)
    project_change_cpu_ms: list[float] = field(default_factory=list)
    dependent: str = ""

    @property
    def median_project_change_ms(self) -> float | None:
        return _median(self.project_change_ms)

    @property
    def median_project_change_cpu_ms(self) -> float | None:
        return _median(self.project_change_cpu_ms)

    @property
    def median_open_ms(self) -> float | None:
        return _median(self.open_ms)

    @property
    def median_open_cpu_ms(self) -> float | None:
        return _median(self.open_cpu_ms)

    @property
    def median_change_cpu_ms(self) -> float | None:
        return _median(self.change_cpu_ms)

    @property
    def median_change_ms(self) -> float | None:
        return _median(self.change_ms)


def measure_lsp(python: Path, scratch: Path, repeat: int, timeout: float = 120.0,
                options: dict[str, Any] | None = None, extra_args: tuple[str, ...] = ()) -> LspLatency:
    """didOpen and didChange to diagnostics, ``repeat`` times, on a fresh server."""
    scratch.mkdir(parents=True, exist_ok=True)
    text = document()
    out = LspLatency(lines=text.count("\n"))
    probe = subprocess.run([str(python), "-c", "import pygls"], capture_output=True)
    if probe.returncode != 0:
        out.status, out.detail = "skipped", "pygls is not installed in the tool environment (the lsp extra)"
        return out
    client = Client([str(python), "-m", "reshard_lint.frontends.lsp", *extra_args], scratch)
    try:
        client.request("initialize", {"processId": None, "rootUri": scratch.as_uri(), "capabilities": {},
                                      "initializationOptions": options or {}}, timeout)
        client.notify("initialized", {})
        warm = (scratch / "warm.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": warm, "languageId": "python", "version": 1, "text": _HEADER + _FINDINGS}})
        client.diagnostics(warm, None, timeout)
        for rep in range(repeat):
            uri = (scratch / f"train_{rep}.py").as_uri()
            c0 = client.cpu_ms()
            t0 = time.perf_counter()
            client.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": text}})
            diags = client.diagnostics(uri, 1, timeout)
            out.open_ms.append(round((time.perf_counter() - t0) * 1000, 1))
            out.open_cpu_ms.append(round(client.cpu_ms() - c0, 1))
            out.codes = [d["code"] for d in diags]
            edited = text.replace("dropout: float = 0.1", "dropout: float = 0.2", 1)
            c1 = client.cpu_ms()
            t1 = time.perf_counter()
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                     "contentChanges": [{"text": edited}]})
            client.diagnostics(uri, 2, timeout)
            out.change_ms.append(round((time.perf_counter() - t1) * 1000, 1))
            out.change_cpu_ms.append(round(client.cpu_ms() - c1, 1))
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        if sorted(out.codes) != sorted(EXPECTED_CODES):
            out.status, out.detail = "error", f"diagnostics {out.codes}, expected {EXPECTED_CODES}"
    except (TimeoutError, queue.Empty, OSError) as exc:
        out.status, out.detail = "error", f"{type(exc).__name__}: {exc}"
    finally:
        client.close()
    if out.status == "ok":
        _measure_project(python, scratch / "project", text, repeat, timeout, options or {}, extra_args, out)
    return out


def _measure_project(python: Path, root: Path, text: str, repeat: int, timeout: float, options: dict[str, Any],
                     extra_args: tuple[str, ...], out: LspLatency) -> None:
    """The edit of a 2,250-line module of a 100-module project, with its dependents open."""
    train, dependents = lsp_project.write(root, text)
    out.project_modules = lsp_project.MODULES
    source = train.read_text()
    client = Client([str(python), "-m", "reshard_lint.frontends.lsp", *extra_args], root)
    try:
        client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {},
                                      "initializationOptions": options}, timeout)
        client.notify("initialized", {})
        dep_uri = dependents[0].as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": dep_uri, "languageId": "python", "version": 1, "text": dependents[0].read_text()}})
        before = [d["code"] for d in client.diagnostics(dep_uri, 1, timeout)]
        uri = train.as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": source}})
        client.diagnostics(uri, 1, timeout)
        version = 1
        for rep in range(repeat):
            version += 1
            edited = source.replace("dropout: float = 0.1", f"dropout: float = 0.{rep + 2}", 1)
            c0 = client.cpu_ms()
            t0 = time.perf_counter()
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": [{"text": edited}]})
            client.diagnostics(uri, version, timeout)
            out.project_change_ms.append(round((time.perf_counter() - t0) * 1000, 1))
            out.project_change_cpu_ms.append(round(client.cpu_ms() - c0, 1))
        # The unsaved edit that makes the serving mesh the full one: the dependent's
        # crossing goes away, and the server must say so without the dependent changing.
        version += 1
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
            {"text": source.replace(lsp_project.SERVE_LINE, lsp_project.SERVE_FIXED, 1)}]})
        after = [d["code"] for d in client.diagnostics(dep_uri, None, timeout)]
        out.dependent = f"dependent's findings {before} -> {after}"
        if not before or after:
            out.status, out.detail = "error", out.dependent
    except (TimeoutError, queue.Empty, OSError) as exc:
        out.status, out.detail = "error", f"project: {type(exc).__name__}: {exc}"
    finally:
        client.close()
