"""A warm interpreter that has imported jax and forks one child process per program.

``python -c PROGRAM`` spends about 2.7 s of CPU importing jax before the program's first
line, and the strict-mode tests run many small programs. This server imports jax and numpy
once (no backend: JAX starts it on first use, and installs its fork warning only then),
then forks a child per program. The child is a real process like ``python -c``'s: its own
pid and backend (the device count comes from the environment the server was started
with), the program run as ``__main__`` in a fresh namespace, its stdout and stderr in
files, interpreter shutdown (atexit) as usual, and an exit status or a killing signal of
its own.

Protocol, one JSON line each way: ``{"code", "cwd", "stdout", "stderr"}`` in; the child's
``{"pid"}`` and then its ``{"returncode"}`` (negative: killed by that signal) out.
The client side is ``Server``.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve()


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become ``python -c code`` and never return to the server loop."""
    import builtins
    import types

    status = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, fd)
            os.close(out)
        if request.get("cwd"):
            os.chdir(request["cwd"])
        sys.argv = ["-c"]
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main
        try:
            exec(compile(request["code"], "<string>", "exec"), main.__dict__)
            status = 0
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if e.code is not None and not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
        except BaseException:
            sys.excepthook(*sys.exc_info())
            status = 1
    finally:
        # Normal shutdown (atexit handlers, flushing), as at the end of `python -c`.
        raise SystemExit(status)


def serve() -> None:
    import jax  # noqa: F401  (the point of this process)
    import numpy  # noqa: F401
    import jax.sharding  # noqa: F401
    import jax.experimental.multihost_utils  # noqa: F401

    reply = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            reply.close()
            _child(request)
        reply.write(json.dumps({"pid": pid}) + "\n")
        reply.flush()
        _, status = os.waitpid(pid, 0)
        reply.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
        reply.flush()


class Server:
    """The client: one warm interpreter, started with ``env``; programs run one at a time."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HERE)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                     text=True, bufsize=1)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in: IO[str] = self.proc.stdin
        self._out: IO[str] = self.proc.stdout
        self._select = selectors.DefaultSelector()
        self._select.register(self._out, selectors.EVENT_READ)

    def _reply(self, timeout: float | None) -> dict[str, Any] | None:
        if timeout is not None and not self._select.select(timeout):
            return None
        line = self._out.readline()
        if not line:
            raise RuntimeError(f"the jax fork server exited ({self.proc.poll()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def run(self, code: str, cwd: Path | None, timeout: float) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory(prefix="jaxfork-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            request = {"code": code, "cwd": str(cwd) if cwd else None, "stdout": str(out),
                       "stderr": str(err)}
            self._in.write(json.dumps(request) + "\n")
            self._in.flush()
            started = self._reply(None)
            assert started is not None
            done = self._reply(timeout)
            if done is None:
                os.kill(started["pid"], signal.SIGKILL)
                self._reply(None)
                raise subprocess.TimeoutExpired(["jaxfork", code[:60]], timeout)
            return subprocess.CompletedProcess(["jaxfork", code[:60]], done["returncode"],
                                               out.read_text(errors="replace") if out.exists() else "",
                                               err.read_text(errors="replace") if err.exists() else "")

    def close(self) -> None:
        self._in.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._out.close()


if __name__ == "__main__":
    serve()
