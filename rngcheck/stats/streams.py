"""Where the words come from: a backend (through the operator), a raw file or stdin, or a
generator function. A source reads words in order and, when it can, opens a copy positioned
at any word (``at``: lets the battery split a stream across processes) and neighbour streams
(``neighbour``: the inter-stream tests).

Backend streams: the operator is executed on 1-D tensors of ``tensor_words`` elements
with consecutive states (each execution's output state is the next one's input state),
starting from counter 0 and key ``seed`` (64-bit). This is the stream users draw.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import threading
import time

import numpy as np

from .. import counter, reference
from ..errors import RngcheckError

WORD_BYTES = 4
MiB = 1 << 20

# Neighbour streams for the inter-stream tests: what differs by one.
NEIGHBOURS = {
    "key+1": "key word 0 (k0) plus one: consecutive integer seeds",
    "key_hi+1": "key word 1 (k1) plus one",
    "counter_hi+1": "counter word 3 plus one (counter + 2^96): a stream id in the high counter word",
}


class Source:
    """Base class: ``read(count)`` returns up to ``count`` uint32 words (fewer only at the end).

    ``seekable``: ``at(word)`` works. ``fork_safe``: copies may run in forked worker
    processes (a backend's stream is when the backend says so, ``Backend.fork_safe``: not a
    device backend, whose GPU context does not survive a fork, nor one in another process).
    """

    seekable = False
    fork_safe = True

    def read(self, count: int) -> np.ndarray:
        raise NotImplementedError

    def describe(self) -> dict:
        return {}

    def at(self, word: int) -> Source:
        raise RngcheckError("this stream cannot be opened at an offset")

    def neighbour(self, kind: str) -> Source | None:
        return None

    def close(self) -> None:
        pass


class FunctionSource(Source):
    """Random access generator: ``function(first, count) -> uint32 words``."""

    seekable = True

    def __init__(self, function, description: dict, position: int = 0, neighbours=None):
        self.function = function
        self.description = description
        self.position = position
        self.neighbours = neighbours or {}

    def read(self, count):
        words = self.function(self.position, count)
        self.position += count
        return words

    def describe(self):
        return dict(self.description)

    def at(self, word):
        return FunctionSource(self.function, self.description, word, self.neighbours)

    def neighbour(self, kind):
        factory = self.neighbours.get(kind)
        return factory().at(self.position) if factory else None


def philox_source(key: int, rounds: int = 10, counter_start: int = 0) -> FunctionSource:
    """The reference stream of Philox4x32-``rounds`` (key, counter) as the operator lays it out."""
    state = counter.make_state(counter_start, key)

    def function(first, count):
        return reference.words(state, first, count, rounds=rounds)

    neighbours = {
        "key+1": lambda: philox_source(_bump_key(key, 0), rounds, counter_start),
        "key_hi+1": lambda: philox_source(_bump_key(key, 1), rounds, counter_start),
        "counter_hi+1": lambda: philox_source(key, rounds, counter_start + (1 << 96)),
    }
    return FunctionSource(function, {"generator": f"Philox4x32-{rounds} (rngcheck.reference)",
                                     "key": hex(key), "counter": hex(counter_start)}, 0, neighbours)


def _bump_key(key: int, word: int) -> int:
    """The 64-bit key with its word ``word`` (0: k0, 1: k1) plus one, mod 2^32."""
    words = counter.words_of_value(key, 2)
    words[word] = (words[word] + 1) & counter.WORD_MASK
    return counter.value_of_words(words)


class BackendSource(Source):
    """Words drawn through ``backend.random_generator`` on 1-D tensors with consecutive states."""

    seekable = True

    def __init__(self, backend, key: int, counter_start: int = 0, position: int = 0,
                 tensor_words: int = 1 << 20):
        self.backend = backend
        self.key = key
        self.counter_start = counter_start
        self.tensor_words = tensor_words
        self.state = counter.make_state(counter_start + position // 4, key)
        self.position = position - position % 4
        self._pending = np.empty(0, dtype=np.uint32)
        self.fork_safe = getattr(backend, "fork_safe", False) is True  # the backend contract says
        if position % 4:
            self.read(position % 4)  # inside a block: generate it, drop the words before `position`

    def read(self, count):
        parts, have = [], 0
        if self._pending.size:
            parts.append(self._pending[:count])
            have = parts[0].size
            self._pending = self._pending[have:]
        while have < count:
            buffer = np.zeros(self.tensor_words, dtype=np.uint32)
            new_state = self.backend.random_generator(self.state.copy(), (self.tensor_words,), None, buffer)
            if new_state is None:
                raise RngcheckError("the backend returned no output state")
            self.state = counter.state_array(new_state)
            take = min(count - have, self.tensor_words)
            parts.append(buffer[:take])
            self._pending = buffer[take:]
            have += take
        self.position += count
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def describe(self):
        info = {}
        try:
            info = dict(self.backend.describe())
        except Exception as error:  # describe is informative only
            info = {"describe_error": str(error)}
        return {"backend": getattr(self.backend, "name", "?"), **info, "key": hex(self.key),
                "counter": hex(self.counter_start), "tensor_words": self.tensor_words,
                "note": "1-D tensors, each execution's output state feeds the next"}

    def at(self, word):
        return BackendSource(self.backend, self.key, self.counter_start, word, self.tensor_words)

    def neighbour(self, kind):
        if kind == "key+1":
            other = BackendSource(self.backend, _bump_key(self.key, 0), self.counter_start, 0, self.tensor_words)
        elif kind == "key_hi+1":
            other = BackendSource(self.backend, _bump_key(self.key, 1), self.counter_start, 0, self.tensor_words)
        elif kind == "counter_hi+1":
            other = BackendSource(self.backend, self.key, (self.counter_start + (1 << 96)) % (1 << 128), 0,
                                  self.tensor_words)
        else:
            return None
        return other.at(self.position)


def spool_folder() -> str:
    """Where StdinSpool's file lives (TMPDIR, else the system's temporary folder)."""
    return tempfile.gettempdir()


def spool_bytes(nbytes: int, copies: int = 1) -> int:
    """The most the disk holds for stdin when a run tests ``nbytes``: the main stream and a retest's
    next ``nbytes`` (retest_suspects reads on from where the first reading ended), the spool's read-
    ahead and a block, ``copies`` times (2 when a peer reads a copy of stdin: RawSource.tee)."""
    return copies * (2 * nbytes + StdinSpool.READ_AHEAD + StdinSpool.BLOCK)


def check_spool_room(nbytes: int, copies: int = 1) -> None:
    """Refuse, in one line naming the folder and the sizes, a stdin run whose spool would not fit
    the free space of the spool's folder (a full disk would otherwise end the run part way)."""
    folder = spool_folder()
    needed = spool_bytes(nbytes, copies)
    try:
        info = os.statvfs(folder)
    except (OSError, AttributeError):   # unknown: ENOSPC is still reported as the disk, not the stream
        return
    free = info.f_bavail * info.f_frsize
    if needed > free:
        copy = " and a copy for the peers" if copies > 1 else ""
        raise RngcheckError(f"stdin is kept in a temporary file in {folder} while it is tested: up to "
                            f"{_size(needed)} ({_size(nbytes)}, as much again for a retest, "
                            f"{_size(StdinSpool.READ_AHEAD + StdinSpool.BLOCK)} read ahead{copy}), and "
                            f"{folder} has {_size(free)} free: set TMPDIR to a folder with room, or test "
                            "fewer --bytes")


def _size(nbytes: int) -> str:
    return f"{nbytes / (1 << 30):.1f} GiB" if nbytes >= 1 << 30 else f"{nbytes / MiB:.1f} MiB"


class StdinSpool:
    """Standard input made seekable and readable from forked processes, so the battery cuts it
    into ranges read by two processes as it does a file (reading stdin in one process was what
    made it about 1.8x slower than a file).

    A thread reads stdin in large blocks (readinto a preallocated buffer) and appends them to
    an unlinked temporary file (in TMPDIR: nothing is left behind, but the bytes read occupy
    the disk until the run ends: the tier's size, twice with a retest). Readers, in this
    process or in forked workers, pread the file at any offset and wait until the thread has
    spooled that far. The thread reads only READ_AHEAD bytes past the furthest offset a reader
    asked for, so an endless producer (``gen | rngcheck stats -``) is read no further than the
    battery needs. The counters live in shared memory (fork-inherited): spooled bytes, the
    final size once stdin ended (-1 before), the furthest offset wanted, and the errno of a write
    to the file that failed (0 before: a full disk, ENOSPC, or a file-size limit, EFBIG). A failed
    write is not the end of the stream: a reader past what was spooled gets a RngcheckError that
    names the folder (the command's one line), never a short stream."""

    BLOCK = 8 << 20
    READ_AHEAD = 32 << 20
    POLL = 0.001

    def __init__(self, stream):
        self.stream = stream
        handle, path = tempfile.mkstemp(prefix="rngcheck-stdin-", suffix=".bin")
        os.unlink(path)
        self.fd = handle
        self.folder = os.path.dirname(path)
        self.shared = multiprocessing.RawArray("q", [0, -1, 0, 0])  # spooled, final size, wanted, write errno
        self._tee = None
        self._lock = threading.Lock()  # a block written and copied to the tee, or the tee set
        self.error: str | None = None
        self._thread: threading.Thread | None = None
        self._owner = os.getpid()
        self._stop = False

    def start(self) -> None:
        if self._thread is None and os.getpid() == self._owner:
            self._thread = threading.Thread(target=self._spool, name="rngcheck-stdin", daemon=True)
            self._thread.start()

    def _spool(self) -> None:
        buffer = np.empty(self.BLOCK, dtype=np.uint8)
        view = buffer.data  # a memoryview of the array
        shared = self.shared
        while not self._stop:
            if shared[0] >= shared[2] + self.READ_AHEAD:
                time.sleep(self.POLL)
                continue
            try:
                n = self._read_block(view)
            except (OSError, ValueError) as error:  # a broken pipe or closed stdin ends the stream
                self.error = str(error)
                break
            if not n or self._stop:
                break
            if not self._write_block(view, n):
                break
        shared[1] = shared[0]
        if self._stop:
            os.close(self.fd)  # closed here, after the last write: close() left it to this thread

    def _write_block(self, view, n: int) -> bool:
        """Append a block read from stdin to the file (and the tee); False when the disk refused it
        (the errno is kept for the readers: disk_error)."""
        shared = self.shared
        with self._lock:
            try:
                written = 0
                while written < n:
                    written += os.pwrite(self.fd, view[written:n], shared[0] + written)
                if self._tee is not None:
                    self._tee.write(view[:n])
            except OSError as error:   # ENOSPC, EFBIG (ulimit -f), EDQUOT, EIO: the disk, not the stream
                shared[3] = error.errno or -1
                self.error = str(error)
                return False
            shared[0] += n
        return True

    def disk_error(self) -> str | None:
        """Why the spool could not be written (one line naming the folder), or None."""
        code = int(self.shared[3])
        if not code:
            return None
        reason = os.strerror(code) if code > 0 else "write failed"
        return (f"stdin could not be kept in a temporary file in {self.folder} after {int(self.shared[0])} bytes: "
                f"{reason} (the disk or a file-size limit, not the end of the stream); set TMPDIR to a folder "
                "with room, or test fewer --bytes")

    @property
    def tee(self):
        return self._tee

    @tee.setter
    def tee(self, handle) -> None:
        """A file receiving a copy of every byte of stdin: what was spooled before it was set too."""
        with self._lock:
            if handle is not None:
                done, total = 0, int(self.shared[0])
                while done < total:
                    block = os.pread(self.fd, min(self.BLOCK, total - done), done)
                    handle.write(block)
                    done += len(block)
            self._tee = handle

    def _read_block(self, view) -> int:
        """Up to a block of stdin: from its file descriptor when it has one (os.readv: a forked
        worker closing its copy of sys.stdin must not wait for the buffered reader's lock, held
        by this thread while it waits on the pipe), else through the stream's readinto."""
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError, ValueError):
            return self.stream.readinto(view) or 0
        return os.readv(fd, [view])

    def want(self, offset: int) -> None:
        if self.shared[2] < offset:
            self.shared[2] = offset
        self.start()

    def available(self, offset: int, nbytes: int) -> int:
        """Bytes readable at ``offset`` (up to ``nbytes``), waiting until they are spooled or
        stdin has ended."""
        end = offset + nbytes
        shared = self.shared
        while True:
            self.want(end)
            spooled, final = shared[0], shared[1]
            if spooled < end and shared[3]:
                raise RngcheckError(self.disk_error() or "stdin could not be spooled")
            if spooled >= end or final >= 0:
                return max(0, min(end, spooled) - offset)
            if os.getpid() != self._owner and os.getppid() != self._owner:
                raise RngcheckError("the process reading stdin ended; this worker stops")
            time.sleep(self.POLL)  # in a forked worker too: the parent's thread spools

    def read_into(self, data: np.ndarray, offset: int) -> int:
        n = self.available(offset, data.size)
        view, got = data.data, 0
        while got < n:
            got += os.preadv(self.fd, [view[got:n]], offset + got)
        return n

    def final_size(self) -> int:
        return int(self.shared[1])

    def close(self) -> None:
        """Stop spooling; the file is closed now, or by the thread after its last write (it may
        be waiting on stdin: a pipe cannot be interrupted, and the fd must not be reused under it)."""
        if os.getpid() != self._owner or self._stop:
            return
        self._stop = True
        if self._thread is None or not self._thread.is_alive():
            os.close(self.fd)


class RawSource(Source):
    """32-bit little-endian words from a file, or from stdin with path '-' (spooled, StdinSpool:
    seekable and fork-safe like a file). ``tee``: a binary file that receives a copy of every
    byte read from stdin (stdin is read once; peers read the copy)."""

    def __init__(self, path: str, position: int = 0, spool: StdinSpool | None = None):
        self.path = path
        self.position = position
        self.bytes_read = 0
        self.seekable = True
        self.stream = None
        self.spool = spool
        self._owns_spool = spool is None and path == "-"
        self._trailing = 0
        self._tee = None
        if path == "-":
            if self.spool is None:
                self.spool = StdinSpool(sys.stdin.buffer)
                self.spool.start()  # here, before the battery forks workers that read the spool
        else:
            try:
                self.stream = open(path, "rb")
            except OSError as error:
                raise RngcheckError(f"cannot open {path!r}: {error.strerror}") from None
            self.stream.seek(position * WORD_BYTES)

    @property
    def tee(self):
        return self.spool.tee if self.spool is not None else self._tee

    @tee.setter
    def tee(self, handle):
        if self.spool is not None:
            self.spool.tee = handle  # the spooling thread writes the copy
        else:
            self._tee = handle  # a file is not copied: it can be read again

    @property
    def trailing_bytes(self) -> int:
        """Bytes after the last whole word: of stdin once it has ended, of a file's last read."""
        if self.spool is not None:
            final = self.spool.final_size()
            return final % WORD_BYTES if final >= 0 else 0
        return self._trailing

    def read(self, count):
        want = count * WORD_BYTES
        data = np.empty(want, dtype=np.uint8)  # read straight into the array (no intermediate copies)
        if self.spool is not None:
            got = self.spool.read_into(data, self.position * WORD_BYTES)
        else:
            view = memoryview(data)
            got = 0
            while got < want:
                n = self.stream.readinto(view[got:])
                if not n:
                    break
                got += n
        self.bytes_read += got
        whole = got - got % WORD_BYTES
        if self.spool is None:
            self._trailing = got - whole
        words = data[:whole].view("<u4").astype(np.uint32, copy=False)
        self.position += words.size
        return words

    def size_words(self) -> int | None:
        if self.path == "-":
            return None
        return os.path.getsize(self.path) // WORD_BYTES

    def describe(self):
        return {"raw": "stdin" if self.path == "-" else os.path.abspath(self.path),
                "format": "32-bit little-endian words"}

    def at(self, word):
        return RawSource(self.path, word, self.spool)

    def close(self):
        if self.stream is not None:
            self.stream.close()
        elif self.spool is not None and self._owns_spool:
            self.spool.close()


class XorSource(Source):
    """Word-by-word XOR of two streams (the inter-stream tests). Seekable when both are:
    ``at(word)`` opens both at ``word`` (the same index in each stream, as the other
    sources' ``at``), so an inter-stream group is cut into ranges like the main stream."""

    def __init__(self, first: Source, second: Source, kind: str):
        self.first, self.second, self.kind = first, second, kind
        self.seekable = bool(first.seekable and second.seekable)
        self.fork_safe = bool(getattr(first, "fork_safe", False) and getattr(second, "fork_safe", False))

    @property
    def position(self):
        """The index of the next word (of both streams), when the streams say."""
        return getattr(self.first, "position", None)

    def read(self, count):
        a = self.first.read(count)
        b = self.second.read(count)
        n = min(a.size, b.size)
        return a[:n] ^ b[:n]

    def describe(self):
        return {"xor_of": self.kind}

    def at(self, word):
        if not self.seekable:
            raise RngcheckError("this inter-stream pair cannot be opened at an offset")
        return XorSource(self.first.at(word), self.second.at(word), self.kind)

    def close(self):
        self.first.close()
        self.second.close()


class ArraySource(FunctionSource):
    """An in-memory array (tests)."""

    def __init__(self, words, description=None):
        words = np.asarray(words, dtype=np.uint32)
        super().__init__(lambda first, count: words[first:first + count], description or {"array": int(words.size)})
