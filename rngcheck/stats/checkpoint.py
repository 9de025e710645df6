"""Checkpoints of a battery run cut into ranges: finished ranges survive a killed client.

    checkpoint = Checkpoint(directory, identity)   # refuses a directory of another run
    finished = checkpoint.done()                   # {range index: [state dict per accumulator]}
    accs = restore(factories, finished[index])     # a finished range's accumulators, checked
    ...                                            # measure the other ranges
    checkpoint.save(index, [acc.state() for acc in accs])   # as each range arrives
    checkpoint.close()                             # at the end (or: with Checkpoint(...) as checkpoint)

``identity`` is a JSON-able dict of everything that makes the run what it is: the source's
description, the key, the tier, the bytes, the versions (``versions()``), the test names,
the range plan (key "plan": a list of [start, count]; ``save`` checks the index against it).
A directory that holds another identity is refused, naming the first field that differs
("tier", "versions.numpy", "plan[3][1]"). The directory holds:

    manifest.json          {"format": "rngcheck-checkpoint", "format_version": 1, "identity": ...,
                            "finished": [range indices], "sha256": {index: digest of its file}}
    finished.jsonl         ranges finished since the manifest was written: {"index", "sha256"}
                           per line, appended by ``save``; folded into the manifest by
                           ``close()`` and whenever the directory is opened again
    range-000123.npz       one finished range: key "<i>/<state key>" for accumulator i (the
                           flat dicts of Accumulator.state()), and "meta/format", "meta/index",
                           "meta/count", "meta/identity" (digest of the identity)

A save costs the same however many ranges are finished (a line appended, not the manifest
rewritten): measured here, a 32 MiB range of the standard tier is a 1.0 MB file saved in
about 5 ms (both fsyncs included; its pickled accumulators are 1.8 MB); ``compress=True``
makes it 0.22 MB for about 30 ms per save.

Durability: a range file is written to a temporary name, flushed to disk and renamed into
place (then the directory is synced) before its journal line is appended and synced; the
manifest is replaced the same way. A kill at any moment leaves each range either finished
(file and line) or not (a line cut short does not count; a file without a line is written
again): never a half-written file that counts. Loading never runs code: JSON, and
``np.load(..., allow_pickle=False)`` (an array that needs pickle is refused), each file's
SHA-256 against the manifest's, values checked to be numbers or text;
``Accumulator.from_state`` then checks each state against its class. Anything wrong
(another run's manifest, a damaged, missing or foreign file) is a RngcheckError of one line.
Every file is read through rngcheck's one bounded reader (rngcheck.jsonfile): regular files
only (a symlink to a device is refused unread), the manifest and journal at most
MANIFEST_BYTES and nested at most jsonfile.MAX_DEPTH, a range file at most MAX_FILE_BYTES
packed and unpacked, at most MAX_ACCUMULATORS states.
One writer process per directory (the client that collects the ranges); its threads may
save different ranges at once.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import threading
import zipfile
from typing import IO, Any, NoReturn, TypeGuard

import numpy as np

from ..errors import RngcheckError, one_line
from ..jsonfile import parse_json, read_bytes_limited

FORMAT = "rngcheck-checkpoint"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
JOURNAL = "finished.jsonl"  # ranges finished since the manifest was last written, one JSON line each
RANGE_FILE = "range-{:06d}.npz"
_TEMPORARY = ".partial-"  # prefix of files being written (left over only by a kill; removed on open)
_ABSENT = object()
MANIFEST_BYTES = 64 << 20    # the manifest and the journal: a digest per range (a 4 TiB run: 1 MB)
MAX_FILE_BYTES = 1 << 30     # one range's states, unpacked (a 32 MiB range of the standard tier: 1 MB)
MAX_ACCUMULATORS = 10_000    # states in one range file (a battery has some hundred tests)


def versions() -> dict:
    """The versions that change results, for the identity."""
    import scipy

    from .. import __version__
    return {"rngcheck": __version__, "numpy": np.__version__, "scipy": scipy.__version__}


class Checkpoint:
    """A checkpoint directory of one run (see the module docstring)."""

    def __init__(self, directory, identity: dict, *, compress: bool = False):
        if not isinstance(identity, dict):
            raise TypeError("identity must be a dict")
        self.directory = os.fspath(directory)
        self.identity = json.loads(json.dumps(identity, allow_nan=False))  # plain JSON values (tuples -> lists)
        self.digest = hashlib.sha256(_canonical(self.identity).encode()).hexdigest()
        self.compress = compress
        self._finished: dict[int, str] = {}  # range index -> sha256 of its file
        self._lock = threading.Lock()
        self._writing: set[int] = set()
        self._journal: IO[bytes] | None = None  # the open journal (appended to by save)
        manifest = os.path.join(self.directory, MANIFEST)
        if os.path.exists(manifest):
            self._open(manifest)
        else:
            self._create()

    # -- the interface -----------------------------------------------------------------
    @property
    def plan(self):
        """The identity's range plan (None when it has none)."""
        return self.identity.get("plan")

    @property
    def finished(self) -> list[int]:
        return sorted(self._finished)

    def done(self) -> dict[int, list[dict]]:
        """Every finished range's accumulator states, read back and checked."""
        return {index: self._load(index) for index in self.finished}

    def save(self, index: int, states: list[dict]) -> None:
        """Record range ``index`` as finished with these states (one per accumulator, in order).
        Durable when it returns. Several threads may save different ranges at once."""
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
            raise ValueError(f"a range index is an int >= 0, not {index!r}")
        index = int(index)
        plan = self.plan
        if isinstance(plan, list) and index >= len(plan):
            raise ValueError(f"range {index} is not in the plan of {len(plan)} ranges")
        arrays: dict[str, Any] = {"meta/format": FORMAT, "meta/index": index, "meta/count": len(states),
                                  "meta/identity": self.digest}
        for i, state in enumerate(states):
            for key, value in state.items():
                if not isinstance(key, str) or not key:
                    raise ValueError(f"state key {key!r} is not a name")
                arrays[f"{i}/{key}"] = _storable(value, key)
        buffer = io.BytesIO()
        (np.savez_compressed if self.compress else np.savez)(buffer, **arrays)
        data = buffer.getvalue()
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            if index in self._writing:
                raise ValueError(f"range {index} is being saved by another thread")
            self._writing.add(index)
        try:
            name = RANGE_FILE.format(index)
            _write_atomically(os.path.join(self.directory, name), data)
            line = (json.dumps({"index": index, "sha256": digest}) + "\n").encode()
            with self._lock:
                name = JOURNAL
                if self._journal is None:
                    self._journal = open(os.path.join(self.directory, JOURNAL), "ab")
                self._journal.write(line)
                self._journal.flush()
                os.fsync(self._journal.fileno())
                self._finished[index] = digest
        except OSError as error:  # disk full, directory removed, ...: one line, the run stops
            self._fail(f"cannot write {name} ({one_line(error)})")
        finally:
            with self._lock:
                self._writing.discard(index)

    def close(self) -> None:
        """Fold the journal into the manifest (also done when the directory is opened again)."""
        with self._lock:
            if self._journal is not None:
                self._journal.close()
                self._journal = None
            self._compact()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the directory -----------------------------------------------------------------
    def _fail(self, text: str) -> NoReturn:
        raise RngcheckError(f"checkpoint {self.directory}: {text}")

    def _create(self):
        try:
            os.makedirs(self.directory, exist_ok=True)
            present = os.listdir(self.directory)
        except OSError as error:
            self._fail(f"cannot use the directory ({one_line(error)})")
        if present:
            self._fail(f"the directory holds {len(present)} other files and no {MANIFEST}: "
                       "give a new or empty directory")
        self._write_manifest()

    def _read(self, name: str, what: str, limit: int = MAX_FILE_BYTES) -> bytes:
        """A file of the directory through rngcheck's one bounded reader (rngcheck.jsonfile): a
        regular file only (a symlink to /dev/zero is refused unread), at most ``limit`` bytes."""
        try:
            return read_bytes_limited(os.path.join(self.directory, name), what=what, limit=limit, regular=True)
        except RngcheckError as error:
            self._fail(str(error))

    def _open(self, manifest: str):
        raw = self._read(MANIFEST, "checkpoint manifest", MANIFEST_BYTES)
        try:
            data = parse_json(raw, MANIFEST, what="checkpoint manifest")
        except RngcheckError as error:
            self._fail(f"{error}: damaged or not a checkpoint; remove the directory to start again")
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            self._fail(f"{MANIFEST} is not an rngcheck checkpoint manifest")
        if data.get("format_version") != FORMAT_VERSION:
            self._fail(f"checkpoint format {data.get('format_version')!r}; this rngcheck reads {FORMAT_VERSION}")
        stored, finished, digests = data.get("identity"), data.get("finished"), data.get("sha256")
        if not isinstance(stored, dict) or not isinstance(finished, list) or not isinstance(digests, dict):
            self._fail(f"{MANIFEST} lacks its identity, finished list or checksums: damaged")
        difference = _difference(stored, self.identity)
        if difference:
            field, theirs, ours = difference
            self._fail(f"written by another run: {field} differs (checkpoint: {_short(theirs)}, "
                       f"this run: {_short(ours)}); use another directory or remove this one")
        for index in finished:
            digest = digests.get(str(index)) if _is_index(index) else None
            if not _is_digest(digest):
                self._fail(f"{MANIFEST} lists a finished range {index!r} without a valid checksum: damaged")
            self._finished[index] = digest
        journaled = self._read_journal()
        for name in os.listdir(self.directory):  # files a kill left half-written: never counted, now removed
            if name.startswith(_TEMPORARY):
                try:
                    os.remove(os.path.join(self.directory, name))
                except OSError:
                    pass
        if journaled:
            self._compact()

    def _read_journal(self) -> bool:
        """Apply the journal's lines; the last one may be torn by a kill (then it does not count)."""
        if not os.path.lexists(os.path.join(self.directory, JOURNAL)):
            return False
        lines = self._read(JOURNAL, "checkpoint journal", MANIFEST_BYTES).split(b"\n")
        for number, line in enumerate(lines, 1):
            if not line:
                continue
            try:
                entry = parse_json(line, JOURNAL, what="checkpoint journal line")
            except RngcheckError:
                entry = None
            if not (isinstance(entry, dict) and _is_index(entry.get("index")) and _is_digest(entry.get("sha256"))):
                if number == len(lines):  # no newline after it: the write was cut short
                    continue
                self._fail(f"{JOURNAL} line {number} is not a finished range: damaged")
            self._finished[entry["index"]] = entry["sha256"]
        return True

    def _compact(self):
        """The manifest lists every finished range; then the journal is emptied."""
        self._write_manifest()
        try:
            os.remove(os.path.join(self.directory, JOURNAL))
        except FileNotFoundError:
            pass

    def _write_manifest(self):
        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "identity": self.identity,
                    "finished": self.finished, "sha256": {str(i): self._finished[i] for i in self.finished}}
        data = (json.dumps(manifest, indent=1) + "\n").encode()
        try:
            _write_atomically(os.path.join(self.directory, MANIFEST), data)
        except OSError as error:
            self._fail(f"cannot write {MANIFEST} ({one_line(error)})")

    def _load(self, index: int) -> list[dict]:
        name = RANGE_FILE.format(index)
        data = self._read(name, f"checkpoint range (finished range {index})")
        if hashlib.sha256(data).hexdigest() != self._finished[index]:
            self._fail(f"{name} is damaged (its SHA-256 is not the one recorded when it was saved); "
                       "remove the directory to start the run again")
        try:
            unpacked = sum(member.file_size for member in zipfile.ZipFile(io.BytesIO(data)).infolist())
            if unpacked > MAX_FILE_BYTES:  # a small file that inflates to gigabytes
                self._fail(f"{name} unpacks to {unpacked} bytes, more than a checkpoint range can be "
                           f"({MAX_FILE_BYTES})")
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                arrays = {key: npz[key] for key in npz.files}
        except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zipfile.LargeZipFile) as error:
            self._fail(f"{name} is not a readable checkpoint range ({one_line(error)})")
        return self._states(name, index, arrays)

    def _states(self, name: str, index: int, arrays: dict) -> list[dict]:
        values = {}
        for key, array in arrays.items():
            if not isinstance(array, np.ndarray) or array.dtype.kind not in "biufU" or array.dtype.hasobject:
                self._fail(f"{name}: {key} holds {getattr(array, 'dtype', type(array).__name__)}, not numbers or text")
            values[key] = array[()].item() if array.ndim == 0 else array
        meta = {key[5:]: value for key, value in values.items() if key.startswith("meta/")}
        if meta.get("format") != FORMAT:
            self._fail(f"{name} is not an rngcheck checkpoint range")
        if meta.get("identity") != self.digest:
            self._fail(f"{name} belongs to another run (its identity is not this checkpoint's)")
        count = meta.get("count")
        if meta.get("index") != index or not isinstance(count, int) or isinstance(count, bool) or count < 0:
            self._fail(f"{name} holds range {meta.get('index')!r}, not {index}")
        if count > MAX_ACCUMULATORS:
            self._fail(f"{name} says it holds {count} accumulators, more than a battery has "
                       f"({MAX_ACCUMULATORS}): damaged")
        states: list[dict[str, Any]] = [{} for _ in range(count)]
        for key, value in values.items():
            if key.startswith("meta/"):
                continue
            head, _, rest = key.partition("/")
            if not (head.isdigit() and head.isascii() and int(head) < count and rest):
                self._fail(f"{name}: unexpected entry {key!r}")
            states[int(head)][rest] = value
        return states


def restore(factories, states: list[dict]) -> list:
    """The accumulators of one finished range: ``type(factory(start=0)).from_state(state)`` for
    each factory and its state, in order, checked to be the same test with the same
    parameters and budget as the factory makes (else a one-line RngcheckError)."""
    if len(states) != len(factories):
        raise RngcheckError(f"checkpoint range holds {len(states)} accumulators, the run has {len(factories)}")
    accs = []
    for factory, state in zip(factories, states):
        probe = factory(start=0)
        acc = type(probe).from_state(state)
        if acc.parameters != probe.parameters or acc.max_samples != probe.max_samples:
            raise RngcheckError(f"checkpoint state of {acc.name} (parameters {acc.parameters}, budget "
                                f"{acc.max_samples}) is not the run's {probe.name} (parameters {probe.parameters}, "
                                f"budget {probe.max_samples})")
        accs.append(acc)
    return accs


def _storable(value, key: str):
    """A state value as np.savez stores it without pickle (numbers or text only)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufU" or value.dtype.hasobject:
            raise ValueError(f"state value {key!r} has dtype {value.dtype}: only numbers and text are stored")
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"state value {key!r} does not fit int64 (Accumulator.state() writes such totals as text)")
    if not isinstance(value, (bool, int, float, str)):
        raise ValueError(f"state value {key!r} is {type(value).__name__}: only numbers, text and arrays are stored")
    return value


def _write_atomically(path: str, data: bytes) -> None:
    directory = os.path.dirname(path) or "."
    handle, temporary = tempfile.mkstemp(prefix=_TEMPORARY, dir=directory)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.remove(temporary)
        except OSError:
            pass
        raise
    try:  # the rename itself reaches the disk
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _is_index(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_digest(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _difference(stored, current, path: str = ""):
    """(field path, stored value, current value) of the first difference, or None."""
    if isinstance(stored, dict) and isinstance(current, dict):
        for key in list(current) + [k for k in stored if k not in current]:
            field = f"{path}.{key}" if path else key
            found = _difference(stored.get(key, _ABSENT), current.get(key, _ABSENT), field)
            if found:
                return found
        return None
    if isinstance(stored, list) and isinstance(current, list) and len(stored) == len(current):
        for i, (a, b) in enumerate(zip(stored, current)):
            found = _difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    if type(stored) is not type(current) or stored != current:
        return path, stored, current
    return None


def _short(value, limit: int = 60) -> str:
    if value is _ABSENT:
        return "absent"
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
