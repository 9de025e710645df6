"""The battery's ranges on Dask (``dask.distributed``): a LocalCluster on this machine, or
any Dask deployment given by its scheduler's address (docs/distributed.md).

    rngcheck stats --backend numpy --tier deep --bytes 64G --dask local:8
    rngcheck stats --input /shared/stream.bin --tier deep --dask tcp://scheduler:8786

    from rngcheck.stats import battery, distributed
    with distributed.DaskExecutor("local:2") as executor:        # or DaskExecutor(client)
        doc = battery.run(source, tier="standard", executor=executor)

Shape. Each stream the battery reads (the main stream, its retest range, each inter-stream
XOR pair) is cut into contiguous ranges of about equal work (``battery.balanced_ranges``,
boundaries on multiples of 2^19 words, the largest sample, so no sample is cut) of about
``shard_bytes`` each. One Dask task per range builds the source *on the worker* from a
recipe (a backend by its spec, loaded once per worker process and never pickled with a live
device context; a file by its path; a generator function by value; stdin is refused),
runs ``battery.feed`` on ``source.at(start)`` and returns the accumulators (their
``state()`` when the accumulators have one, else the pickled accumulators). The client
merges them in stream order (``Accumulator.merge`` is exact), so the document equals the
single-process one; only its ``execution`` object says where it ran.

Faults. Dask re-runs the task of a lost worker on another (or restarted) worker; the run
counts them in ``execution`` (``workers_lost``, ``shards_rerun``, from the scheduler's
remove-worker events). A range whose task kills its worker ``allowed-failures`` + 1 times
(Dask's ``KilledWorker``) ends the run with one line naming the range. Workers whose
rngcheck, numpy or scipy version differs from the client's are refused before any work is
sent (and every task checks again, for workers that join later). With no worker at all
for ``no_worker_timeout`` seconds the run stops with one line instead of waiting forever.

Memory. Every worker process sets ``mallopt(M_MMAP_THRESHOLD, 32 MiB)`` and
``mallopt(M_TRIM_THRESHOLD, 64 MiB)`` once (glibc's default trimming doubled the CPU cost of
a task), and a LocalCluster's nannies leave out Dask's ``MALLOC_TRIM_THRESHOLD_`` pre-spawn
setting.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import math
import os
import sys
import time
import uuid
from typing import Any

from ..errors import BackendProcessFailed, BackendStopped, RemoteError, RngcheckError, one_line
from . import battery
from .streams import BackendSource, FunctionSource, RawSource, XorSource

MiB = 1 << 20
ALIGN_WORDS = 1 << 19  # the largest sample_words: ranges never cut a sample
DEFAULT_SHARD_BYTES = 32 * MiB  # returned state about 5% of the data volume (issue 16)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
MMAP_THRESHOLD_BYTES, TRIM_THRESHOLD_BYTES = 32 * MiB, 64 * MiB
INSTALL_HINT = "pip install 'rngcheck[distributed]' (or: pip install 'dask[distributed]')"


WAIT_SECONDS = 2.0  # how often the client looks up from waiting (progress, workers lost)


def _distributed():
    try:
        import distributed
    except ImportError:
        raise RngcheckError(f"--dask needs dask.distributed: {INSTALL_HINT}") from None
    return distributed


# ----------------------------------------------------------------------------------------
# Addresses.
# ----------------------------------------------------------------------------------------

def parse_address(text: str) -> tuple[str, object]:
    """'local' -> ('local', None); 'local:N' -> ('local', N); 'tcp://h:p' -> ('address', text);
    'scheduler-file:PATH' -> ('scheduler-file', PATH). Anything else: a one-line error."""
    text = str(text).strip()
    if text == "local":
        return "local", None
    if text.startswith("local:"):
        count = text[len("local:"):]
        if not count.isdigit() or int(count) < 1:
            raise RngcheckError(f"--dask {text}: N in local:N must be a whole number of workers, at least 1")
        return "local", int(count)
    if text.startswith("scheduler-file:"):
        path = text[len("scheduler-file:"):]
        if not path:
            raise RngcheckError("--dask scheduler-file:PATH needs a path")
        if not os.path.isfile(path):
            raise RngcheckError(f"--dask: scheduler file {path!r} does not exist")
        return "scheduler-file", path
    if "://" in text and text.split("://", 1)[1]:
        _check_scheme(text, text)
        return "address", text
    raise RngcheckError(f"--dask: cannot read {text!r} (use local, local:N, tcp://HOST:PORT or scheduler-file:PATH)")


SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")  # distributed.comm.registry's (checked there too)


def _check_scheme(address: str, said: str) -> None:
    """A one-line error, before any Client is made, for an address no Dask transport speaks (a
    Client that fails in its constructor waits a minute in its finaliser)."""
    scheme = address.split("://", 1)[0]
    try:
        from distributed.comm.registry import backends
        known = sorted(backends)
    except ImportError:
        known = list(SCHEMES)
    if scheme not in known:
        raise RngcheckError(f"--dask {said}: unknown scheme {scheme!r} (Dask speaks {', '.join(known)})")


def scheduler_address(path: str) -> str:
    """The scheduler's address in a Dask scheduler file (``dask scheduler --scheduler-file``), read
    with rngcheck's bounded JSON reader; a file that is not one is a one-line error."""
    from ..jsonfile import read_json
    try:
        data = read_json(path, what="Dask scheduler file")
    except RngcheckError as error:
        raise RngcheckError(f"--dask scheduler-file: {error}") from None
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str) or "://" not in address:
        raise RngcheckError(f"--dask scheduler-file:{path}: not a Dask scheduler file (no \"address\": "
                            "\"tcp://HOST:PORT\" in it)")
    _check_scheme(address, f"scheduler-file:{path}")
    return address


def parse_shard_bytes(text) -> int:
    from .battery import parse_bytes
    value = parse_bytes(text, "--shard-bytes") if isinstance(text, str) else int(text)
    unit = ALIGN_WORDS * 4
    if value < unit or value % unit:
        raise RngcheckError(f"--shard-bytes must be a positive multiple of {unit // MiB} MiB "
                            "(the largest sample: ranges never cut one)")
    return value


# ----------------------------------------------------------------------------------------
# What runs on the workers.
# ----------------------------------------------------------------------------------------

_PROCESS: dict[str, Any] = {"tuned": False, "backends": {}}


def environment() -> dict:
    """The versions a worker must share with the client (its results must be the client's)."""
    import numpy
    import scipy

    from .. import __version__
    return {"rngcheck": __version__, "numpy": numpy.__version__, "scipy": scipy.__version__}


def client_environment() -> dict:
    """The versions on this (the client's) side: what every worker must report."""
    return environment()


def tune_malloc() -> bool:
    """mallopt(M_MMAP_THRESHOLD, 32 MiB) and mallopt(M_TRIM_THRESHOLD, 64 MiB), once per process
    (glibc only; elsewhere nothing). True when set."""
    if _PROCESS["tuned"]:
        return True
    _PROCESS["tuned"] = True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        ok = libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
        return libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1 and ok
    except (OSError, AttributeError):
        return False


def _backend(spec: str):
    """The backend of ``spec``, loaded once per worker process and hosted as everywhere else
    (rngcheck.backends.hosting): a backend that crashes ends its own process, not the Dask worker,
    and its BackendCrashed reaches the client, whose document says so as it does without --dask."""
    backends = _PROCESS["backends"]
    if spec not in backends:
        from ..backends.hosting import hosted
        backends[spec] = hosted(spec)
    return backends[spec]


def build(recipe, word: int):
    """The source a recipe describes, positioned at ``word`` (on the worker)."""
    kind = recipe[0]
    if kind == "backend":
        _, spec, key, counter_start, tensor_words = recipe
        return BackendSource(_backend(spec), key, counter_start, word, tensor_words)
    if kind == "raw":
        return RawSource(recipe[1], word)
    if kind == "function":
        return recipe[1].at(word)
    if kind == "xor":
        base = build(recipe[1], word)
        other = base.neighbour(recipe[2])
        if other is None:
            raise RngcheckError(f"the stream has no {recipe[2]} neighbour")
        return XorSource(base, other, recipe[2])
    raise RngcheckError(f"unknown source recipe {kind!r}")


def pack(accs):
    """What a task returns: the accumulators' states where they have state()/from_state(),
    else the accumulators themselves (pickled by Dask)."""
    if accs and all(hasattr(acc, "state") and hasattr(type(acc), "from_state") for acc in accs):
        return "state", [acc.state() for acc in accs]
    return "objects", accs


def unpack(packed, like):
    kind, items = packed
    if kind == "state":
        return [type(acc).from_state(state) for acc, state in zip(like, items)]
    return items


def feed_range(recipe, factories, offset: int, start: int, count: int, expected: dict):
    """One task: words offset+start .. offset+start+count-1 of the recipe's stream into new
    accumulators (start=start: merged in stream order by the client)."""
    tune_malloc()
    mine = environment()
    if mine != expected:
        raise RngcheckError(_version_message("this worker", mine, expected))
    source = build(recipe, offset + start)
    try:
        accs, read = battery.feed(source, factories, count, start=start)
    finally:
        source.close()
    if not accs:
        return ("objects", []), read
    return pack(accs), read


def _version_message(where: str, theirs: dict, ours: dict) -> str:
    differ = ", ".join(f"{name} {theirs.get(name)} (client {ours.get(name)})"
                       for name in sorted(ours) if theirs.get(name) != ours.get(name))
    return (f"Dask worker {where} has different versions: {differ}; refused before any work "
            "(install the client's versions on every worker)")


# ----------------------------------------------------------------------------------------
# The client side.
# ----------------------------------------------------------------------------------------

@contextlib.contextmanager
def _local_cluster_config(allowed_failures):
    import dask
    # worker-saturation 1.0: a worker holds one task a thread, so a range that kills its worker is
    # the only one its death counts against (with Dask's 1.1 a one-thread worker held two ranges,
    # both were charged, and the one-line KilledWorker error could name the innocent one: seen in
    # a full test run under load)
    settings: dict[str, Any] = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                                "distributed.scheduler.worker-saturation": 1.0}
    if allowed_failures is not None:
        settings["distributed.scheduler.allowed-failures"] = int(allowed_failures)
    with dask.config.set(settings):
        yield


def _spawn_environ() -> dict[str, str | None]:
    """This process's values of the variables a LocalCluster's nanny sets in it for its workers
    (dask's distributed.nanny.pre-spawn-environ: OMP_, MKL_ and OPENBLAS_NUM_THREADS = 1), so that
    close() puts them back: a program that used the executor, and what it starts after, keeps its
    own thread counts (found by the tests: a later test's child process saw OMP_NUM_THREADS=1)."""
    import dask
    return {name: os.environ.get(name) for name in dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {}}


# A LocalCluster's dashboard has no authentication: this machine only unless asked (--dask-dashboard).
DASHBOARD_ADDRESS = "127.0.0.1:0"


class DaskExecutor:
    """Feeds the battery's streams range by range on Dask (``battery.run(..., executor=...)``).

    ``address``: 'local' (a LocalCluster of one single-threaded worker process per CPU),
    'local:N', 'tcp://HOST:PORT' (or any Dask scheme), 'scheduler-file:PATH', or a ready
    ``distributed.Client``. ``backend_spec``: how workers load the backend of a
    BackendSource (default: the backend's name). ``allowed_failures``: for a LocalCluster,
    how many worker deaths a task may cause before Dask gives up on it (Dask's default 3).
    ``dashboard_address``: where a LocalCluster's dashboard listens; by default this machine
    only (it has no authentication), any port.
    """

    def __init__(self, address="local", *, shard_bytes: int = DEFAULT_SHARD_BYTES, backend_spec: str | None = None,
                 progress=None, allowed_failures: int | None = None, connect_timeout: float = 30.0,
                 no_worker_timeout: float = 120.0, silence_logs: int = logging.CRITICAL,
                 checkpoint: str | None = None, identity: dict | None = None,
                 dashboard_address: str = DASHBOARD_ADDRESS):
        distributed = _distributed()
        self.checkpoint = os.fspath(checkpoint) if checkpoint is not None else None
        self.identity = dict(identity or {})
        self.ranges_resumed = 0
        self.shard_bytes = parse_shard_bytes(shard_bytes)
        self.backend_spec = backend_spec
        self.say = progress or (lambda text: None)
        self.no_worker_timeout = no_worker_timeout
        self.cluster = None
        self._environ: dict[str, str | None] | None = None   # this process's variables a LocalCluster sets
        self._own_client = False
        self.workers_lost = 0
        self.shards_rerun = 0
        self.ranges = 0
        self._seen_events: set[tuple[Any, Any]] = set()
        self._keys: set[str] = set()
        began = time.perf_counter()
        if isinstance(address, distributed.Client):
            self.client, self.address = address, address.scheduler.address
        else:
            kind, value = parse_address(address)
            self.address = str(address)
            try:
                if kind == "local":
                    self._environ = _spawn_environ()
                    with _local_cluster_config(allowed_failures):
                        self.cluster = distributed.LocalCluster(
                            n_workers=value or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                            dashboard_address=dashboard_address, silence_logs=silence_logs)
                    self.client = distributed.Client(self.cluster, set_as_default=False)
                elif kind == "scheduler-file":
                    self.client = distributed.Client(scheduler_address(str(value)), timeout=connect_timeout,
                                                     set_as_default=False)
                else:
                    self.client = distributed.Client(value, timeout=connect_timeout, set_as_default=False)
            except RngcheckError:
                raise
            except Exception as error:
                self.close()
                raise RngcheckError(f"--dask {address}: cannot start or reach the Dask scheduler: "
                                    f"{one_line(error)}") from None
            self._own_client = True
        self.start_seconds = time.perf_counter() - began
        try:
            self._wait_for_workers(connect_timeout)
            self.expected = client_environment()
            self.workers = self.check_versions()
            self._event_mark = self._events_now()
        except BaseException:
            self.close()
            raise
        if self.cluster is not None:
            link = self.dashboard()
            self.say(f"dask: LocalCluster of {len(self.workers)} workers started in {self.start_seconds:.1f} s; "
                     + (f"dashboard {link}" if link else "no dashboard (pip install bokeh for one)"))
        else:
            self.say(f"dask: {len(self.workers)} workers at {self.address}")

    # -- set-up ------------------------------------------------------------------------
    def _wait_for_workers(self, timeout):
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except Exception:
            raise RngcheckError(f"--dask {self.address}: no Dask worker connected within {timeout:.0f} s") from None

    def check_versions(self) -> dict:
        """{worker address: versions}; a worker whose versions differ from the client's: a
        one-line RngcheckError, before any work is sent."""
        try:
            found = self.client.run(environment)
        except Exception as error:
            raise RngcheckError(f"--dask {self.address}: the workers cannot run rngcheck "
                                f"({one_line(error)}); install the client's rngcheck on every worker") from None
        for worker, versions in sorted(found.items()):
            if versions != self.expected:
                raise RngcheckError(_version_message(worker, versions, self.expected))
        return found

    def dashboard(self) -> str | None:
        import importlib.util
        if self.cluster is None or importlib.util.find_spec("bokeh") is None:
            return None
        return self.cluster.dashboard_link

    def close(self):
        client, cluster = getattr(self, "client", None), self.cluster
        if self._own_client and client is not None:
            with contextlib.suppress(Exception):
                client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()
        self.cluster = None
        if self._environ is not None:   # as they were: the thread counts a LocalCluster's nanny set stay its workers'
            for name, value in self._environ.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            self._environ = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- faults --------------------------------------------------------------------------
    def _events_now(self):
        try:
            events = self.client.get_events("all")
        except Exception:
            return 0.0
        return max((stamp for stamp, _ in events), default=0.0)

    def _count_losses(self):
        """Workers lost (unexpected remove-worker events) and our tasks they held, since the start."""
        try:
            events = self.client.get_events("all")
        except Exception:
            return
        for stamp, msg in events:
            if stamp <= self._event_mark or not isinstance(msg, dict) or msg.get("action") != "remove-worker":
                continue
            ident = (stamp, msg.get("worker"))
            if ident in self._seen_events:
                continue
            self._seen_events.add(ident)
            if msg.get("expected"):
                continue
            self.workers_lost += 1
            held = set(msg.get("processing-tasks") or ()) | set(msg.get("lost-computed-tasks") or ())
            self.shards_rerun += len({str(key) for key in held} & self._keys)

    def execution(self) -> dict:
        self._count_losses()
        import dask
        import distributed
        return {"executor": "dask", "address": "LocalCluster" if self.cluster is not None else self.address,
                "workers": len(self.workers), "shard_bytes": self.shard_bytes, "ranges": self.ranges,
                "workers_lost": self.workers_lost, "shards_rerun": self.shards_rerun,
                "ranges_resumed": self.ranges_resumed,
                "dask": dask.__version__, "distributed": distributed.__version__,
                "cluster_start_seconds": self.start_seconds if self.cluster is not None else None}

    # -- feeding -------------------------------------------------------------------------
    def recipe(self, source):
        """How a worker rebuilds ``source`` (never the live object when it holds a device or a file)."""
        if isinstance(source, XorSource):
            return ("xor", self.recipe(source.first), source.kind)
        if isinstance(source, BackendSource):
            spec = self.backend_spec or getattr(source.backend, "name", None)
            if not spec:
                raise RngcheckError("the backend has no name: give backend_spec to DaskExecutor")
            return ("backend", spec, source.key, source.counter_start, source.tensor_words)
        if isinstance(source, RawSource):
            if source.path == "-":
                raise RngcheckError("--dask cannot read stdin (the workers cannot see it): write the stream "
                                    "to a file on a filesystem the workers share and give --input FILE")
            return ("raw", os.path.abspath(source.path))
        if isinstance(source, FunctionSource):
            return ("function", source.at(0))
        raise RngcheckError(f"a {type(source).__name__} cannot be sent to Dask workers")

    def plan(self, factories, words: int):
        pieces = max(1, math.ceil(words * 4 / self.shard_bytes))
        if pieces == 1:
            return [(0, words)]
        return battery.balanced_ranges(factories, words, pieces, ALIGN_WORDS)

    def feed(self, source, factories, words: int, offset: int = 0, stream: str = "main"):
        """Words offset .. offset+words-1 of ``source`` into accumulators (as battery.feed with
        start=0), read range by range on the workers and merged in stream order."""
        distributed = _distributed()
        recipe = self.recipe(source)
        ranges = self.plan(factories, words)
        token = uuid.uuid4().hex[:8]
        label = stream if not offset else f"{stream} (retest)"
        keys = [f"rngcheck-{stream.replace(' ', '_')}-{offset}-{index}-{token}" for index in range(len(ranges))]
        self._keys.update(keys)
        self.ranges += len(ranges)
        saved = self._open_checkpoint(source, recipe, factories, words, offset, stream, ranges)
        parts = {}
        if saved is not None:
            from .checkpoint import restore
            for index, states in saved.done().items():
                accs = restore(factories, states)
                parts[index] = (accs, accs[0].end - accs[0].start if accs else 0)
            self.ranges_resumed += len(parts)
            if parts:
                self.say(f"{label}: {len(parts)}/{len(ranges)} ranges from the checkpoint {saved.directory}")
        futures = {}
        for index, (start, count) in enumerate(ranges):
            if index in parts:
                continue
            future = self.client.submit(feed_range, recipe, factories, offset, start, count, self.expected,
                                        key=keys[index], pure=False, retries=0)
            futures[future] = index
        pending = set(futures)
        like = [factory(start=0) for factory in factories]  # the accumulators' types, for from_state
        left = sum(ranges[index][1] for index in futures.values())  # words still to read
        began, done_words, last_say, no_workers_since = time.perf_counter(), 0, 0.0, None
        try:
            while pending:
                with self.client.as_current():  # wait() uses the current client; ours is not the default
                    try:
                        finished, pending = distributed.wait(pending, timeout=WAIT_SECONDS,
                                                             return_when="FIRST_COMPLETED")
                    except TimeoutError:  # no range finished within WAIT_SECONDS: look at the workers, wait on
                        finished = set()
                for future in finished:
                    index = futures[future]
                    packed, read = self._outcome(future, index, ranges, label, offset)
                    if saved is not None and packed[0] == "state":
                        saved.save(index, packed[1])  # before it counts: a killed client resumes here
                    parts[index] = (self._unpack(packed, like), read)
                    done_words += ranges[index][1]
                    future.release()
                now = time.perf_counter()
                if finished and (now - last_say >= 1.0 or not pending):
                    last_say = now
                    rate = done_words * 4 / 1e6 / max(now - began, 1e-9)
                    eta = (left - done_words) * 4 / 1e6 / rate if rate > 0 else float("inf")
                    self.say(f"{label}: {len(parts)}/{len(ranges)} ranges, {rate:.0f} MB/s, ETA {eta:.0f} s")
                if not finished:
                    if self.client.scheduler_info().get("workers"):
                        no_workers_since = None
                    elif no_workers_since is None:
                        no_workers_since = now
                    elif now - no_workers_since > self.no_worker_timeout:
                        raise RngcheckError(f"--dask {self.address}: no Dask worker for {self.no_worker_timeout:.0f} s "
                                            f"with {len(pending)} ranges of {label} left; the run stopped")
        finally:
            if pending:
                with contextlib.suppress(Exception):
                    self.client.cancel(list(pending))
            if saved is not None and hasattr(saved, "close"):
                saved.close()
        self._count_losses()
        return self._merge(parts, ranges, factories)

    def _outcome(self, future, index, ranges, label, offset):
        distributed = _distributed()
        start, count = ranges[index]
        where = (f"range {index + 1} of {len(ranges)} of the {label} stream "
                 f"(words {offset + start}..{offset + start + count - 1})")
        if future.status == "error":
            error = future.exception()
            if isinstance(error, distributed.KilledWorker):
                raise RngcheckError(f"{where} killed its Dask worker again and again (KilledWorker after "
                                    "allowed-failures); the run stopped") from None
            if isinstance(error, RngcheckError):
                raise RngcheckError(f"{where}: {error}") from None
            if isinstance(error, BackendProcessFailed):  # the backend crashed or hung on the worker: the
                # battery's own case (an INCOMPLETE document, backend_failed), as without --dask
                raise type(error)(f"{where}: {error}", error.stderr_tail) from None
            if isinstance(error, BackendStopped):
                raise BackendStopped(f"{where}: {error}") from None
            if isinstance(error, RemoteError):  # the backend raised on the worker: the same case
                raise RemoteError(f"{where}: {error}") from None
            raise RngcheckError(f"{where} failed on a Dask worker: {one_line(error)}") from None
        if future.status == "cancelled":
            raise RngcheckError(f"{where} was cancelled on the Dask scheduler; the run stopped")
        return future.result()

    @staticmethod
    def _unpack(packed, like):
        return packed[1] if packed[0] != "state" else unpack(packed, like)

    def _merge(self, parts, ranges, factories):
        accs, total = None, 0
        for index in range(len(ranges)):
            others, read = parts[index]
            if accs is None:
                accs, total = others, read
                continue
            if not others or total != ranges[index][0]:
                break  # an earlier range ended early (the stream ended): later ones are not contiguous
            for acc, other in zip(accs, others):
                acc.merge(other)
            total += read
        return accs, total

    # -- checkpoints -----------------------------------------------------------------------
    def _open_checkpoint(self, source, recipe, factories, words, offset, stream, ranges):
        """The checkpoint of this stream's ranges (a directory per stream under ``checkpoint``),
        or None. Its identity: the run's (``identity``), the source, the tests, the plan."""
        if self.checkpoint is None:
            return None
        from .checkpoint import Checkpoint, versions
        tests = []
        for factory in factories:
            probe = factory(start=0)
            tests.append({"name": probe.name, "class": type(probe).__name__, "parameters": probe.parameters,
                          "sample_words": probe.sample_words, "max_samples": probe.max_samples})
        described = source.describe()
        if recipe[0] == "xor":
            described = {"xor_of": recipe[2], "of": self._describe_recipe(recipe[1])}
        elif recipe[0] == "raw":
            described = {**described, "size": os.path.getsize(recipe[1])}
        identity = {**self.identity, "stream": stream, "offset": offset, "words": words, "source": described,
                    "versions": versions(), "tests": tests, "plan": [list(r) for r in ranges]}
        slug = stream.replace(" ", "_").replace("+", "plus") + (f"-from-{offset}" if offset else "")
        return Checkpoint(os.path.join(self.checkpoint, slug), json.loads(json.dumps(identity, default=str)))

    def _describe_recipe(self, recipe):
        if recipe[0] == "backend":
            return {"backend": recipe[1], "key": hex(recipe[2]), "counter": hex(recipe[3]), "tensor_words": recipe[4]}
        if recipe[0] == "function":
            return recipe[1].describe()
        return {"raw": recipe[1]}
