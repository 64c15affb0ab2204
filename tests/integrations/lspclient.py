"""A small LSP client over stdio: Content-Length framing, requests, notifications.

It drives a real server process the way an editor does; tests wait for messages with a
deadline that only bounds a hang (a failure, not a timing assertion).
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

# reshard-lint's language server, started as an editor starts it
SERVER = [sys.executable, "-m", "reshard_lint.frontends.lsp"]

Message = dict[str, Any]


class LspClient:
    def __init__(self, argv: Sequence[str], cwd: str | Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd, env=env)
        self.next_id = 0
        self.inbox: queue.Queue[Message | None] = queue.Queue()
        self.notifications: list[Message] = []  # every notification seen, in order
        self.responses: dict[int, Message] = {}
        self.lock = threading.Lock()
        self.stderr_chunks: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # --- wire ---------------------------------------------------------------------------

    def _send(self, msg: Message) -> None:
        body = json.dumps(msg).encode("utf-8")
        assert self.proc.stdin is not None
        with self.lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            headers: dict[str, str] = {}
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = out.read(int(headers["content-length"]))
            msg = json.loads(body)
            if "method" in msg and "id" in msg:
                # A request from the server (configuration, registerCapability, progress):
                # answer as a minimal editor would, so the server never waits on us.
                result: Any = None
                if msg["method"] == "workspace/configuration":
                    result = [None for _ in msg["params"]["items"]]
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                continue
            self.inbox.put(msg)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read(4096), b""):  # type: ignore[union-attr]
            self.stderr_chunks.append(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def _pump(self, deadline: float) -> Message:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"no message from the server in time; stderr:\n{self.stderr}")
        try:
            msg = self.inbox.get(timeout=remaining)
        except queue.Empty:
            raise TimeoutError(f"no message from the server in time; stderr:\n{self.stderr}") from None
        if msg is None:
            raise EOFError(f"server closed its output; stderr:\n{self.stderr}")
        if "id" in msg and "method" not in msg:
            self.responses[msg["id"]] = msg
        else:
            self.notifications.append(msg)
        return msg

    # --- protocol -----------------------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> None:
        msg: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def request(self, method: str, params: Any = None, timeout: float = 60) -> Any:
        self.next_id += 1
        rid = self.next_id
        msg: Message = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)
        deadline = time.monotonic() + timeout
        while rid not in self.responses:
            self._pump(deadline)
        resp = self.responses.pop(rid)
        if "error" in resp:
            raise RuntimeError(f"{method} failed: {resp['error']}")
        return resp.get("result")

    def wait_for(self, predicate: Callable[[Message], bool], timeout: float = 60) -> Message:
        """The next notification (not seen before this call) that satisfies ``predicate``."""
        deadline = time.monotonic() + timeout
        while True:
            msg = self._pump(deadline)
            if "method" in msg and predicate(msg):
                return msg

    def wait_diagnostics(self, uri: str, timeout: float = 60,
                         check: Callable[[list[dict[str, Any]]], bool] = lambda d: True,
                         ) -> list[dict[str, Any]]:
        msg = self.wait_for(lambda m: m["method"] == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri and check(m["params"]["diagnostics"]), timeout)
        return msg["params"]["diagnostics"]

    def initialize(self, root: Path, options: Any = None,
                   capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        caps = capabilities if capabilities is not None else {
            "textDocument": {
                "publishDiagnostics": {"relatedInformation": True, "codeDescriptionSupport": True,
                                       "versionSupport": True},
                "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                    "quickfix", "source", "source.fixAll"]}}, "isPreferredSupport": True},
                "synchronization": {"didSave": True},
            },
            "workspace": {"configuration": True, "didChangeConfiguration": {"dynamicRegistration": False}},
        }
        params: dict[str, Any] = {"processId": None, "rootUri": root.as_uri(), "capabilities": caps,
                                  "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]}
        if options is not None:
            params["initializationOptions"] = options
        result = self.request("initialize", params)
        self.notify("initialized", {})
        return result

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}})

    def change_full(self, uri: str, text: str, version: int) -> None:
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": [{"text": text}]})

    def shutdown(self, timeout: float = 30) -> int:
        self.request("shutdown")
        self.notify("exit")
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


# --- applying edits as an editor does (UTF-16 positions) -------------------------------------


_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _offset(text: str, line: int, character: int) -> int:
    # LSP ends lines at \n, \r\n and \r only (str.splitlines also breaks at \f and others).
    lines = _LSP_LINE.findall(text)
    start = sum(len(x) for x in lines[:line])
    if line >= len(lines):
        return len(text)
    body = lines[line].rstrip("\r\n")
    units = 0
    for i, ch in enumerate(body):
        if units >= character:
            return start + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return start + len(body)


def apply_text_edits(text: str, edits: list[dict[str, Any]]) -> str:
    spans = []
    for e in edits:
        r = e["range"]
        a = _offset(text, r["start"]["line"], r["start"]["character"])
        b = _offset(text, r["end"]["line"], r["end"]["character"])
        spans.append((a, b, e["newText"]))
    for a, b, new in sorted(spans, reverse=True):
        text = text[:a] + new + text[b:]
    return text


def apply_workspace_edit(text: str, uri: str, edit: dict[str, Any]) -> str:
    if "changes" in edit:
        return apply_text_edits(text, edit["changes"].get(uri, []))
    for change in edit.get("documentChanges", []):
        if change["textDocument"]["uri"] == uri:
            text = apply_text_edits(text, change["edits"])
    return text


def utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2
