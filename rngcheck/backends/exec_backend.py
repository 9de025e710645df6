"""Backends in another process: ``exec:COMMAND`` (any language) and the isolated Python worker.

``--backend 'exec:./my_impl --flag'`` starts the command (split like a shell would, never run
by one) and talks the exec protocol (docs/exec-protocol.md) over its stdin and stdout. Every
backend other than the numpy reference runs this way: a Python backend is hosted by
``python -m rngcheck.backends.worker SPEC``, which speaks the same protocol.

The numbers layer crosses too: a child whose HELO advertises ``conventions`` answers a DRAW (a
request and a state) with NUMS (the numbers); a request under a convention it did not advertise is
not applicable and is never sent. So do the generators: a child whose HELO advertises ``generators``
answers a GENB (a generator, a round count, counters and a key) with BLKS (the blocks).

Each call (CALL or DRAW), and the handshake, has a time limit (``timeout``, seconds). A child that
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
from typing import TypeVar

import numpy as np

from .. import sharedmem
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
from ..numbers import Request
from . import Backend, lifetime
from . import exec_protocol as P

E = TypeVar("E", bound=Exception)

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
        with self.lock:
            return bytes(self.kept[-STDERR_TAIL:]).decode(errors="replace")


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
    fork_safe = False  # whatever the child is: a forked copy would share its pipes

    def __init__(self, command: list[str] | None = None, *, timeout: float = DEFAULT_TIMEOUT, label: str | None = None,
                 env: dict | None = None, max_restarts: int = DEFAULT_MAX_RESTARTS):
        if not command:
            raise BackendSpecError("exec: needs a command, e.g. exec:./my_impl")
        self.command = list(command)
        self.timeout = float(timeout)
        self.env = env
        self.label = label or shlex.join(self.command)
        self.max_restarts = max(1, int(max_restarts))
        self.failed_starts = 0      # fresh children in a row that failed to start (no handshake)
        self.hangs = 0              # calls and handshakes that hung, over the backend's life
        self.answered = False       # whether the current child has answered a call
        self.stopped: str | None = None
        self.run_deadline: float | None = None  # time.monotonic() when the whole run must end (--deadline)
        self.process: subprocess.Popen[bytes] | None = None
        self.stderr: StderrTail | None = None
        self.start_failure: BackendProcessFailed | None = None   # why the last start failed
        self.owner = lifetime.new_owner_mark()
        lifetime.watch(self.owner)  # its descendants die with rngcheck, a SIGKILL included
        self.hello = self._start()  # a child that cannot start is a one-line error now, not per case
        self.name = self.hello.get("name") or self.label
        self.validates = self.hello.get("validates") is True

    @classmethod
    def from_options(cls, options: str) -> ExecBackend:
        return cls(split_command(options))

    # -- the child process ------------------------------------------------------------------
    def _start(self) -> dict:
        """A fresh child and its HELO. A child that fails to shake hands raises BackendUnavailable (a
        one-line error when the backend is loaded); ``_restart`` turns that into the call's status."""
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
        self.answered = False
        try:
            # a slow start (a kernel build) counts against the time limit
            tag, payload = self._receive(time.monotonic() + self.timeout, HELLO_LIMIT)
        except BackendProcessFailed as error:
            self.start_failure = error
            said = error.last_stderr_line()
            raise self._refused(BackendUnavailable, f"{self.label}: no handshake: {error}"
                                + (f" (stderr: {said})" if said else "")) from None
        except BaseException:  # SIGTERM or Ctrl-C while the child starts: it goes with us
            self._kill()
            raise
        self.start_failure = None
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
        conventions = hello.get("conventions", [])
        if not isinstance(conventions, list) or not all(isinstance(c, str) for c in conventions):
            raise self._refused(BackendUnavailable, f"{self.label}: the handshake's conventions is not a list of "
                                                    f"names: {conventions!r}"[:300])
        generators = hello.get("generators", [])
        if not isinstance(generators, list) or not all(isinstance(g, str) for g in generators):
            raise self._refused(BackendUnavailable, f"{self.label}: the handshake's generators is not a list of "
                                                    f"names: {generators!r}"[:300])
        operators = hello.get("operators", [])
        if not isinstance(operators, list) or not all(isinstance(o, str) for o in operators):
            raise self._refused(BackendUnavailable, f"{self.label}: the handshake's operators is not a list of "
                                                    f"names: {operators!r}"[:300])
        return hello

    def _refused(self, error_class, message: str) -> Exception:
        """The child cannot serve as a backend (no usable handshake): end it, and return the
        one-line error to raise (BackendUnavailable, or BackendSpecError for a child that says
        its spec is wrong)."""
        self._kill()
        return error_class(message)

    def _ended(self, error_class: type[E], message: str) -> E:
        """The call failed in the child: take its stderr's tail (before the kill, so a child that
        just died has written it all), end it and its group, and return the error to raise
        (BackendCrashed, BackendTimeout or BackendProtocolError, carrying the tail)."""
        tail = self._stderr_tail()
        self._kill()
        return error_class(message, tail)

    def _stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        dead = self.process is None or self.process.poll() is not None
        return self.stderr.tail(wait=0.5 if dead else 0.0)

    def _kill(self) -> None:
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

    def _died(self, what: str) -> BackendCrashed:
        """The child closed its stdout: it exited, or it will be ended now."""
        returncode = None
        if self.process is not None:
            try:
                returncode = self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass  # alive but deaf: closed stdout and kept running
        how = signal_name(returncode) if returncode is not None else "closed its output and was ended"
        return self._ended(BackendCrashed, f"{self.label} {what}: {how}")

    def _send(self, data: bytes, deadline: float) -> None:
        assert self.process is not None and self.process.stdin is not None, "a call goes to a started child"
        fd = self.process.stdin.fileno()
        view = memoryview(data)
        os.set_blocking(fd, False)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._ended(BackendTimeout, f"{self.label} did not read its input within {self.timeout:g} s")
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
                raise self._ended(BackendTimeout, f"{self.label} did not answer within {self.timeout:g} s")
            readable, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if not readable:
                continue
            chunk = os.read(fd, min(count - got, 1 << 20))
            if not chunk:
                raise self._died("exited mid-protocol" if got or chunks else "exited")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _receive(self, deadline: float, limit) -> tuple[bytes, bytes]:
        """The next message; ``limit`` is the largest payload it may have (a number, or a function of
        the tag), checked on its header: a child cannot make the runner buffer what no answer needs."""
        tag, length = P.HEADER.unpack(self._read_exact(P.HEADER.size, deadline))
        if tag not in P.TAGS:
            raise self._ended(BackendProtocolError, f"{self.label} wrote {tag!r} where a protocol message should "
                                                    f"start (noise on stdout?)")
        most = limit(tag) if callable(limit) else limit
        if length > most:
            raise self._ended(BackendProtocolError, f"{self.label} announced a {tag.decode(errors='replace')} of "
                                                    f"{length} bytes where this call's answer is at most {most} bytes")
        return tag, self._read_exact(length, deadline)

    def _json_object(self, tag: bytes, payload: bytes) -> dict:
        try:
            body = json.loads(payload or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise self._ended(BackendProtocolError, f"{self.label}: the {tag.decode()} payload is not a JSON object")
        return body

    # -- the backend contract ----------------------------------------------------------------
    def describe(self) -> dict[str, str]:
        described = {str(k): str(v) for k, v in dict(self.hello.get("describe") or {}).items()}
        described.setdefault("command", self.label)
        described["exec-protocol"] = str(P.PROTOCOL_VERSION)
        return described

    def _restart(self) -> None:
        """A fresh child for the next call, or BackendStopped when ``max_restarts`` fresh children in
        a row failed before answering a call. The start's own failure is the call's: a child that hangs
        before its HELO is a timeout, one that dies is a crash."""
        if self.stopped:
            raise BackendStopped(self.stopped)
        self._kill()
        try:
            self.hello = self._start()
        except BackendUnavailable as error:
            self._count_failed_start()
            if isinstance(self.start_failure, BackendTimeout):
                self._count_hang()
            cause = self.start_failure
            if isinstance(cause, BackendProcessFailed):
                raise type(cause)(f"{self.label} (a fresh worker, before its handshake): {cause}",
                                  cause.stderr_tail) from None
            raise BackendCrashed(f"{error}") from None

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

    def _guarded(self, exchange):
        """One request and its answer, ``exchange(deadline)``, with a live child: a fresh one when the
        last is gone, the restart cap counted, and the run's --deadline applied."""
        if self.stopped:
            raise BackendStopped(self.stopped)
        if self.process is None or self.process.poll() is not None:
            self._restart()
        try:
            return self._within_deadline(exchange)
        except BackendTimeout:
            self._count_hang()
            raise

    def _within_deadline(self, exchange):
        deadline = time.monotonic() + self.timeout
        if self.run_deadline is not None and self.run_deadline < deadline:
            try:
                return exchange(self.run_deadline)
            except BackendTimeout:
                self.answered = True  # not the child's fault: the run's time is up
                raise BackendStopped("the run's --deadline passed during this call") from None
        return exchange(deadline)

    def _answered(self, tag: bytes, payload: bytes, what: str, expected: bytes) -> None:
        """Book an answer; raise the RJCT or FAIL it is, or a protocol error if it is not ``expected``."""
        self.answered = True
        self.failed_starts = 0
        if tag in (P.REJECT, P.FAIL):
            body = self._json_object(tag, payload)
            if tag == P.REJECT:
                rule = body.get("rule")
                raise Rejected(str(body.get("message", "rejected")), rule=rule if isinstance(rule, str) else None)
            if body.get("not_applicable") is True:
                raise NotApplicable(str(body.get("error", "not applicable")))
            raise RemoteError(str(body.get("error", "the backend failed")))
        if tag != expected:
            raise self._ended(BackendProtocolError, f"{self.label} answered a {what} with {tag!r}")

    def _call_until(self, deadline, state, sizes, strides, buffer, output_state, feature_level):
        # A buffer in shared memory (rngcheck.sharedmem) goes to a child that maps it by its name alone.
        shared = sharedmem.segment_of(np.asarray(buffer)) if self.hello.get("shared_buffer") is True else None
        if shared is None and P.call_payload_bytes(state, sizes, strides, buffer) > P.MAX_PAYLOAD:
            raise NotApplicable(f"{self.label}: a buffer of {np.asarray(buffer).nbytes} bytes is over the exec "
                                f"protocol's 4 GiB message limit, and this child maps no shared buffers")
        self._send(P.frame(P.CALL, P.encode_call(state, sizes, strides, buffer, output_state, feature_level,
                                                 shared=shared)), deadline)
        state_words = int(np.asarray(state).size)
        buffer_words = 0 if shared is not None else np.asarray(buffer).view("<u4").size
        tag, payload = self._receive(deadline, lambda tag: P.done_limit(state_words, buffer_words)
                                     if tag == P.DONE else ANSWER_LIMIT)
        self._answered(tag, payload, "CALL", P.DONE)
        try:
            returned, words, input_after = P.decode_done(payload)
        except P.ProtocolError as error:
            raise self._ended(BackendProtocolError, f"{self.label}: {error}") from None
        target = np.asarray(buffer).view("<u4")
        if (words is None) != (shared is not None):
            raise self._ended(BackendProtocolError, f"{self.label}: answered a CALL "
                              f"{'with' if shared is not None else 'without'} a shared buffer "
                              f"{'with its words' if shared is not None else 'as if it were shared'}")
        if words is not None and words.size != target.size:
            raise RemoteError(f"returned a buffer of {words.size} words for one of {target.size}")
        if words is not None:
            target[:] = words
        if input_after is not None:
            # What the child holds as the input state after the call: a backend that wrote into it is
            # seen by the caller as if it had run here (the check names it input-state-modified).
            mine = np.asarray(state)
            if input_after.size == mine.size and mine.dtype.itemsize == 4 and mine.flags.writeable:
                np.copyto(mine, input_after.view(mine.dtype).reshape(mine.shape))
        return returned

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        return self._guarded(lambda deadline: self._call_until(deadline, state, sizes, strides, buffer,
                                                               output_state, feature_level))

    # -- the numbers layer (optional: DRAW / NUMS) --------------------------------------------
    @property
    def conventions(self) -> tuple[str, ...]:
        """The conventions the child advertised in its HELO (none: it is never sent a DRAW)."""
        return tuple(self.hello.get("conventions") or ())

    def random_numbers(self, request: dict, state):
        """The child's numbers for ``request`` (a Request.to_dict()); NotApplicable, without a DRAW sent,
        when the child did not advertise the request's convention."""
        convention = request.get("convention") if isinstance(request, dict) else None
        if convention not in self.conventions:
            raise NotApplicable(f"{self.label} draws no numbers under the {convention!r} convention "
                                f"(its handshake advertises {list(self.conventions) or 'none'})")
        count = Request.from_dict(request).count
        payload = P.encode_draw(request, state)
        return self._guarded(lambda deadline: self._exchange(deadline, P.DRAW, payload, P.NUMBERS,
                                                             P.numbers_limit(count), P.decode_numbers))

    def _exchange(self, deadline, tag: bytes, payload: bytes, answer_tag: bytes, limit: int, decode):
        """Send one ``tag`` request and read its ``answer_tag`` (at most ``limit`` bytes) through
        ``decode``; a RJCT or FAIL raises as _answered says, a payload ``decode`` refuses is a protocol
        break that ends the child."""
        self._send(P.frame(tag, payload), deadline)
        got, answer = self._receive(deadline, lambda got: limit if got == answer_tag else ANSWER_LIMIT)
        self._answered(got, answer, tag.decode(), answer_tag)
        try:
            return decode(answer)
        except P.ProtocolError as error:
            raise self._ended(BackendProtocolError, f"{self.label}: {error}") from None

    # -- the generators (optional: GENB / BLKS) -----------------------------------------------
    @property
    def generators(self) -> tuple[str, ...]:
        """The generators the child advertised in its HELO (none: it is never sent a GENB)."""
        return tuple(self.hello.get("generators") or ())

    def generator_blocks(self, generator: str, rounds: int, counters, key):
        """The child's blocks; NotApplicable, without a GENB sent, for a generator it did not advertise."""
        if generator not in self.generators:
            raise NotApplicable(f"{self.label} computes no {generator} blocks "
                                f"(its handshake advertises {list(self.generators) or 'none'})")
        payload = P.encode_generate(generator, rounds, counters, key)
        limit = P.blocks_limit(*np.shape(counters))
        return self._guarded(lambda deadline: self._exchange(deadline, P.GENERATE, payload, P.BLOCKS, limit,
                                                             P.decode_blocks))

    # -- other operators (optional: OPER / BITS) ------------------------------------------------
    @property
    def operators(self) -> tuple[str, ...]:
        """The other operators the child advertised in its HELO (none: it is never sent an OPER)."""
        return tuple(self.hello.get("operators") or ())

    def rng_bit_generator(self, algorithm: str, state, shape, dtype: str):
        """StableHLO's rng_bit_generator in the child (rngcheck.backends.contract)."""
        return self._operate("stablehlo", {"algorithm": algorithm, "shape": [int(s) for s in shape],
                                           "dtype": str(dtype)}, state, int(np.prod(shape, dtype=np.int64)))

    def _operate(self, operator: str, arguments: dict, state, count: int):
        if operator not in self.operators:
            raise NotApplicable(f"{self.label} runs no {operator} operator (its handshake advertises "
                                f"{list(self.operators) or 'none'})")
        payload = P.encode_operate(operator, arguments, state)
        return self._guarded(lambda deadline: self._exchange(deadline, P.OPERATE, payload, P.BITS,
                                                             P.bits_limit(count), P.decode_bits))

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            try:
                self._send(P.frame(P.QUIT), time.monotonic() + 5)
                self.process.wait(timeout=5)
            except (BackendCrashed, BackendTimeout, subprocess.TimeoutExpired, OSError):
                pass
        self._kill()


def isolated(spec: str, *, timeout: float = DEFAULT_TIMEOUT, env: dict | None = None,
             max_restarts: int = DEFAULT_MAX_RESTARTS) -> ExecBackend:
    """A Python backend (any spec ``rngcheck.backends.load`` takes) hosted in a worker process.

    ``env``: variables added to the worker's environment.
    """
    return ExecBackend([sys.executable, "-m", "rngcheck.backends.worker", spec], timeout=timeout, label=spec,
                       env={**os.environ, **env} if env else None, max_restarts=max_restarts)
