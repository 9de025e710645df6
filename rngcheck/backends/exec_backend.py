"""Backends in another process: ``exec:COMMAND`` (any language) and the isolated Python worker.

``--backend 'exec:./my_impl --flag'`` starts the command (split like a shell would, never run
by one) and talks the exec protocol (docs/exec-protocol.md) over its stdin and stdout. Every
backend other than the numpy reference runs this way: a Python backend is hosted by
``python -m rngcheck.backends.worker SPEC``, which speaks the same protocol.

Each call, and the handshake, has a time limit (``timeout``, seconds). A child that dies, hangs, or writes
anything but the protocol to stdout ends that call with BackendCrashed, BackendTimeout or
BackendProtocolError (with the tail of its stderr), and the next call starts a fresh child.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from ..description import FEATURE_LEVEL_4_0
from ..errors import (BackendCrashed, BackendProtocolError, BackendSpecError, BackendTimeout, BackendUnavailable,
                      NotApplicable, Rejected, RemoteError)
from . import Backend
from . import exec_protocol as P

DEFAULT_TIMEOUT = 120.0
STDERR_TAIL = 2000


def signal_name(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"signal {-returncode} ({signal.Signals(-returncode).name})"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


class ExecBackend(Backend):
    """A backend process spoken to over the exec protocol."""

    usage = "give the command: --backend 'exec:./my_impl --flag' (docs/exec-protocol.md)"

    def __init__(self, command: list[str] | None = None, *, timeout: float = DEFAULT_TIMEOUT, label: str | None = None,
                 env: dict | None = None):
        if not command:
            raise BackendSpecError("exec: needs a command, e.g. exec:./my_impl")
        self.command = list(command)
        self.timeout = float(timeout)
        self.env = env
        self.label = label or shlex.join(self.command)
        self.process = None
        self.stderr_file = None
        self.hello = self._start()  # a child that cannot start is a one-line error now, not per case
        self.name = self.hello.get("name") or self.label
        self.validates = self.hello.get("validates") is True

    @classmethod
    def from_options(cls, options: str) -> "ExecBackend":
        try:
            command = shlex.split(options)
        except ValueError as error:
            raise BackendSpecError(f"exec:{options}: {error}") from None
        return cls(command)

    # -- the child process ------------------------------------------------------------------
    def _start(self) -> dict:
        if self.stderr_file is not None:
            self.stderr_file.close()
        self.stderr_file = tempfile.TemporaryFile()
        try:
            self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=self.stderr_file, env=self.env, start_new_session=True)
        except OSError as error:
            raise BackendSpecError(f"exec: cannot start {self.command[0]!r}: {error.strerror}") from None
        try:
            tag, payload = self._receive(time.monotonic() + self.timeout)  # a slow start (a kernel build) counts
        except (BackendCrashed, BackendTimeout, BackendProtocolError) as error:
            self._kill()
            raise BackendUnavailable(f"{self.label}: no handshake: {error}"
                                     + (f" (stderr: {error.stderr_tail.strip().splitlines()[-1]})"
                                        if error.stderr_tail.strip() else "")) from None
        if tag != P.HELLO:
            self._kill()
            raise BackendUnavailable(f"{self.label}: handshake expected HELO, got {tag!r}")
        try:
            hello = json.loads(payload)
        except ValueError:
            hello = None
        if not isinstance(hello, dict):
            self._kill()
            raise BackendUnavailable(f"{self.label}: handshake is not a JSON object")
        if hello.get("protocol") != P.PROTOCOL_VERSION:
            self._kill()
            raise BackendUnavailable(f"{self.label}: speaks protocol {hello.get('protocol')!r}, "
                                     f"rngcheck speaks {P.PROTOCOL_VERSION}")
        if hello.get("error"):
            self._kill()
            error_class = BackendUnavailable if hello.get("unavailable") else BackendSpecError
            raise error_class(str(hello["error"]))
        return hello

    def _stderr_tail(self) -> str:
        if self.stderr_file is None:
            return ""
        try:
            self.stderr_file.seek(0, os.SEEK_END)
            size = self.stderr_file.tell()
            self.stderr_file.seek(max(0, size - STDERR_TAIL))
            return self.stderr_file.read().decode(errors="replace")
        except (OSError, ValueError):
            return ""

    def _kill(self) -> None:
        """End the child and everything it started (its process group), then reap it."""
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # the group outlives an exited leader
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            for stream in (self.process.stdin, self.process.stdout):
                try:
                    stream.close()
                except (OSError, ValueError, BrokenPipeError):
                    pass
        self.process = None

    def _died(self, what: str) -> BackendCrashed:
        """The child closed its stdout: it exited, or it will be ended now."""
        returncode = None
        if self.process is not None:
            try:
                returncode = self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass  # alive but deaf: closed stdout and kept running
        tail = self._stderr_tail()
        self._kill()
        how = signal_name(returncode) if returncode is not None else "closed its output and was ended"
        return BackendCrashed(f"{self.label} {what}: {how}", tail)

    def _send(self, data: bytes, deadline: float) -> None:
        fd = self.process.stdin.fileno()
        view = memoryview(data)
        os.set_blocking(fd, False)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                tail = self._stderr_tail()
                self._kill()
                raise BackendTimeout(f"{self.label} did not read its input within {self.timeout:g} s", tail)
            _, writable, _ = select.select([], [fd], [], min(remaining, 1.0))
            if not writable:
                if self.process.poll() is not None:
                    raise self._died("died while reading its input")
                continue
            try:
                written = os.write(fd, view[:1 << 20])
            except BrokenPipeError:
                raise self._died("died while reading its input") from None
            view = view[written:]

    def _read_exact(self, count: int, deadline: float) -> bytes:
        fd = self.process.stdout.fileno()
        chunks, got = [], 0
        while got < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                tail = self._stderr_tail()
                self._kill()
                raise BackendTimeout(f"{self.label} did not answer within {self.timeout:g} s", tail)
            readable, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if not readable:
                continue
            chunk = os.read(fd, min(count - got, 1 << 20))
            if not chunk:
                raise self._died("exited mid-protocol" if got or chunks else "exited")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _receive(self, deadline: float) -> tuple[bytes, bytes]:
        tag, length = P.HEADER.unpack(self._read_exact(P.HEADER.size, deadline))
        if tag not in P.TAGS:
            tail = self._stderr_tail()
            self._kill()
            raise BackendProtocolError(f"{self.label} wrote {tag!r} where a protocol message should start "
                                       f"(noise on stdout?)", tail)
        return tag, self._read_exact(length, deadline)

    def _json_object(self, tag: bytes, payload: bytes) -> dict:
        try:
            body = json.loads(payload or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            tail = self._stderr_tail()
            self._kill()
            raise BackendProtocolError(f"{self.label}: the {tag.decode()} payload is not a JSON object", tail)
        return body

    # -- the backend contract ----------------------------------------------------------------
    def describe(self) -> dict[str, str]:
        described = {str(k): str(v) for k, v in dict(self.hello.get("describe") or {}).items()}
        described.setdefault("command", self.label)
        described["exec-protocol"] = str(P.PROTOCOL_VERSION)
        return described

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        if self.process is None or self.process.poll() is not None:
            self._kill()
            self.hello = self._start()
        deadline = time.monotonic() + self.timeout
        self._send(P.frame(P.CALL, P.encode_call(state, sizes, strides, buffer, output_state, feature_level)),
                   deadline)
        tag, payload = self._receive(deadline)
        if tag in (P.REJECT, P.FAIL):
            body = self._json_object(tag, payload)
            if tag == P.REJECT:
                rule = body.get("rule")
                raise Rejected(str(body.get("message", "rejected")), rule=rule if isinstance(rule, str) else None)
            if body.get("not_applicable") is True:
                raise NotApplicable(str(body.get("error", "not applicable")))
            raise RemoteError(str(body.get("error", "the backend failed")))
        if tag != P.DONE:
            tail = self._stderr_tail()
            self._kill()
            raise BackendProtocolError(f"{self.label} answered a CALL with {tag!r}", tail)
        try:
            returned, words = P.decode_done(payload)
        except P.ProtocolError as error:
            tail = self._stderr_tail()
            self._kill()
            raise BackendProtocolError(f"{self.label}: {error}", tail) from None
        target = np.asarray(buffer).view("<u4")
        if words.size != target.size:
            raise RemoteError(f"returned a buffer of {words.size} words for one of {target.size}")
        target[:] = words
        return returned

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            try:
                self._send(P.frame(P.QUIT), time.monotonic() + 5)
                self.process.wait(timeout=5)
            except (BackendCrashed, BackendTimeout, subprocess.TimeoutExpired, OSError):
                pass
        self._kill()
        if self.stderr_file is not None:
            self.stderr_file.close()
            self.stderr_file = None


def isolated(spec: str, *, timeout: float = DEFAULT_TIMEOUT, env: dict | None = None) -> ExecBackend:
    """A Python backend (any spec ``rngcheck.backends.load`` takes) hosted in a worker process.

    ``env``: variables added to the worker's environment.
    """
    return ExecBackend([sys.executable, "-m", "rngcheck.backends.worker", spec], timeout=timeout, label=spec,
                       env={**os.environ, **env} if env else None)
