"""The ``rngcheck`` command.

Exit codes (public): 0 every required case passed; 1 a required case failed, errored, crashed, timed
out or was not run; 2 usage or input error (one line, no traceback); 5 nothing ran (no selected case
applies to a backend: pytest's convention); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from types import ModuleType

from . import __version__
from .errors import BackendProcessFailed, BackendStopped, RngcheckError, one_line
from .results import verdicts
from .results.text import printable

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_NOTHING_RAN, EXIT_INTERRUPTED = 0, 1, 2, 5, 130
DEFAULT_BACKENDS = ("numpy", "opencl", "directml")  # opencl and directml only when available


def _load_one(spec: str, *, timeout: float, in_process: bool, max_restarts: int = 3):
    """The backend of ``spec``, in the process the hosting rule says (rngcheck.backends.hosting)."""
    from .backends.hosting import hosted

    return hosted(spec, timeout=timeout, in_process=in_process, max_restarts=max_restarts)


def _load_backends(specs: list[str] | None, *, timeout: float = 120.0, in_process: bool = False,
                   max_restarts: int = 3):
    from .conformance.runner import NamedBackend
    from .errors import BackendUnavailable

    if specs:
        loaded = []
        try:
            for spec in specs:
                loaded.append(NamedBackend(spec, _load_one(spec, timeout=timeout, in_process=in_process,
                                                           max_restarts=max_restarts)))
        except BaseException:
            _close(loaded)
            raise
        return loaded
    from .backends.hosting import REFERENCE

    chosen = [NamedBackend(REFERENCE, _load_one(REFERENCE, timeout=timeout, in_process=in_process))]
    for optional in DEFAULT_BACKENDS[1:]:
        try:
            chosen.append(NamedBackend(optional, _load_one(optional, timeout=timeout, in_process=in_process,
                                                           max_restarts=max_restarts)))
        except (BackendUnavailable, RngcheckError) as error:
            print(f"rngcheck: {optional} not used: {error}", file=sys.stderr)
    return chosen


def _close(backends) -> None:
    for named in backends:
        try:
            named.backend.close()
        except Exception:
            pass


def _in_a_finalizer(frame) -> bool:
    """Whether ``frame`` runs inside a weakref callback or a ``__del__``: Python ignores an exception
    raised there (it prints "Exception ignored in ..." and goes on), so an interrupt raised in one is lost."""
    while frame is not None:
        if frame.f_code.co_name == "__del__" or frame.f_code.co_filename.endswith("weakref.py"):
            return True
        frame = frame.f_back
    return False


_TERMINATED: list[int] = []   # the signals turned into an interrupt, in this process


def _terminate_as_interrupt(signum, frame):
    """SIGTERM (and its retry, SIGALRM) as KeyboardInterrupt. Landing in a finalizer, where the exception
    would be ignored, it is raised again 10 ms later (measured: a report drawing figures ran to its end,
    exit 0, when the signal landed in a WeakKeyDictionary's callback). Raised inside a library's own
    ``finally`` it may be replaced by whatever that clean-up raises in its half-done state (measured:
    matplotlib's savefig raised AttributeError from restore_bbox); ``main`` takes any exception after
    one as the interrupt it is."""
    import signal

    if _in_a_finalizer(frame):
        signal.signal(signal.SIGALRM, _terminate_as_interrupt)
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        return
    _TERMINATED.append(signum)
    raise KeyboardInterrupt


def run_stats(document: dict, backends, tier: str) -> None:
    """``--stats TIER``: the statistical battery on each backend's stream, into the result document."""
    from .results import document as D
    from .stats import command as stats_command

    document["stats"] = []
    try:
        for named in backends:
            document["stats"].append(stats_command.run_on_backend(named.backend, named.spec, tier=tier))
    except KeyboardInterrupt:
        document["complete"] = False
        document["interrupted"] = True
    D.finish(document)  # a stats FAIL fails the run


def _resume_settings(args, J):
    """Read the journal of ``--resume`` into ``args``; refuses a backend the journal chose that
    runs code unless the user names it again (``--backend``) or passes ``--trust-journal``, and so
    an output the journal names (``_journal_outputs``)."""
    previous, header = J.read(args.resume)
    if previous["complete"]:
        raise RngcheckError(f"{args.resume}: that run already finished")
    settings = J.run_settings(args.resume, header)
    repeated = list(args.backend or [])
    strangers = [spec for spec in repeated if spec not in settings["backends"]]
    if strangers:
        raise RngcheckError(f"--resume runs the journal's backends; --backend {strangers[0]} is not one of them "
                            f"({', '.join(settings['backends'])})")
    from .backends.registry import starts_no_code
    untrusted = [spec for spec in settings["backends"] if not starts_no_code(spec) and spec not in repeated]
    if untrusted and not args.trust_journal:
        raise RngcheckError(f"{args.resume}: the journal would start {untrusted[0]!r}, which names a program, "
                            f"module, file or library; repeat it as --backend {shlex.quote(untrusted[0])} "
                            f"or pass --trust-journal")
    args.profile, args.seed = settings["profile"], settings["seed"]
    args.case = settings["select"] or None
    args.keyword = settings["keyword"]
    args.backend = settings["backends"]
    args.timeout = settings["timeout"]
    args.stats = settings.get("stats")
    args.max_worker_restart = settings["max_worker_restart"]
    args.json = args.json or str(J.json_path_for(args.resume))
    _journal_outputs(args, settings["outputs"])
    print(f"rngcheck: resuming {args.resume} with {', '.join(settings['backends'])}", file=sys.stderr)
    return previous


def _journal_outputs(args, outputs: dict) -> None:
    """The outputs the journal's first command asked for (``outputs``: {option: file name in the
    journal's folder}), rewritten by the resumed run only when the user repeats the option (then
    the user's path is written, the journal's name is not looked at) or passes --trust-journal: a
    journal is data, and picks no file to overwrite on its own. Said before anything is written."""
    journal_dir = Path(args.resume).parent
    chosen = []
    for option, name in outputs.items():
        if getattr(args, option):
            continue
        target = journal_dir / name
        if target.resolve().parent != journal_dir.resolve():  # a symlink out of the journal's folder
            raise RngcheckError(f"{args.resume}: the journal's --{option} {printable(name)} leads out of the "
                                f"journal's folder (to {printable(str(target.resolve()))}); give --{option} "
                                f"yourself")
        if not args.trust_journal:
            raise RngcheckError(f"{args.resume}: the journal would write --{option} {printable(str(target))}; "
                                f"repeat it as --{option} {printable(shlex.quote(str(target)))} (or give another "
                                f"path) or pass --trust-journal")
        setattr(args, option, str(target))
        chosen.append(f"--{option} {printable(str(target))}")
    if chosen:  # the files a journal picked are said before anything is written
        print(f"rngcheck: the journal asks for {', '.join(chosen)} (give the option yourself to write elsewhere)",
              file=sys.stderr)


def _outputs_beside(journal_path, **outputs) -> dict:
    """The outputs a resume rewrites: those in the journal's directory, by file name."""
    if not journal_path:
        return {}
    home = Path(journal_path).resolve().parent
    return {option: Path(path).name for option, path in outputs.items()
            if path and Path(path).resolve().parent == home}


def _write_outputs(writers) -> str | None:
    """Run every writer; the first failure as one line (the others are still written)."""
    failure = None
    for writer in writers:
        try:
            writer()
        except RngcheckError as error:
            failure = failure or str(error)
    return failure


def _hypothesis_out_of_the_working_directory() -> None:
    """Hypothesis (the property cases) keeps files in ``.hypothesis/`` of the working directory; a
    command-line run keeps them in rngcheck's cache instead (HYPOTHESIS_STORAGE_DIRECTORY, unless set)."""
    import os

    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        from .native import cache_root
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(cache_root() / "hypothesis")


def _selection_words(args) -> str:
    """The selection a run was given, in words: ``--case P ... and -k 'E' in profile quick``."""
    chosen = [f"--case {shlex.quote(p)}" for p in args.case or []]
    chosen += [f"-k {shlex.quote(args.keyword)}"] * (args.keyword is not None)
    return (" and ".join(chosen) or "no selection") + f" in profile {args.profile}"


# What a --list run refuses: it runs nothing and writes nothing.
_NOT_WITH_LIST = ("resume", "json", "junit", "html", "journal", "baseline", "expected_failures", "stats")


def _list_cases(args, options) -> int:
    """``run --list``: the case ids the selection would run, one a line with its category, then the
    count; no backend is loaded. An empty selection is exit 5 (one line on stderr)."""
    from .conformance.runner import select_cases

    chosen = select_cases(options)
    if not chosen:
        print(f"rngcheck: no case matches {printable(_selection_words(args))}", file=sys.stderr)
        return EXIT_NOTHING_RAN
    width = max(len(case.id) for case in chosen)
    for case in chosen:
        print(f"{printable(case.id):<{width}}  {printable(case.category)}")
    print(f"{len(chosen)} case{'s' * (len(chosen) != 1)} (profile {args.profile})")
    return EXIT_PASS


def _run_options(args, previous: dict | None):
    from .conformance.runner import RunOptions

    return RunOptions(profile=args.profile, seed=args.seed, select=args.case or [], keyword=args.keyword,
                      maxfail=args.maxfail, progress=not args.quiet,
                      command=previous["command"] if previous is not None else sys.argv[1:],
                      deadline=args.deadline)


def cmd_run(args) -> int:
    if args.list:
        given = [name for name in _NOT_WITH_LIST if getattr(args, name)]
        if given:
            raise RngcheckError(f"--list runs nothing and writes nothing: drop --{given[0].replace('_', '-')}")
        return _list_cases(args, _run_options(args, None))
    _hypothesis_out_of_the_working_directory()
    from .conformance.runner import select_cases
    from .outputs import check_outputs, lock_outputs
    from .results import journal as J

    previous = _resume_settings(args, J) if args.resume else None
    options = _run_options(args, previous)
    if not select_cases(options):   # nothing to run: pytest's "no tests ran", said in one line
        print(f"rngcheck: nothing ran: no case matches {printable(_selection_words(args))}", file=sys.stderr)
        return EXIT_NOTHING_RAN
    journal_path = _journal_of(args, J)
    check_outputs({"--json": args.json, "--junit": args.junit, "--html": args.html,
                   "--journal": None if args.resume else journal_path},
                  {"--resume": args.resume, "--baseline": args.baseline,
                   "--expected-failures": args.expected_failures})
    if args.expected_failures:
        from .results.baseline import read_expected
        read_expected(args.expected_failures)  # a bad file is refused before the run
    if args.baseline:
        from .results.sources import read as read_source
        read_source(args.baseline)
    from .philox import KERNELS
    KERNELS.active()   # the reference's compiled stream, built now: RNGCHECK_KERNELS=c without it is one line here
    with lock_outputs({"--json": args.json, "--junit": args.junit, "--html": args.html}):
        return _run_locked(args, options, previous, journal_path)


def _journal_of(args, J):
    """The run's journal: --resume's, --journal, or NAME.journal.jsonl beside --json NAME.json. A
    --json that is a device or a pipe (/dev/null, a FIFO) gets none beside it (one line says so),
    and a --journal must be a file (it is truncated, appended to and read back by --resume)."""
    from .outputs import regular_or_new

    if args.resume:
        return args.resume
    if args.journal:
        if not regular_or_new(args.journal):
            raise RngcheckError(f"--journal {printable(args.journal)}: not a regular file (a device or a pipe); a "
                                "journal is a file that --resume reads back: give one")
        return args.journal
    if not args.json:
        return None
    if not regular_or_new(args.json):
        print(f"rngcheck: --json {printable(args.json)} is not a regular file: no journal is kept beside it "
              "(give --journal FILE to keep one)", file=sys.stderr)
        return None
    return J.journal_path_for(args.json)


class _Deferred:
    """SIGINT and SIGTERM held back while a run closes its backends and writes its outputs: a second
    Ctrl-C does not cost the partial document (one line says so; the run then ends as interrupted)."""

    def __init__(self) -> None:
        import signal

        self.received = False
        self.previous = {number: signal.signal(number, self._hold) for number in (signal.SIGINT, signal.SIGTERM)}

    def _hold(self, signum, frame) -> None:
        if not self.received:
            print("rngcheck: interrupt received; the results are written first", file=sys.stderr)
        self.received = True

    def restore(self) -> None:
        import signal

        for number, handler in self.previous.items():
            signal.signal(number, handler)


def _run_locked(args, options, previous, journal_path) -> int:
    import signal

    from .conformance.runner import new_document, run, select_cases
    from .results import journal as J

    journal = J.Journal(journal_path, append=bool(args.resume)) if journal_path else None  # locked before loading
    backends = []
    document = None
    previous_handler = signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        backends = _load_backends(args.backend, timeout=args.timeout, in_process=args.in_process,
                                  max_restarts=args.max_worker_restart)
        if journal and not args.resume:
            # the journal's header and the document are one (the same run read from either is one run)
            previous = new_document(options, select_cases(options))
            journal.start(previous, {"profile": args.profile, "seed": args.seed, "select": args.case or [],
                                     "keyword": args.keyword,
                                     "backends": [b.spec for b in backends], "timeout": args.timeout,
                                     "stats": args.stats, "max_worker_restart": args.max_worker_restart,
                                     "outputs": _outputs_beside(journal_path, junit=args.junit, html=args.html)})
        document = run(backends, options, journal=journal, previous=previous)
        if args.stats and not document.get("interrupted") and not document.get("maxfail_reached"):
            run_stats(document, backends, args.stats)
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
        # from here on the document exists: an interrupt waits until it is written
        deferred = _Deferred() if document is not None else None
        _close(backends)
        if journal:
            journal.close()
    assert document is not None and deferred is not None   # (else the run raised)
    try:
        return _write_run(args, document, journal_path, deferred)
    finally:
        deferred.restore()


def _write_run(args, document, journal_path, deferred) -> int:
    from .reports import junit, terminal
    from .results import document as D

    def write_html():
        from .reports import html
        html.write([document], args.html)

    failure = _write_outputs([lambda: D.write(document, args.json)] * bool(args.json)
                             + [lambda: junit.write(document, args.junit)] * bool(args.junit)
                             + [write_html] * bool(args.html))
    if not args.quiet:
        print(terminal.summary(document))
        for stats in document.get("stats", []):
            counts = ", ".join(f"{n} {k.lower()}" for k, n in stats["counts"].items())
            print(f"stats: {stats['verdict']} ({counts}), tier {stats['tier']}; reproduce: {stats['reproduce']}")
    if failure:
        print(f"rngcheck: error: {failure}", file=sys.stderr)
        return EXIT_USAGE
    if document.get("interrupted") or deferred.received:
        resume = journal_path and not document["complete"]
        print("rngcheck: interrupted; partial results written"
              + (f", resume with: {_resume_command(args, journal_path)}" if resume else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    if document.get("deadline_passed"):
        print(f"rngcheck: the --deadline of {args.deadline:g} s passed; the cases left are not-run", file=sys.stderr)
    if document.get("maxfail_reached"):
        print(f"rngcheck: --maxfail {document['maxfail_reached']} reached; the cases left are not-run"
              + ", and the statistics were not run" * bool(args.stats), file=sys.stderr)
    if args.baseline or args.expected_failures:
        return _gate(document, args)
    return verdict_exit(document)


def _resume_command(args, journal_path) -> str:
    """The command that finishes an interrupted run: its journal, with the outputs it was writing
    given again (a resume writes the outputs a journal names only when told to: _resume_settings)."""
    from .results import journal as J

    words = ["rngcheck", "run", "--resume", str(journal_path)]
    if args.json and Path(args.json) != J.json_path_for(journal_path):
        words += ["--json", args.json]
    words += [part for option in ("junit", "html") if getattr(args, option)
              for part in (f"--{option}", getattr(args, option))]
    return printable(shlex.join(words))


def verdict_exit(document: dict) -> int:
    """The exit code of a finished run's verdict (rngcheck.results.verdicts, decided once in the document):
    0 pass, 5 nothing ran (said on stderr too, so that --quiet says it), 1 otherwise."""
    verdict = document["summary"]["verdict"]
    if verdict == verdicts.PASS:
        return EXIT_PASS
    if verdict == verdicts.NOTHING_RAN:
        from .reports.terminal import not_applicable_line

        idle = [b["name"] for b in document["backends"] if b.get("verdict") == verdicts.NOTHING_RAN]
        results = [r for r in document["results"] if r["backend"] in idle]
        layers = {str(c.get("id")): str(c.get("layer") or "") for c in document["cases"] if isinstance(c, dict)}
        absent = not_applicable_line(results, layers)
        example = f"; e.g. {printable(results[0]['message'])[:120]}" if results else ""
        print(f"rngcheck: nothing ran on {', '.join(map(printable, idle)) or 'any backend'}: no selected case "
              f"applies ({absent or 'no case selected'}{example}); exit {EXIT_NOTHING_RAN}", file=sys.stderr)
        return EXIT_NOTHING_RAN
    return EXIT_FAIL


def _gate(document: dict, args) -> int:
    """``run --baseline DOC`` / ``--expected-failures FILE``: the exit code says whether anything new broke."""
    from .reports import compare

    if args.baseline:
        from .conformance.runner import expected_case_ids
        comparison = compare.load(args.baseline, [document], args.expected_failures, same_run_check=False,
                                  expected_cases=expected_case_ids)
        print(compare.text(comparison, quiet=args.quiet))
        if comparison.regressions:
            return EXIT_FAIL
        return verdict_exit(document) if document["summary"]["verdict"] == verdicts.NOTHING_RAN else EXIT_PASS
    from .results.baseline import gate, read_expected
    from .results.tables import table
    from .results.text import printable

    failures, passes = gate(table([document]), read_expected(args.expected_failures))
    for change in failures[:compare.SHOWN]:
        print(f"unexpected failure: {printable(change.backend)}: {change.case} [{change.diagnosis or change.after}]")
    for change in passes[:compare.SHOWN]:
        print(f"unexpected pass: {printable(change.backend)}: {change.case} (expected to fail: "
              f"{printable(change.reason)})")
    print(f"rngcheck: {len(failures)} unexpected failures, {len(passes)} unexpected passes "
          f"(expected failures: {args.expected_failures})")
    return EXIT_FAIL if failures else EXIT_PASS


def cmd_report(args) -> int:
    """``rngcheck report``: the page and summary (rngcheck.reports.command), each run checked against the
    cases its profile and selection give."""
    from .conformance.runner import expected_case_ids
    from .reports import command

    return command.run(args, expected_cases=expected_case_ids)


def cmd_compare(args) -> int:
    """``rngcheck compare``: the comparison (rngcheck.reports.compare), each document checked against
    the cases its profile and selection give (the command layer knows the cases; reports do not)."""
    from .conformance.runner import expected_case_ids
    from .reports import compare

    return compare.run(args, expected_cases=expected_case_ids)


def cmd_export(args) -> int:
    """``rngcheck export DOCS... --csv F | --parquet F``: the results table (rngcheck.results.tables)."""
    from .outputs import claim_outputs, input_paths
    from .results import tables as T

    with claim_outputs({"--parquet": args.parquet, "--csv": args.csv}, input_paths(args.documents)):
        data = T.table(args.documents)
        if args.parquet:
            T.write_parquet(data, args.parquet)
        else:
            T.write_csv(data, args.csv)
    if not args.quiet:
        print(f"rngcheck export: {len(data)} results of {data['run'].nunique()} runs written to "
              f"{args.parquet or args.csv}")
    return EXIT_PASS


def cmd_backends(args) -> int:
    from .backends import known_backends
    from .results.text import printable

    def said(k) -> None:   # printed as it is probed
        status = ("available" + (f": {k.reason}" if k.reason else "")) if k.available else f"unavailable: {k.reason}"
        print(f"{printable(k.name):<12} {printable(status)}", flush=True)
        if k.implements:
            print(f"{'':<12} implements {printable('; '.join(k.implements))}", flush=True)
        if args.verbose or args.specs:
            for key, value in k.describe.items():
                print(f"    {printable(key) + ':':<24} {printable(value)}", flush=True)

    known = known_backends(args.specs, on_probe=None if args.json else said)
    if args.json:
        print(json.dumps([k.__dict__ for k in known], indent=1))
    return EXIT_PASS


def cmd_vectors(args) -> int:
    from . import vectors

    if args.action == "list":
        for kat in vectors.kat_vectors():
            print(f"random123  {kat.line}")
        for v in vectors.operator_vectors():
            expected = "words" if v.expected_words is not None else "sha256"
            print(f"operator   {v.id:<24} sizes {list(v.sizes)} strides {v.strides} ({expected}) {v.description}")
            if v.note:
                print(f"           note: {v.note}")
        return EXIT_PASS
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name in vectors.FILES:
            target = out / name
            target.write_text(vectors.data_path(name).read_text(encoding="utf-8"), encoding="utf-8")
            print(f"wrote {target}")
    except OSError as error:
        raise RngcheckError(f"cannot export to {out}: {error.strerror or error}") from None
    return EXIT_PASS


def cmd_repro(args) -> int:
    """Run one call of one axis on a backend and print the verdict: the reproduction of a failure
    (rngcheck.conformance.repro asks the axis whose options are given)."""
    from .conformance import repro
    from .outputs import claim_outputs
    from .reports import terminal
    from .results.document import write

    axis = repro.axis_for(args)
    assert axis.repro is not None
    case = axis.repro.case(args)
    with claim_outputs({"--json": args.json}):
        backends = _load_backends([args.backend], timeout=args.timeout)
        try:  # the runner on a one-case selection: the same verdict, document and hosting as rngcheck run
            document, looked = repro.run_one(backends, case, axis, sys.argv[1:])
        finally:
            _close(backends)
        document["reproduce"] = shlex.join(["rngcheck"] + sys.argv[1:])
        for line in axis.repro.show(case, looked):
            print(line)
        print(terminal.summary(document))
        if args.json:
            if axis.repro.write is not None:
                axis.repro.write(args.json, document, case, looked)
            else:
                write(document, args.json)
    return verdict_exit(document)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


class Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (the usage is one --help away)."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; ``only``: the command that will run, whose options alone are added for
    run, backends and repro (theirs import the conformance suite and the backends' hosting, about
    0.3 s that ``rngcheck stats`` does not need); None: every command's."""
    parser = Parser(prog="rngcheck", description="Conformance and statistical tests for random-number-generator "
                                     "implementations: DirectML's DML_RANDOM_GENERATOR (Philox 4x32-10) first.")
    parser.add_argument("--version", action="version", version=f"rngcheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the conformance suite on one or more backends")
    if only in (None, "run"):
        _run_arguments(run)
    backends = sub.add_parser("backends", help="list the registered backends, available or not, with what "
                                               "each says of itself")
    if only in (None, "backends"):
        _backends_arguments(backends)
    vectors = sub.add_parser("vectors", help="list or export the known-answer vectors")
    vectors.add_argument("action", choices=["list", "export"])
    vectors.add_argument("--out", default="rngcheck-vectors", help="directory for export")
    vectors.set_defaults(handler=cmd_vectors)
    repro = sub.add_parser("repro", help="run one call on a backend (a failure's reproduction): DirectML's "
                                         "words, a numbers request (--kind) or an rng_bit_generator call "
                                         "(--algorithm)")
    if only in (None, "repro"):
        _repro_arguments(repro)
    _documents_arguments(sub)
    _submission_arguments(sub)
    _stats_arguments(sub)
    return parser


def _run_arguments(run: argparse.ArgumentParser) -> None:
    from .backends.hosting import seconds_argument as _seconds

    run.add_argument("--backend", action="append", metavar="NAME",
                     help="registered name[:options], exec:COMMAND (a program in any language speaking the exec "
                          "protocol), module:attr or file.py:attr (repeatable; default: numpy, and opencl and "
                          "directml when available)")
    run.add_argument("--profile", choices=["quick", "full", "strict", "huge"], default="quick")
    run.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    run.add_argument("--case", action="append", metavar="PATTERN",
                     help="only these cases: a glob on case ids when PATTERN has * ? or [; else a category or "
                          "case id, or a part of ids (--case dml-example); repeatable: any of them")
    run.add_argument("-k", dest="keyword", metavar="EXPRESSION",
                     help="only cases whose id or category contains the words of the expression, as pytest's -k: "
                          "'counter and not dml', '(mapping or layout) and rank' (case-insensitive; with --case, "
                          "both must hold)")
    run.add_argument("-x", dest="maxfail", action="store_const", const=1,
                     help="stop at the first failure: the cases left are not-run (as --maxfail 1)")
    run.add_argument("--maxfail", type=_positive, metavar="N",
                     help="stop after N failures, counted over every backend: the cases left are not-run (exit 1)")
    run.add_argument("--list", action="store_true",
                     help="print the ids (and categories) of the cases the selection would run, and a count; "
                          "run nothing and load no backend (exit 5 when none matches)")
    run.add_argument("--json", metavar="FILE", help="write the result document")
    run.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    run.add_argument("--html", metavar="FILE", help="write the HTML report")
    run.add_argument("--journal", metavar="FILE", help="results journal, JSON Lines written case by case "
                     "(default: beside --json, as NAME.journal.jsonl)")
    run.add_argument("--resume", metavar="JOURNAL", help="finish the cases an interrupted run did not")
    run.add_argument("--timeout", type=_seconds, default=120.0, metavar="SECONDS",
                     help="time limit of one backend call; a hung backend is ended (default 120)")
    run.add_argument("--max-worker-restart", type=_positive, default=3, metavar="N",
                     help="give a backend up after N of its calls hang in all (each costs a --timeout), or "
                          "N fresh workers in a row fail to start; its remaining cases are not-run (default 3)")
    run.add_argument("--deadline", type=_seconds, metavar="SECONDS",
                     help="time for the whole run; the cases left then are not-run (journal complete, exit 1)")
    run.add_argument("--trust-journal", action="store_true",
                     help="with --resume: start the journal's backends even those that run a command or code, "
                          "and write the --junit and --html files the journal names")
    run.add_argument("--in-process", action="store_true",
                     help="run Python backends in rngcheck's own process (no crash or hang isolation)")
    run.add_argument("--stats", choices=["smoke", "standard", "deep"], metavar="TIER",
                     help="also run the statistical battery (smoke, standard or deep) on each backend's stream")
    run.add_argument("--baseline", metavar="DOC", help="compare with this result document or journal at the "
                     "end (as rngcheck compare): exit 1 only on regressions")
    run.add_argument("--expected-failures", metavar="FILE", help="known failures, one 'PATTERN  # reason' a line: "
                     "they do not fail the run; unexpected passes are reported")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    run.set_defaults(handler=cmd_run)


def _backends_arguments(backends: argparse.ArgumentParser) -> None:
    backends.add_argument("specs", nargs="*", metavar="SPEC",
                          help="probe these backends (options included, e.g. directml:lib=0.2.0) "
                               "and show their describe(); default: every registered backend")
    backends.add_argument("-v", "--verbose", action="store_true", help="show every backend's describe()")
    backends.add_argument("--json", action="store_true")
    backends.set_defaults(handler=cmd_backends)


def _repro_arguments(repro: argparse.ArgumentParser) -> None:
    """The shared options, then each axis's own (rngcheck.conformance.repro)."""
    from .backends.hosting import seconds_argument as _seconds
    from .conformance.repro import add_arguments

    repro.add_argument("--backend", required=True)
    repro.add_argument("--state", help="the state's words, e.g. 0x0,0x0,0x0,0x0,0x1,0x2 (required but where the "
                                       "axis's call names its own states: --property)")
    repro.add_argument("--sizes", help="e.g. 2,3,4 (the words' sizes, or the rng_bit_generator output's shape)")
    repro.add_argument("--dtype", help="the numbers' dtype (default float32) or the rng_bit_generator elements' "
                                       "(default uint32)")
    repro.add_argument("--timeout", type=_seconds, default=120.0, metavar="SECONDS",
                       help="time limit of one backend call; a hung backend is ended (default 120)")
    repro.add_argument("--json", metavar="FILE", help="write the result: DirectML's words as expected and actual "
                       "words and output state, the differing indices and the verdict (bounded for large tensors)")
    add_arguments(repro)
    repro.set_defaults(handler=cmd_repro)


def _documents_arguments(sub) -> None:
    """The commands that read result documents: report, compare, export."""
    from .reports import command as report_command
    from .reports import compare as compare_command

    report = sub.add_parser("report", help="one self-contained HTML comparison (and a markdown summary) from "
                                           "result documents, stats documents and journals")
    report_command.add_arguments(report)
    report.set_defaults(handler=cmd_report)
    compare = sub.add_parser("compare", help="a baseline against new runs: regressions, new passes, changed "
                                             "outputs, added and removed cases (exit 1 on a regression)")
    compare_command.add_arguments(compare)
    compare.set_defaults(handler=cmd_compare)
    export = sub.add_parser("export", help="the results table of documents or journals as CSV or Parquet")
    export.add_argument("documents", nargs="+", metavar="DOCUMENT", help="result documents or journals")
    where = export.add_mutually_exclusive_group(required=True)
    where.add_argument("--csv", metavar="FILE")
    where.add_argument("--parquet", metavar="FILE", help="needs pyarrow (pip install 'rngcheck[parquet]')")
    export.add_argument("--quiet", action="store_true")
    export.set_defaults(handler=cmd_export)


def _submission_arguments(sub) -> None:
    from .submission import command as submission_command

    submission = sub.add_parser("submission", help="a vendor's conformance submission: must-pass lists, packages "
                                                   "(create, verify, sign), the scoreboard")
    submission_command.add_arguments(submission)


def _stats_arguments(sub) -> None:
    """stats and nist, when the statistics package can be had."""
    stats_command: ModuleType | None
    try:
        from .stats import command as stats_command
    except ImportError:
        stats_command = None
    if stats_command is None:
        return
    stats = sub.add_parser("stats", help="statistical batteries on a backend's stream or a raw stream")
    stats_command.add_arguments(stats)
    stats.set_defaults(handler=stats_command.run)
    from .stats import nist_options
    nist = sub.add_parser("nist", help="NIST SP 800-22 rev1a as sts-2.1.2 runs it, on a bit file or a backend")
    nist_options.add_arguments(nist)
    nist.set_defaults(handler=cmd_nist)


def cmd_nist(args) -> int:
    from .stats import nist_sts
    return nist_sts.command(args)


def _on_sigterm():
    """SIGTERM is an interrupt from the first moment (a backend still shaking hands included):
    the partial results are written, one line says so, exit 130. Returns the handler it replaced."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _terminate_as_interrupt)


def main(argv=None) -> int:
    import signal

    previous = _on_sigterm()
    try:
        return _main(argv)
    except KeyboardInterrupt:  # between the handlers' own catches (parsing, imports)
        print("rngcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:
        if not _TERMINATED:
            raise
        print("rngcheck: interrupted", file=sys.stderr)   # what a clean-up raised in the interrupt's place
        return EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def entry() -> None:
    """The ``rngcheck`` console script and ``python -m rngcheck``: main(), then the end of the process.

    Python's own ending frees every module and object one by one: about 0.12 s of every command
    once numpy and SciPy are loaded (measured: docs/statistics.md, Speed), and nothing of
    rngcheck's is done there (every file, pool and backend is closed by its command). So the
    handlers registered with ``atexit`` run and the standard streams are flushed, as Python's
    ending does, and the process ends with main()'s code. Where a thread that is not a daemon
    still runs (Python's ending waits for it), or a stream cannot be flushed (Python's ending
    then says so), Python ends the process itself."""
    import atexit
    import os
    import threading

    _one_blas_thread()
    code = main()
    if not isinstance(code, int) or any(thread is not threading.main_thread() and not thread.daemon
                                        for thread in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):   # a reader gone (a broken pipe) or a stream closed
        sys.exit(code)
    os._exit(code)


class _OneBlasThread:
    """A finder (``sys.meta_path``) that imports numpy, and scipy.special's compiled ufuncs, with
    ``OPENBLAS_NUM_THREADS=1`` in the environment, then removes the variable again (entry()
    installs it; nothing else does).

    Each loads an OpenBLAS: numpy its own, scipy.special's ``_ufuncs`` scipy's own copy (pip's
    wheels link each its own). OpenBLAS starts a thread per core when it loads, which spins for a
    while before it sleeps, and numpy's shuts them down before every fork (the battery's pool): in a
    command that never multiplies large float matrices they only cost CPU. Measured on this
    project's 2-core machine: numpy's import 0.34 s of CPU, 0.22 s with one thread; loading the
    ufuncs 0.13-0.15 s, 0.04-0.05 s with one (docs/statistics.md, Speed). The variable is read once,
    when a library loads, so it is set only while one of these modules is loaded: processes rngcheck
    starts (backends, peers, the compiler) never see it (a backend that runs in rngcheck's own
    process shares the one-threaded libraries), and a user's own setting (the variable already set)
    is left as it is, as is a module imported before. The ufuncs load in a thread beside the
    battery's reading with two processes (stats.special.import_beside): the main thread then waits
    for its workers, forked before, merges their pieces and settles p-values, and starts nothing."""

    name = "OPENBLAS_NUM_THREADS"
    MODULES = ("numpy", "scipy.special._ufuncs")

    def __init__(self):
        self.waiting = {module for module in self.MODULES if module not in sys.modules}

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.waiting:
            return None
        self.waiting.discard(fullname)   # once each: then found by the other finders, as without this one
        if not self.waiting and self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in [finder for finder in sys.meta_path if finder is not self]:
            spec = finder.find_spec(fullname, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _SettingLoader(spec.loader, self.name, "1")
        return spec


class _SettingLoader:
    """``loader``, with an environment variable set while it creates (an extension module: its
    library loads then) and executes its module."""

    def __init__(self, loader, name: str, value: str):
        self._loader, self._name, self._value = loader, name, value

    def __getattr__(self, attribute):   # everything else is the loader's (resources, get_code, ...)
        loader = self.__dict__.get("_loader")
        if loader is None or attribute.startswith("__"):  # a copy being made, or a protocol name
            raise AttributeError(attribute)
        return getattr(loader, attribute)

    def create_module(self, spec):
        return self._setting(self._loader.create_module, spec)

    def exec_module(self, module):
        self._setting(self._loader.exec_module, module)

    def _setting(self, step, argument):
        import os

        os.environ[self._name] = self._value
        try:
            return step(argument)
        finally:
            os.environ.pop(self._name, None)


def _one_blas_thread() -> None:
    """Install _OneBlasThread, unless its modules are imported already or the user set the variable."""
    import os

    if _OneBlasThread.name not in os.environ:
        finder = _OneBlasThread()
        if finder.waiting:
            sys.meta_path.insert(0, finder)


def _command_of(argv) -> str | None:
    """The command a command line names first (None: an option first, or nothing)."""
    words = sys.argv[1:] if argv is None else list(argv)
    return words[0] if words and not str(words[0]).startswith("-") else None


def _main(argv=None) -> int:
    parser = build_parser(only=_command_of(argv))
    args = parser.parse_args(argv)
    for name, value in vars(args).items():  # no file name or value holds NUL (only in-process callers can)
        if any("\0" in v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)):
            print(f"rngcheck: error: --{name.replace('_', '-')}: contains a NUL character", file=sys.stderr)
            return EXIT_USAGE
    try:
        return args.handler(args)
    except RngcheckError as error:
        print(f"rngcheck: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (BackendProcessFailed, BackendStopped) as error:
        # a backend that crashed, hung or broke the protocol outside a conformance case (stats,
        # nist): the command's verdict is a failure of the backend, said in one line
        said = error.last_stderr_line() if isinstance(error, BackendProcessFailed) else ""
        print(f"rngcheck: error: the backend failed: {one_line(error)}"
              + (f" (its stderr ends: {' '.join(said.split())[:200]})" if said else ""), file=sys.stderr)
        return EXIT_FAIL
    except OSError as error:  # an output file or directory that cannot be written
        where = f" {error.filename}" if error.filename else ""
        print(f"rngcheck: error: cannot write{where}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("rngcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    entry()
