"""``rngcheck stats``: the statistical battery on a backend's stream or on a raw stream.

    rngcheck stats --backend numpy --tier smoke
    rngcheck stats --backend numpy --tier deep --bytes 8G --seed 7 --json out.json
    some-generator | rngcheck stats --input - --tier standard     (also --raw -)
    rngcheck stats --backend numpy --tier smoke --with dieharder   (a real peer beside ours: peers.py)
    rngcheck stats --backend numpy --tier standard --dask local:2  (ranges on Dask: distributed.py)
    some-generator | rngcheck stats --input - --progressive [--max-bytes 1T]   (until it fails:
        a line at each doubling from 64 KiB, PractRand's way; progressive.py)
    rngcheck stats --distribution normal --dtype float32 --bytes 64M   (numbers: distributions.py;
        the reference's numbers, or a --backend's random_numbers; --bytes counts the numbers' bytes)

Exit codes: 0 the final verdict is PASS (a SUSPECT resolved by its retest), 1 some test
FAILs (this takes precedence), 2 usage error, or a stream too short for the tier (the
tests that had enough data still report) or a SUSPECT left without fresh data to retest.
With --progressive: 0 when --max-bytes or the stream's end is reached without a FAIL, 1 at
the first FAIL (the line says the length), 2 when not even the first length could be read.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass, fields

from ..errors import RngcheckError
from ..results import verdicts
from .tiers import TIERS, parse_bytes

DEFAULT_SEED = 1
DEFAULT_CONVENTION = "tensorflow"
DEFAULT_DTYPE = "float32"
NUMBERS_OPTIONS = ("convention", "dtype", "low", "high")
# the options of the word battery that --distribution does not use (refused, never ignored)
WORDS_ONLY = {"input": "--input", "dask": "--dask", "dask_dashboard": "--dask-dashboard",
              "shard_bytes": "--shard-bytes", "checkpoint": "--checkpoint",
              "with_peers": "--with", "dieharder_tests": "--dieharder-tests", "workers": "--workers",
              "no_interstream": "--no-interstream", "progressive": "--progressive", "max_bytes": "--max-bytes"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--backend", metavar="NAME", help="draw the stream through this backend's operator")
    source.add_argument("--input", "--raw", dest="input", metavar="FILE",
                        help="read 32-bit little-endian words from FILE ('-' for stdin)")
    parser.add_argument("--in-process", action="store_true",
                        help="load a Python --backend in rngcheck's own process (faster, no crash or hang "
                             "isolation; default: every backend but numpy runs in a worker process)")
    parser.add_argument("--tier", choices=sorted(TIERS), default=None,
                        help="smoke (seconds, CI gate; the default), standard (seconds on 2 cores; the default "
                        "with --progressive), deep (sized by --bytes)")
    parser.add_argument("--bytes", metavar="N", help="bytes of the main stream (default: the tier's size; "
                        "units K, M, G accepted)")
    parser.add_argument("--seed", type=int, default=None,
                        help=f"backend stream key, a 64-bit integer (default {DEFAULT_SEED})")
    parser.add_argument("--json", metavar="FILE", help="write the result document here ('-' for stdout)")
    parser.add_argument("--workers", type=int, default=None,
                        help="processes (default: one per core this process may use)")
    parser.add_argument("--dask", metavar="ADDRESS", default=None,
                        help="read the stream's ranges on Dask: local (a LocalCluster, one worker per CPU), "
                        "local:N, tcp://HOST:PORT or scheduler-file:PATH (needs the distributed extra; "
                        "docs/distributed.md); the document is the same as without")
    parser.add_argument("--dask-dashboard", metavar="HOST:PORT", default=None,
                        help="with --dask local: where the LocalCluster's dashboard listens (default "
                        "127.0.0.1, any port: this machine only, as it has no authentication; e.g. "
                        "0.0.0.0:8787 opens it to the network)")
    parser.add_argument("--shard-bytes", metavar="N", default=None,
                        help="with --dask: bytes per range, a multiple of 2M (default 32M)")
    parser.add_argument("--checkpoint", metavar="DIR", default=None,
                        help="with --dask: keep each finished range's state in DIR; the same command run "
                        "again after an interruption skips them (a checkpoint of another run is refused)")
    parser.add_argument("--progressive", action="store_true",
                        help="read without end and report at every doubling from 64 KiB (the tier's tests at that "
                        "length), stopping at the first FAIL after its retest (exit 1, with the length): "
                        "PractRand's way of running")
    parser.add_argument("--max-bytes", metavar="N", default=None,
                        help="with --progressive: the longest length to reach (units K, M, G, T); default: none")
    parser.add_argument("--no-interstream", action="store_true",
                        help="skip the tests between streams whose keys/counters differ by one")
    parser.add_argument("--quiet", action="store_true", help="print only the verdict line")
    parser.add_argument("--with", dest="with_peers", action="append", metavar="PEER", default=None,
                        help="also run an installed peer on the same stream and put its results beside ours "
                        "(dieharder: Debian/Ubuntu package 'dieharder'); informative, no effect on the exit code")
    numbers = parser.add_argument_group("numbers (goodness of fit of a convention's distributions)")
    numbers.add_argument("--distribution", metavar="KIND", default=None,
                         help="test numbers instead of words: uniform, normal or truncated_normal, drawn by the "
                         "reference (rngcheck.numbers) or by --backend's random_numbers; --bytes and the tier "
                         "count the numbers' bytes")
    numbers.add_argument("--convention", metavar="NAME", default=None, help="with --distribution: the "
                         f"conversion rules (default {DEFAULT_CONVENTION})")
    numbers.add_argument("--dtype", metavar="TYPE", default=None, help="with --distribution: float32 (default), "
                         "float64, float16 or bfloat16")
    numbers.add_argument("--low", metavar="X", default=None, help="with --distribution uniform: the range's low end "
                         "(with --high; default [0, 1))")
    numbers.add_argument("--high", metavar="X", default=None, help="with --distribution uniform: the range's high end")
    parser.add_argument("--dieharder-tests", metavar="IDS", default=None,
                        help="with --with dieharder: comma-separated dieharder test numbers (-d), or 'all' "
                        "(default by tier: smoke 0,100,15; standard 12 tests; deep all)")


@dataclass(frozen=True)
class StatsOptions:
    """``rngcheck stats``'s options, built once from the command line (``from_args``) and handed
    to every helper (as ``rngcheck run`` hands its RunOptions), instead of the argparse Namespace."""

    backend: str | None = None
    input: str | None = None
    in_process: bool = False
    tier: str = "smoke"
    bytes: str | None = None
    seed: int | None = None
    json: str | None = None
    workers: int | None = None
    dask: str | None = None
    dask_dashboard: str | None = None
    shard_bytes: str | None = None
    checkpoint: str | None = None
    no_interstream: bool = False
    progressive: bool = False
    max_bytes: str | None = None
    quiet: bool = False
    with_peers: tuple[str, ...] = ()
    dieharder_tests: str | None = None
    distribution: str | None = None
    convention: str | None = None
    dtype: str | None = None
    low: str | None = None
    high: str | None = None

    @classmethod
    def from_args(cls, args) -> StatsOptions:
        """The options of a parsed command line (a Namespace; what it lacks keeps its default)."""
        if isinstance(args, cls):
            return args
        values = {f.name: getattr(args, f.name) for f in fields(cls) if getattr(args, f.name, None) is not None}
        values["with_peers"] = tuple(values.get("with_peers") or ())
        values.setdefault("tier", "standard" if values.get("progressive") else "smoke")
        return cls(**values)


def _reproduce(args: StatsOptions, seed) -> str:
    parts = ["rngcheck", "stats"]
    if args.backend:
        parts += ["--backend", args.backend, "--seed", str(seed)]
    else:
        parts += ["--input", str(args.input)]
    parts += ["--tier", args.tier]
    if args.bytes:
        parts += ["--bytes", str(args.bytes)]
    if args.progressive:
        parts.append("--progressive")
    if args.max_bytes:
        parts += ["--max-bytes", str(args.max_bytes)]
    if args.no_interstream:
        parts.append("--no-interstream")
    for peer in args.with_peers:
        parts += ["--with", peer]
    if args.dieharder_tests:
        parts += ["--dieharder-tests", args.dieharder_tests]
    return " ".join(shlex.quote(p) for p in parts)


def _dieharder_tests(text, wanted):
    if text is None:
        return None
    if "dieharder" not in wanted:
        raise RngcheckError("--dieharder-tests needs --with dieharder")
    if text.strip().lower() == "all":
        return "all"
    try:
        tests = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise RngcheckError(f"--dieharder-tests: {text!r} is not a comma-separated list of test numbers") from None
    if not tests:
        raise RngcheckError("--dieharder-tests: no test numbers given")
    return tests


def build_source(args: StatsOptions):
    from .streams import BackendSource, RawSource

    if args.backend:
        from ..backends.hosting import hosted
        seed = DEFAULT_SEED if args.seed is None else args.seed
        if not 0 <= seed < 1 << 64:
            raise RngcheckError("--seed must be a 64-bit unsigned integer")
        # as rngcheck run hosts it: the reference in-process, every other backend in a worker process
        return BackendSource(hosted(args.backend, in_process=args.in_process), key=seed), seed
    if args.input:
        if args.seed is not None:
            raise RngcheckError("--seed applies to --backend streams only")
        return RawSource(args.input), None
    raise RngcheckError("give --backend NAME or --input FILE ('-' for stdin)")


def run_on_backend(backend, backend_spec: str, tier: str = "smoke", seed: int = DEFAULT_SEED,
                   nbytes: int | None = None, workers: int | None = None) -> dict:
    """The stats document for an already loaded backend (for ``rngcheck run --stats TIER``)."""
    from . import battery
    from .streams import BackendSource

    reproduce = f"rngcheck stats --backend {shlex.quote(backend_spec)} --seed {seed} --tier {tier}"
    if nbytes:
        reproduce += f" --bytes {nbytes}"
    return battery.run(BackendSource(backend, key=seed), tier=tier, nbytes=nbytes, seed=seed,
                       reproduce=reproduce, workers=workers)


def render(doc: dict, stream=None, quiet: bool = False) -> None:
    out = stream or sys.stdout
    if not quiet:
        for entry in doc["results"]:
            if entry["verdict"] != verdicts.STATS_PASS or entry["first_verdict"] != verdicts.STATS_PASS:
                retest = f"  retest {entry['retest']['p_display']}" if entry.get("retest") else ""
                print(f"{entry['verdict']:8s} {entry['test']:36s} {entry['stream']:20s} {entry['level']:14s} "
                      f"p = {entry['p_display']}{retest}", file=out)
        for item in doc["not_run"]:
            print(f"NOT RUN  {item['test']:36s} {item['stream']:20s} {item['reason']}", file=out)
        if doc["message"]:
            print(doc["message"], file=out)
    if not quiet:
        for peer in doc.get("peers", []):
            render_peer(peer, out)
    c = doc["counts"]
    short = "" if doc["complete"] else (" (interrupted)" if doc.get("interrupted") else
                                        " (the backend failed)" if doc.get("backend_failed") else
                                        " (stream too short for the tier)")
    tally = ", ".join(f"{c[v]} {v.lower()}" for v in verdicts.STATS_JUDGED)
    print(f"{doc['verdict']}{short}: {len(doc['results'])} p-values ({tally}) "
          f"on {doc['bytes_tested'] / (1 << 20):.1f} MiB, tier {doc['tier']}, "
          f"{doc['elapsed_seconds']:.1f} s; reproduce: {doc['reproduce']}", file=out)


def render_peer(peer: dict, out) -> None:
    """A peer's results that are not PASSED, its errors, and a summary line."""
    for row in peer["results"]:
        if row["assessment"] != "PASSED":
            print(f"{'peer':8s} {peer['tool'] + ' ' + row['test']:36s} {'ntup ' + str(row['ntup']):20s} "
                  f"{row['assessment']:14s} p = {row['p_value']:.8f}", file=out)
    for error in peer["errors"]:
        print(f"peer     {peer['tool']}: {error['command']}: {error['error']}", file=out)
    tally: dict[str, int] = {}
    for row in peer["results"]:
        tally[row["assessment"]] = tally.get(row["assessment"], 0) + 1
    summary = ", ".join(f"{n} {a}" for a, n in sorted(tally.items())) or "none"
    if peer["errors"]:
        summary += f", {len(peer['errors'])} errors"
    print(f"peer {peer['tool']} {peer['version'] or ''}: {len(peer['results'])} results ({summary}) in "
          f"{peer['elapsed_seconds']:.1f} s (informative: not part of the verdict)", file=out)


def exit_code(doc: dict) -> int:
    if doc["counts"][verdicts.STATS_FAIL]:
        return 1
    if not doc["complete"] or doc["verdict"] in (verdicts.STATS_SUSPECT, verdicts.STATS_INCOMPLETE):
        return 2
    return 0


def _check_dask_arguments(args: StatsOptions) -> None:
    dask_address = args.dask
    if dask_address is None:
        if args.dask_dashboard is not None:
            raise RngcheckError("--dask-dashboard applies with --dask local only")
        if args.shard_bytes is not None:
            raise RngcheckError("--shard-bytes applies with --dask only")
        if args.checkpoint is not None:
            raise RngcheckError("--checkpoint applies with --dask only (e.g. --dask local:2)")
        return
    from . import distributed
    kind, where = distributed.parse_address(dask_address)
    if args.dask_dashboard is not None and kind != "local":
        raise RngcheckError("--dask-dashboard applies with --dask local only (a running scheduler has its own)")
    if kind == "scheduler-file":
        distributed.scheduler_address(str(where))
    if args.shard_bytes is not None:
        distributed.parse_shard_bytes(args.shard_bytes)
    if args.workers is not None:
        raise RngcheckError("--workers applies without --dask (the number of Dask workers: --dask local:N)")
    if args.input == "-":
        raise RngcheckError("--dask cannot read stdin (the workers cannot see it): write the stream to a file "
                            "on a filesystem the workers share and give --input FILE")


def _claim_json(args: StatsOptions):
    """--json against the command's other files, before the run: not the --input, not the
    --checkpoint directory (nor a file in it: the checkpoint's own files live there); then locked
    until it is written (rngcheck.outputs.claim_outputs). A context manager (nothing for stdout)."""
    from pathlib import Path

    from ..outputs import claim_outputs
    if not args.json or args.json == "-":
        return contextlib.nullcontext()
    checkpoint = args.checkpoint
    if checkpoint is not None and Path(str(args.json)).resolve().parent == Path(checkpoint).resolve():
        raise RngcheckError(f"--json {args.json} is inside the --checkpoint directory {checkpoint}: "
                            "give it a path outside")
    return claim_outputs({"--json": args.json}, {"--input": args.input if args.input != "-" else None,
                                                 "--checkpoint": checkpoint})


@contextlib.contextmanager
def _executor(args: StatsOptions, progress, identity):
    if args.dask is None:
        yield None
        return
    from . import distributed
    shard = distributed.parse_shard_bytes(args.shard_bytes) if args.shard_bytes else distributed.DEFAULT_SHARD_BYTES
    with distributed.DaskExecutor(args.dask, shard_bytes=shard, backend_spec=args.backend,
                                  progress=progress, checkpoint=args.checkpoint, identity=identity,
                                  dashboard_address=args.dask_dashboard or distributed.DASHBOARD_ADDRESS) as executor:
        yield executor


def _number(text, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise RngcheckError(f"{option} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise RngcheckError(f"{option} {text!r} is not a finite number")
    return value


def _numbers_reproduce(args: StatsOptions, kind, convention, dtype, seed) -> str:
    parts = ["rngcheck", "stats", "--distribution", kind, "--convention", convention, "--dtype", dtype]
    if args.low is not None:
        parts += [f"--low={args.low}", f"--high={args.high}"]   # "=": a negative bound is not an option
    if args.backend:
        parts += ["--backend", args.backend]
    parts += ["--seed", str(seed), "--tier", args.tier]
    if args.bytes:
        parts += ["--bytes", str(args.bytes)]
    return " ".join(shlex.quote(p) for p in parts)


def run_distribution(args) -> int:
    """``--distribution``: the goodness-of-fit tests of rngcheck.stats.distributions."""
    args = StatsOptions.from_args(args)
    for name, option in WORDS_ONLY.items():
        if getattr(args, name, None) not in (None, False, ()):
            raise RngcheckError(f"{option} does not apply with --distribution")
    from . import distributions

    kind = args.distribution
    distributions.MODELS.get(kind)  # one line naming the known kinds otherwise
    convention = args.convention or DEFAULT_CONVENTION
    dtype = args.dtype or DEFAULT_DTYPE
    if (args.low is None) != (args.high is None):
        raise RngcheckError("give both --low and --high (or neither: [0, 1))")
    low = None if args.low is None else _number(args.low, "--low")
    high = None if args.high is None else _number(args.high, "--high")
    request = distributions.request_of(kind, convention, dtype, low, high)
    size = distributions.ITEMSIZE[dtype]
    nbytes = parse_bytes(args.bytes) if args.bytes else TIERS[args.tier]
    if nbytes % size:
        raise RngcheckError(f"--bytes must be a multiple of {size} (whole {dtype} numbers)")
    seed = DEFAULT_SEED if args.seed is None else args.seed
    if not 0 <= seed < 1 << 64:
        raise RngcheckError("--seed must be a 64-bit unsigned integer")
    with _claim_json(args):
        backend = None
        if args.backend:
            from ..backends.hosting import hosted
            backend = hosted(args.backend, in_process=args.in_process)
        try:
            stream = distributions.NumberStream(request, key=seed, backend=backend, backend_spec=args.backend)
            progress = None if args.quiet else (lambda text: print(text, file=sys.stderr))
            doc = distributions.run(stream, nbytes // size, tier=args.tier, progress=progress,
                                    reproduce=_numbers_reproduce(args, kind, convention, dtype, seed))
        finally:
            if backend is not None:
                from ..backends.hosting import close
                close(backend)
        _write(args, doc)
    return exit_code(doc)


def _write_json(args: StatsOptions, doc) -> None:
    text = json.dumps(doc, indent=1, default=_json_default)
    if args.json == "-":
        to_stdout(lambda: print(text))
    else:
        from ..jsonfile import atomic_write
        atomic_write(str(args.json), text + "\n")


def _write(args: StatsOptions, doc) -> None:
    if args.json:
        _write_json(args, doc)
    to_stdout(lambda: render(doc, sys.stderr if args.json == "-" else sys.stdout, quiet=args.quiet))


def to_stdout(write) -> None:
    """Run ``write`` (printing to stdout); a reader that stopped reading (``| head``) is not an
    error: the rest of the output is dropped and the exit code stays the verdict's."""
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        try:  # the interpreter's own flush at exit must not fail on the closed pipe either
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass


def run(args) -> int:
    """The command: ``args`` (a parsed command line or a StatsOptions) becomes a StatsOptions here,
    the one place the command line is read."""
    from . import peers

    args = StatsOptions.from_args(args)

    if args.distribution is not None:
        return run_distribution(args)
    for name in NUMBERS_OPTIONS:
        if getattr(args, name, None) is not None:
            raise RngcheckError(f"--{name} applies with --distribution only")
    nbytes = parse_bytes(args.bytes) if args.bytes else None
    if args.workers is not None and args.workers < 1:
        raise RngcheckError(f"--workers {args.workers}: give a positive number of processes")
    _check_dask_arguments(args)
    if nbytes is not None and nbytes % 4:
        raise RngcheckError("--bytes must be a multiple of 4 (whole 32-bit words)")
    wanted = list(dict.fromkeys(args.with_peers or []))
    peers.check(wanted)
    dieharder_tests = _dieharder_tests(args.dieharder_tests, wanted)
    max_bytes = _check_progressive(args, wanted)
    from . import kernels
    kernels.keep_freed_memory()  # the per-chunk temporaries reuse memory, not fresh pages
    with _claim_json(args):   # checked before the run, locked until written
        if args.progressive:
            return _run_progressive(args, max_bytes)
        return _run_battery(args, nbytes, wanted, dieharder_tests)


def _check_progressive(args: StatsOptions, wanted: list) -> int | None:
    """--progressive's options (refused where they do not apply), and its --max-bytes."""
    if not args.progressive:
        if args.max_bytes is not None:
            raise RngcheckError("--max-bytes applies with --progressive (a fixed length: --bytes)")
        return None
    if args.bytes is not None:
        raise RngcheckError("--bytes does not apply with --progressive (it doubles until a FAIL: --max-bytes "
                            "sets the longest length)")
    if wanted:
        raise RngcheckError("--with does not apply with --progressive (a peer reads a fixed length: --bytes)")
    if args.max_bytes is None:
        return None
    max_bytes = parse_bytes(args.max_bytes, "--max-bytes")
    from .progressive import START_BYTES
    if max_bytes < START_BYTES:
        raise RngcheckError(f"--max-bytes must be at least {START_BYTES // 1024}K (the first length)")
    return max_bytes


def _run_progressive(args: StatsOptions, max_bytes: int | None) -> int:
    """--progressive: a line per doubling; the document (every doubling) written at the end, an
    interrupted run's too."""
    from . import progressive
    from .streams import BackendSource, check_spool_room

    if args.input == "-" and max_bytes is not None:   # stdin is kept on disk while it is tested
        check_spool_room(max_bytes)   # (without --max-bytes it grows until the disk says no: one line)
    source, seed = build_source(args)
    out = sys.stderr if args.json == "-" else sys.stdout
    reproduce = _reproduce(args, seed)
    identity = {"reproduce": reproduce, "tier": args.tier, "progressive": True, "max_bytes": max_bytes}
    lengths: list = []

    def report(entry) -> None:
        lengths.append(entry)
        if not args.quiet:
            to_stdout(lambda: print(progressive.line(entry), file=out, flush=True))

    try:
        with _executor(args, None, identity) as executor:
            doc = progressive.run(source, tier=args.tier, max_bytes=max_bytes, workers=args.workers,
                                  executor=executor, report=report, reproduce=reproduce, seed=seed)
    finally:
        source.close()
        if isinstance(source, BackendSource):
            from ..backends.hosting import close
            close(source.backend)
    if args.json:
        _write_json(args, doc)
    state = doc["progressive"]
    to_stdout(lambda: print(progressive_verdict(doc), file=out))
    if state["stopped"] == "interrupted":
        return 130
    if state["stopped"] == "failed":
        return 1
    if not lengths or _too_short(state):
        return 2
    return 0 if state["stopped"] in ("max-bytes", "end-of-stream") else 2


def _too_short(state: dict) -> bool:
    """The stream ended before the first length (64 KiB): nothing was judged at a full length."""
    return state["stopped"] == "end-of-stream" and state["lengths"][0]["bytes_tested"] < state["start_bytes"]


def progressive_verdict(doc: dict) -> str:
    """The last line of a --progressive run: where it stopped and why."""
    from .progressive import size_text, strongest
    state = doc["progressive"]
    longest = size_text(state["lengths"][-1]["bytes_tested"]) if state["lengths"] else "nothing"
    ended = f"no FAIL up to {longest}: the stream ended"
    if state["lengths"] and _too_short(state):
        ended = f"too short: the stream ended at {longest}, before the first length, {size_text(state['start_bytes'])}"
    why = {"failed": f"{verdicts.STATS_FAIL} at {longest}",
           "max-bytes": f"no FAIL up to {longest} (--max-bytes)",
           "end-of-stream": ended,
           "interrupted": f"interrupted; no FAIL up to {longest}",
           "backend-failed": f"the backend failed; no FAIL up to {longest}"}[state["stopped"]]
    if state["stopped"] == "failed":
        failing = [e for e in doc["results"] if e["verdict"] == verdicts.STATS_FAIL]
        worst = strongest(failing) or {}
        why += f" ({len(failing)} failing; strongest {worst['test']} p = {worst['p_display']})"
    if doc["message"] and state["stopped"] in ("interrupted", "backend-failed"):
        why += f" ({doc['message']})"
    return f"{why}; tier {doc['tier']}, {doc['elapsed_seconds']:.1f} s; reproduce: {doc['reproduce']}"


def _run_battery(args: StatsOptions, nbytes, wanted: list, dieharder_tests) -> int:
    from ..progress import Progress
    from . import battery, peers
    from .streams import BackendSource, RawSource

    # a bar per stream on a terminal for the standard and deep tiers; plain lines otherwise
    bar = not args.quiet and args.tier != "smoke" and args.dask is None
    progress = None if args.quiet else Progress(True, 0, "bytes", terminal=None if bar else False)
    if args.input == "-":   # stdin is kept on disk while it is tested: room for it first
        from .streams import check_spool_room
        check_spool_room(nbytes or TIERS[args.tier], copies=2 if wanted else 1)
    source, seed = build_source(args)
    tee = None
    if wanted and args.input == "-":  # stdin is read once: keep a copy for the peers
        tee = tempfile.NamedTemporaryFile(prefix="rngcheck-stdin-", suffix=".bin", delete=False)
        source.tee = tee
    try:
        reproduce = _reproduce(args, seed)
        identity = {"reproduce": reproduce, "tier": args.tier, "bytes": nbytes or TIERS[args.tier]}
        with _executor(args, progress, identity) as executor:
            doc = battery.run(source, tier=args.tier, nbytes=nbytes, seed=seed, reproduce=reproduce,
                              workers=args.workers, interstream=not args.no_interstream, progress=progress,
                              executor=executor)
        if wanted:
            if tee is not None:
                tee.close()
                open_source = lambda: RawSource(tee.name)  # noqa: E731
            elif args.input:
                given: str = args.input
                open_source = lambda: RawSource(given)  # noqa: E731
            else:
                open_source = lambda: source.at(0)  # noqa: E731
            doc["peers"] = [peers.PEERS.get(peer).run(open_source, args.tier, dieharder_tests, progress)
                            for peer in wanted]
    finally:
        if progress is not None:
            progress.close()
        source.close()
        if isinstance(source, BackendSource):
            from ..backends.hosting import close
            close(source.backend)
        if tee is not None:
            tee.close()
            os.unlink(tee.name)
    _write(args, doc)
    if doc.get("interrupted"):
        print("rngcheck: interrupted; partial stats document " + ("written" if args.json else "shown"),
              file=sys.stderr)
        return 130
    return exit_code(doc)


def _json_default(value):
    import numpy as np
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def main(argv=None) -> int:
    """Standalone entry (until the CLI wires the subcommand): python -m rngcheck.stats.command."""
    parser = argparse.ArgumentParser(prog="rngcheck stats", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except RngcheckError as error:
        print(f"rngcheck stats: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
