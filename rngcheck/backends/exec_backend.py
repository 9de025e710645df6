"""Backends in another process: ``exec:COMMAND`` (any language) and the isolated Python worker.

``--backend 'exec:./my_impl --flag'`` starts the command (split like a shell would, never run
by one) and talks the exec protocol (docs/exec-protocol.md) over its stdin and stdout. Every
backend other than the numpy reference runs this way: a Python backend is hosted by
``python -m rngcheck.backends.worker SPEC``, which speaks the same protocol.

Every contract method crosses as one kind of request of the protocol's table
(exec_protocol.MESSAGES): random_generator as CALL, and the optional ones (the numbers layer's DRAW,
the generators' GENB, other operators' OPER) only for what the child's HELO advertises; a call the
child did not advertise is not applicable and is never sent. ExecBackend has one exchange for all of
them (``_ask``); the process, its handshake and the restart rule below are its Child's.

Each call, and the handshake, has a time limit (``timeout``, seconds). A child that
dies, hangs, or writes anything but the protocol to stdout ends that call with BackendCrashed, BackendTimeout or
BackendProtocolError (with the tail of its stderr), and the next call starts a fresh child. The
restart rule (``max_restarts``, ``--max-worker-restart``): the backend is given up, every later
call raising BackendStopped at once, after ``max_restarts`` hung calls in all (counted over its
life, as pytest-xdist counts restarts: a hang costs a whole time limit, so hangs cost at most
``max_restarts`` time limits, even from a child that answers once and then hangs in every fresh
worker), or after ``max_restarts`` fresh children in a row that fail to start (no handshake). A
child that crashes on a call after its handshake costs only a restart and is not counted: a
correct backend that does not validate and crashes on invalid descriptions is still run on
every other case.

A child cannot exhaust the runner: its stderr is kept as a bounded tail, and a message longer
than the call can need is refused from its header, before it is read. Children are tied to the
run's lifetime (see :mod:`rngcheck.backends.lifetime`).
"""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from ..description import FEATURE_LEVEL_4_0
from ..errors import (
    BackendCrashed,
    BackendProcessFailed,
    BackendProtocolError,
    BackendSpecError,
    BackendStopped,
    BackendTimeout,
    BackendUnavailable,
    NotApplicable,
    Rejected,
    RemoteError,
)
from . import exec_protocol as P
from . import lifetime
from .contract import Backend

E = TypeVar("E", bound=Exception)
T = TypeVar("T")

DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_RESTARTS = 3  # hung calls in all, or fresh children in a row that fail to start
STDERR_TAIL = 2000        # bytes of the child's stderr shown with a failure
STDERR_KEPT = 64 * 1024   # bytes of it kept in memory; the rest is read and dropped
HELLO_LIMIT = 1 << 20     # a HELO, RJCT or FAIL is a small JSON object
ANSWER_LIMIT = 1 << 20


MAX_COMMAND = 128 * 1024  # characters of an exec: command (Linux's one-argument limit); shlex is quadratic past it


def split_command(text: str) -> list[str]:
    """An exec: command split as a shell would (never run by one); a command longer than MAX_COMMAND
    characters, or one shlex cannot split, is a one-line BackendSpecError."""
    if len(text) > MAX_COMMAND:
        raise BackendSpecError(f"exec: a command of {len(text)} characters, more than {MAX_COMMAND}: "
                               "put it in a script and give the script")
    try:
        return shlex.split(text)
    except ValueError as error:
        raise BackendSpecError(f"exec:{text[:200]}: {error}") from None


class StderrTail:
    """The last STDERR_KEPT bytes a child wrote to stderr, drained by a thread so the child never
    blocks on a full pipe and never fills a disk."""

    def __init__(self, fd: int):
        self.fd = fd
        self.kept = bytearray()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._drain, name="rngcheck-stderr", daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                break
            with self.lock:
                self.kept += chunk
                if len(self.kept) > STDERR_KEPT:
                    del self.kept[:len(self.kept) - STDERR_KEPT]
        try:
            os.close(self.fd)
        except OSError:
            pass

    def tail(self, wait: float = 0.0) -> str:
        if wait:
            self.thread.join(wait)  # a child that just died: what it wrote last is still in the pipe
        else:
            self._catch_up()
        with self.lock:
            return bytes(self.kept[-STDERR_TAIL:]).decode(errors="replace")

    def _catch_up(self, limit: float = 0.5) -> None:
        """A live child: give the draining thread time (at most ``limit`` seconds) to read what
        is already in the pipe, so the tail holds everything written before the failure (on a
        loaded machine the thread may not have run since the child wrote)."""
        deadline = time.monotonic() + limit
        while self.thread.is_alive() and time.monotonic() < deadline:
            try:
                pending, _, _ = select.select([self.fd], [], [], 0)
            except (OSError, ValueError):   # the thread closed the pipe at its end
                return
            if not pending:
                return
            time.sleep(0.002)


def signal_name(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"signal {-returncode} ({signal.Signals(-returncode).name})"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


class Child:
    """The process behind one exec backend, across its restarts: the process and its pipes, its
    stderr's tail, its HELO, and the counts of the restart rule (the module doc)."""

    def __init__(self, command: list[str], *, label: str, timeout: float, env: dict | None, max_restarts: int):
        self.command = command
        self.label = label
        self.timeout = timeout
        self.env = env
        self.max_restarts = max_restarts
        self.failed_starts = 0      # fresh children in a row that failed to start (no handshake)
        self.hangs = 0              # calls and handshakes that hung, over the backend's life
        self.stopped: str | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.stderr: StderrTail | None = None
        self.hello: dict = {}       # the HELO of the last child that shook hands
        self.start_failure: BackendProcessFailed | None = None   # why the last start failed
        self.owner = lifetime.new_owner_mark()
        lifetime.watch(self.owner)  # its descendants die with rngcheck, a SIGKILL included

    # -- starting and ending ----------------------------------------------------------------
    def start(self) -> None:
        """A fresh child and its HELO (``hello``). A child that fails to shake hands raises
        BackendUnavailable (a one-line error when the backend is loaded); ``restart`` turns that into
        the call's status."""
        environment = dict(os.environ if self.env is None else self.env)
        environment[lifetime.OWNER_VARIABLE] = self.owner
        read_end, write_end = os.pipe()
        try:
            self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=write_end, env=environment, start_new_session=True,
                                            preexec_fn=lifetime.preexec(os.getpid()))
        except OSError as error:
            os.close(read_end)
            raise BackendSpecError(f"exec: cannot start {self.command[0]!r}: {error.strerror}") from None
        finally:
            os.close(write_end)
        self.stderr = StderrTail(read_end)
        try:
            # a slow start (a kernel build) counts against the time limit
            tag, payload = self.receive(time.monotonic() + self.timeout, HELLO_LIMIT)
        except BackendProcessFailed as error:
            self.start_failure = error
            said = error.last_stderr_line()
            raise self._refused(BackendUnavailable, f"{self.label}: no handshake: {error}"
                                + (f" (stderr: {said})" if said else "")) from None
        except BaseException:  # SIGTERM or Ctrl-C while the child starts: it goes with us
            self.kill()
            raise
        self.start_failure = None
        self.hello = self._handshake(tag, payload)

    def _handshake(self, tag: bytes, payload: bytes) -> dict:
        """The HELO a child sent, checked: the protocol's version, no error of its own, and each HELO
        list of the optional kinds (exec_protocol.MESSAGES) a list of names."""
        if tag != P.HELLO:
            raise self._refused(BackendUnavailable, f"{self.label}: handshake expected HELO, got {tag!r}")
        try:
            hello = json.loads(payload)
        except ValueError:
            hello = None
        if not isinstance(hello, dict):
            raise self._refused(BackendUnavailable, f"{self.label}: handshake is not a JSON object")
        if hello.get("protocol") != P.PROTOCOL_VERSION:
            raise self._refused(BackendUnavailable, f"{self.label}: speaks protocol {hello.get('protocol')!r}, "
                                                    f"rngcheck speaks {P.PROTOCOL_VERSION}")
        if hello.get("error"):  # the child's own one line, as it wrote it
            unavailable = hello.get("unavailable")
            raise self._refused(BackendUnavailable if unavailable else BackendSpecError, str(hello["error"]))
        for message in P.MESSAGES.values():
            names = hello.get(message.advertised, []) if message.advertised else []
            if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
                raise self._refused(BackendUnavailable, f"{self.label}: the handshake's {message.advertised} is not "
                                                        f"a list of names: {names!r}"[:300])
        return hello

    def restart(self) -> None:
        """A fresh child for the next call, or BackendStopped when ``max_restarts`` fresh children in
        a row failed before answering a call. The start's own failure is the call's: a child that hangs
        before its HELO is a timeout, one that dies is a crash."""
        if self.stopped:
            raise BackendStopped(self.stopped)
        self.kill()
        try:
            self.start()
        except BackendUnavailable as error:
            self._count_failed_start()
            if isinstance(self.start_failure, BackendTimeout):
                self._count_hang()
            cause = self.start_failure
            if isinstance(cause, BackendProcessFailed):
                raise type(cause)(f"{self.label} (a fresh worker, before its handshake): {cause}",
                                  cause.stderr_tail) from None
            raise BackendCrashed(f"{error}") from None

    def _refused(self, error_class, message: str) -> Exception:
        """The child cannot serve as a backend (no usable handshake): end it, and return the
        one-line error to raise (BackendUnavailable, or BackendSpecError for a child that says
        its spec is wrong)."""
        self.kill()
        return error_class(message)

    def ended(self, error_class: type[E], message: str) -> E:
        """The call failed in the child: take its stderr's tail (before the kill, so a child that
        just died has written it all), end it and its group, and return the error to raise
        (BackendCrashed, BackendTimeout or BackendProtocolError, carrying the tail)."""
        tail = self.stderr_tail()
        self.kill()
        return error_class(message, tail)

    def stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        dead = self.process is None or self.process.poll() is not None
        return self.stderr.tail(wait=0.5 if dead else 0.0)

    def kill(self) -> None:
        """End the child and everything it started (its process group, and any descendant that
        left the group but carries the run's mark), then reap it."""
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # the group outlives an exited leader
            except (ProcessLookupError, PermissionError):
                pass
            lifetime.kill_marked(self.owner)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            for stream in (self.process.stdin, self.process.stdout):
                if stream is None:   # never: the child is started with both pipes
                    continue
                try:
                    stream.close()
                except (OSError, ValueError, BrokenPipeError):
                    pass
        self.process = None

    def quit(self) -> None:
        """QUIT to a live child, then its end, whether it obeys or not."""
        if self.process is not None and self.process.poll() is None:
            try:
                self.send(P.frame(P.QUIT), time.monotonic() + 5)
                self.process.wait(timeout=5)
            except (BackendCrashed, BackendTimeout, subprocess.TimeoutExpired, OSError):
                pass
        self.kill()

    def _died(self, what: str) -> BackendCrashed:
        """The child closed its stdout: it exited, or it will be ended now."""
        returncode = None
        if self.process is not None:
            try:
                returncode = self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass  # alive but deaf: closed stdout and kept running
        how = signal_name(returncode) if returncode is not None else "closed its output and was ended"
        return self.ended(BackendCrashed, f"{self.label} {what}: {how}")

    # -- the pipes ----------------------------------------------------------------------------
    def send(self, data: bytes, deadline: float) -> None:
        assert self.process is not None and self.process.stdin is not None, "a call goes to a started child"
        fd = self.process.stdin.fileno()
        view = memoryview(data)
        os.set_blocking(fd, False)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self.ended(BackendTimeout, f"{self.label} did not read its input within {self.timeout:g} s")
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
        assert self.process is not None and self.process.stdout is not None, "a call goes to a started child"
        fd = self.process.stdout.fileno()
        chunks: list[bytes] = []
        got = 0
        while got < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self.ended(BackendTimeout, f"{self.label} did not answer within {self.timeout:g} s")
            readable, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if not readable:
                continue
            chunk = os.read(fd, min(count - got, 1 << 20))
            if not chunk:
                raise self._died("exited mid-protocol" if got or chunks else "exited")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def receive(self, deadline: float, limit) -> tuple[bytes, bytes]:
        """The next message; ``limit`` is the largest payload it may have (a number, or a function of
        the tag), checked on its header: a child cannot make the runner buffer what no answer needs."""
        tag, length = P.HEADER.unpack(self._read_exact(P.HEADER.size, deadline))
        if tag not in P.TAGS:
            raise self.ended(BackendProtocolError, f"{self.label} wrote {tag!r} where a protocol message should "
                                                   f"start (noise on stdout?)")
        most = limit(tag) if callable(limit) else limit
        if length > most:
            raise self.ended(BackendProtocolError, f"{self.label} announced a {tag.decode(errors='replace')} of "
                                                   f"{length} bytes where this call's answer is at most {most} bytes")
        return tag, self._read_exact(length, deadline)

    def answer(self, deadline: float, limit) -> tuple[bytes, bytes]:
        """The answer to a request, as ``receive`` reads it: a child that answers ends the restart
        rule's fresh children in a row that failed to start."""
        answer = self.receive(deadline, limit)
        self.failed_starts = 0
        return answer

    # -- the restart rule --------------------------------------------------------------------
    def guarded(self, exchange: Callable[[float], T], run_deadline: float | None) -> T:
        """One request and its answer, ``exchange(deadline)``, with a live child: a fresh one when the
        last is gone, the restart cap counted, and the run's deadline (``run_deadline``,
        time.monotonic(); --deadline) applied."""
        if self.stopped:
            raise BackendStopped(self.stopped)
        if self.process is None or self.process.poll() is not None:
            self.restart()
        deadline = time.monotonic() + self.timeout
        try:
            if run_deadline is not None and run_deadline < deadline:
                try:
                    return exchange(run_deadline)
                except BackendTimeout:   # not the child's fault: the run's time is up
                    raise BackendStopped("the run's --deadline passed during this call") from None
            return exchange(deadline)
        except BackendTimeout:
            self._count_hang()
            raise

    def _count_failed_start(self) -> None:
        self.failed_starts += 1
        if self.failed_starts >= self.max_restarts and not self.stopped:
            self.stopped = (f"backend stopped answering: {self.failed_starts} fresh workers in a row failed "
                            f"to start (--max-worker-restart {self.max_restarts})")

    def _count_hang(self) -> None:
        """A call (or a handshake) that used its whole time limit: counted over the backend's life, not
        in a row, so that hangs cost at most max_restarts time limits however the child behaves between
        them (one that answers once and then hangs, in every fresh worker, included)."""
        self.hangs += 1
        if self.hangs >= self.max_restarts and not self.stopped:
            self.stopped = (f"backend stopped answering: {self.hangs} calls hung, each ended after its "
                            f"{self.timeout:g} s time limit (--max-worker-restart {self.max_restarts})")


class ExecBackend(Backend):
    """A backend process spoken to over the exec protocol. Each contract method is one call of
    ``_ask`` with its entry of the protocol's table (exec_protocol.MESSAGES): a new kind of request
    is an entry there and a one-line method here. The process, across its restarts, is ``child``."""

    usage = "give the command: --backend 'exec:./my_impl --flag' (docs/exec-protocol.md)"
    fork_safe = False  # whatever the child is: a forked copy would share its pipes

    def __init__(self, command: list[str] | None = None, *, timeout: float = DEFAULT_TIMEOUT, label: str | None = None,
                 env: dict | None = None, max_restarts: int = DEFAULT_MAX_RESTARTS):
        if not command:
            raise BackendSpecError("exec: needs a command, e.g. exec:./my_impl")
        self.label = label or shlex.join(command)
        self.run_deadline: float | None = None  # time.monotonic() when the whole run must end (--deadline)
        self.child = Child(list(command), label=self.label, timeout=float(timeout), env=env,
                           max_restarts=max(1, int(max_restarts)))
        self.child.start()  # a child that cannot start is a one-line error now, not per case
        self.name = self.child.hello.get("name") or self.label
        self.validates = self.child.hello.get("validates") is True

    @classmethod
    def from_options(cls, options: str) -> ExecBackend:
        return cls(split_command(options))

    def describe(self) -> dict[str, str]:
        described = {str(k): str(v) for k, v in dict(self.child.hello.get("describe") or {}).items()}
        described.setdefault("command", self.label)
        described["exec-protocol"] = str(P.PROTOCOL_VERSION)
        return described

    # -- the backend contract: one request each ------------------------------------------------
    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        return self._ask(P.RANDOM_GENERATOR, state, sizes, strides, buffer, output_state, feature_level)

    def random_numbers(self, request: dict, state):
        return self._ask(P.RANDOM_NUMBERS, request, state)

    def generator_blocks(self, generator: str, rounds: int, counters, key):
        return self._ask(P.GENERATOR_BLOCKS, generator, rounds, counters, key)

    def rng_bit_generator(self, algorithm: str, state, shape, dtype: str):
        """StableHLO's rng_bit_generator in the child (rngcheck.backends.contract), as the stablehlo operator."""
        arguments = {"algorithm": algorithm, "shape": [int(s) for s in shape], "dtype": str(dtype)}
        return self._ask(P.OTHER_OPERATOR, "stablehlo", arguments, state, int(np.prod(shape, dtype=np.int64)))

    # What the child's HELO advertises of the optional kinds (none: it is never sent one).
    @property
    def conventions(self) -> tuple[str, ...]:
        return self._served(P.RANDOM_NUMBERS)

    @property
    def generators(self) -> tuple[str, ...]:
        return self._served(P.GENERATOR_BLOCKS)

    @property
    def operators(self) -> tuple[str, ...]:
        return self._served(P.OTHER_OPERATOR)

    def _served(self, message: P.Message) -> tuple[str, ...]:
        return tuple(self.child.hello.get(message.advertised) or ())

    # -- the one exchange ------------------------------------------------------------------------
    def _ask(self, message: P.Message, *arguments):
        """One call as a ``message`` request and its answer, as the contract method returns it. Not
        applicable, without a request sent, for a subject the child did not advertise (exec_protocol's
        rule 3); a RJCT, a FAIL or a broken answer raises as ``_answered`` says."""
        if message.advertised:
            served = self._served(message)
            subject = message.subject(*arguments)
            if subject not in served:
                raise NotApplicable(f"{self.label} {message.unserved.format(subject)} "
                                    f"(its handshake advertises {list(served) or 'none'})")
        return self.child.guarded(lambda deadline: self._exchange(deadline, message, arguments), self.run_deadline)

    def _exchange(self, deadline: float, message: P.Message, arguments: tuple):
        """``message``'s request for ``arguments`` sent and its answer read, both before ``deadline``."""
        try:
            asked = message.ask(self.child.hello, *arguments)   # the HELO of the child that will answer
        except NotApplicable as error:
            raise NotApplicable(f"{self.label}: {error}") from None
        self.child.send(P.frame(message.tag, asked.payload), deadline)
        tag, answer = self.child.answer(deadline, lambda tag: asked.limit if tag == message.answer else ANSWER_LIMIT)
        self._answered(tag, answer, message)
        try:
            return asked.read(answer)
        except P.ProtocolError as error:
            raise self.child.ended(BackendProtocolError, f"{self.label}: {error}") from None

    def _answered(self, tag: bytes, payload: bytes, message: P.Message) -> None:
        """Raise the RJCT or FAIL an answer is, or a protocol error if it is not ``message``'s answer."""
        if tag in (P.REJECT, P.FAIL):
            try:
                body = json.loads(payload or b"{}")
            except ValueError:
                body = None
            if not isinstance(body, dict):
                raise self.child.ended(BackendProtocolError, f"{self.label}: the {tag.decode()} payload is not a "
                                                             f"JSON object")
            if tag == P.REJECT:
                rule = body.get("rule")
                raise Rejected(str(body.get("message", "rejected")), rule=rule if isinstance(rule, str) else None)
            if body.get("not_applicable") is True:
                raise NotApplicable(str(body.get("error", "not applicable")))
            raise RemoteError(str(body.get("error", "the backend failed")))
        if tag != message.answer:
            raise self.child.ended(BackendProtocolError, f"{self.label} answered a {message.name} with {tag!r}")

    def close(self) -> None:
        self.child.quit()


def isolated(spec: str, *, timeout: float = DEFAULT_TIMEOUT, env: dict | None = None,
             max_restarts: int = DEFAULT_MAX_RESTARTS) -> ExecBackend:
    """A Python backend (any spec ``rngcheck.backends.load`` takes) hosted in a worker process.

    ``env``: variables added to the worker's environment.
    """
    return ExecBackend([sys.executable, "-m", "rngcheck.backends.worker", spec], timeout=timeout, label=spec,
                       env={**os.environ, **env} if env else None, max_restarts=max_restarts)
