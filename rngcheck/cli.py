"""The ``rngcheck`` command.

Exit codes (public): 0 every required case passed; 1 a required case failed or errored
(or nothing passed); 2 usage or input error (one line, no traceback); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from . import __version__
from .errors import RngcheckError

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
DEFAULT_BACKENDS = ("numpy", "opencl")  # opencl only when a platform exists


def _words(text: str, count: int | None, what: str) -> list[int]:
    try:
        values = [int(v, 0) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise RngcheckError(f"{what}: {text!r} is not a comma-separated list of integers") from None
    if count is not None and len(values) != count:
        raise RngcheckError(f"{what}: expected {count} values, got {len(values)}")
    return values


def _load_backends(specs: list[str] | None):
    from .backends import load
    from .conformance.runner import NamedBackend
    from .errors import BackendUnavailable

    if specs:
        return [NamedBackend(spec, load(spec)) for spec in specs]
    chosen = [NamedBackend("numpy", load("numpy"))]
    try:
        chosen.append(NamedBackend("opencl", load("opencl")))
    except (BackendUnavailable, RngcheckError) as error:
        print(f"rngcheck: opencl not used: {error}", file=sys.stderr)
    return chosen


def cmd_run(args) -> int:
    from .conformance.runner import RunOptions, run
    from .reports import document as D
    from .reports import junit, terminal

    backends = _load_backends(args.backend)
    options = RunOptions(profile=args.profile, seed=args.seed, select=args.case or [],
                         progress=not args.quiet, command=sys.argv[1:] if args.record_argv else [])
    from .conformance.runner import select_cases
    if not select_cases(options):
        raise RngcheckError(f"no case matches {args.case} in profile {args.profile}")
    try:
        document = run(backends, options)
    finally:
        for named in backends:
            try:
                named.backend.close()
            except Exception:
                pass
    if args.json:
        D.write(document, args.json)
    if args.junit:
        junit.write(document, args.junit)
    if args.html:
        from .reports import html
        html.write([document], args.html)
    if not args.quiet:
        print(terminal.summary(document))
    if document.get("interrupted"):
        return EXIT_INTERRUPTED
    return EXIT_PASS if document["summary"]["verdict"] == "pass" else EXIT_FAIL


def cmd_backends(args) -> int:
    from .backends import known_backends

    known = known_backends()
    for k in known:
        status = "available" if k.available else f"unavailable: {k.reason}"
        print(f"{k.name:<12} {status}")
    if args.json:
        print(json.dumps([k.__dict__ for k in known], indent=1))
    return EXIT_PASS


def cmd_vectors(args) -> int:
    from . import vectors

    if args.action == "list":
        for v in vectors.kat_vectors():
            print(f"random123  {v.line}")
        for v in vectors.operator_vectors():
            expected = "words" if v.expected_words is not None else "sha256"
            print(f"operator   {v.id:<24} sizes {list(v.sizes)} strides {v.strides} ({expected}) {v.description}")
            if v.note:
                print(f"           note: {v.note}")
        return EXIT_PASS
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in vectors.FILES:
        target = out / name
        target.write_text(vectors.data_path(name).read_text(encoding="utf-8"), encoding="utf-8")
        print(f"wrote {target}")
    return EXIT_PASS


def cmd_repro(args) -> int:
    """Run one description on a backend and print the verdict: the reproduction of a failure."""
    from .conformance import cases as C
    from .conformance import check
    from .conformance.runner import safe_describe
    from .reports import document as D
    from .reports import terminal

    try:
        level = tuple(int(p) for p in args.feature_level.split("."))
        assert len(level) == 2
    except (ValueError, AssertionError):
        raise RngcheckError(f"--feature-level {args.feature_level!r} is not like 4.0") from None
    strides = tuple(_words(args.strides, None, "--strides")) if args.strides else None
    case = C.Case(id="repro/command-line", category="repro", description="from the command line",
                  rule=C.RULE_MAPPING, source=C.DML_PAGE, state=tuple(_words(args.state, 6, "--state")),
                  sizes=tuple(_words(args.sizes, None, "--sizes")), strides=strides, feature_level=level)
    from .description import Description, validate
    from .errors import Rejected

    try:
        validate(Description(state_sizes=case.shape_of_state(), output_sizes=case.sizes,
                             output_strides=strides, output_state_sizes=case.shape_of_state(),
                             buffer_elements=1 << 62, feature_level=level))
    except Rejected as error:
        raise RngcheckError(f"impossible description: {error}") from None
    backends = _load_backends([args.backend])
    document = D.new_document("repro", 0, sys.argv[1:], [case])
    for named in backends:
        entry = {"name": named.backend.name, "spec": named.spec,
                 "validates": bool(getattr(named.backend, "validates", False)),
                 "describe": safe_describe(named.backend)}
        document["backends"].append(entry)
        outcome = check.run_case(named.backend, case)
        document["results"].append(D.result_entry(entry["name"], case, outcome, True, 0.0, named.spec))
    D.finish(document)
    document["reproduce"] = shlex.join(["rngcheck"] + sys.argv[1:])
    print(terminal.summary(document))
    return EXIT_PASS if document["summary"]["verdict"] == "pass" else EXIT_FAIL


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rngcheck", description="Conformance and statistical tests for "
                                     "DirectML's DML_RANDOM_GENERATOR (Philox 4x32-10) implementations.")
    parser.add_argument("--version", action="version", version=f"rngcheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the conformance suite on one or more backends")
    run.add_argument("--backend", action="append", metavar="NAME",
                     help="registered name[:options], module:attr or file.py:attr (repeatable; "
                          "default: numpy, and opencl when a platform exists)")
    run.add_argument("--profile", choices=["quick", "full", "strict"], default="quick")
    run.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    run.add_argument("--case", action="append", metavar="PATTERN", help="only cases whose id or category matches")
    run.add_argument("--json", metavar="FILE", help="write the result document")
    run.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    run.add_argument("--html", metavar="FILE", help="write the HTML report")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    run.set_defaults(handler=cmd_run, record_argv=True)

    backends = sub.add_parser("backends", help="list the registered backends, available or not")
    backends.add_argument("--json", action="store_true")
    backends.set_defaults(handler=cmd_backends)

    vectors = sub.add_parser("vectors", help="list or export the known-answer vectors")
    vectors.add_argument("action", choices=["list", "export"])
    vectors.add_argument("--out", default="rngcheck-vectors", help="directory for export")
    vectors.set_defaults(handler=cmd_vectors)

    repro = sub.add_parser("repro", help="run one description on a backend (a failure's reproduction)")
    repro.add_argument("--backend", required=True)
    repro.add_argument("--state", required=True, help="six words, e.g. 0x0,0x0,0x0,0x0,0x1,0x2")
    repro.add_argument("--sizes", required=True, help="e.g. 2,3,4")
    repro.add_argument("--strides", help="e.g. 12,4,1 (default: packed)")
    repro.add_argument("--feature-level", default="4.0")
    repro.set_defaults(handler=cmd_repro)

    try:
        from .stats import command as stats_command
    except ImportError:
        stats_command = None
    if stats_command is not None:
        stats = sub.add_parser("stats", help="statistical batteries on a backend's stream or a raw stream")
        stats_command.add_arguments(stats)
        stats.set_defaults(handler=stats_command.run)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except RngcheckError as error:
        print(f"rngcheck: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("rngcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
