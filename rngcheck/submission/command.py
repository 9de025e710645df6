"""``rngcheck submission``: keygen, create, verify, lists, scoreboard (docs/submission.md, the vendor's guide).

Exit codes as elsewhere: 0 done (create: every claim met; verify: the package verified and every
claim met), 1 a claim not met, or a package refused (each refusal one line), 2 bad input (a file that
cannot be read, a malformed waiver, an expired or stale one, an unfinished run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_FAIL = 0, 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="submission_command", required=True)
    keygen = sub.add_parser("keygen", help="a new Ed25519 key pair for signing packages")
    keygen.add_argument("--private", type=Path, required=True, metavar="FILE",
                        help="the private key (PEM; kept secret)")
    keygen.add_argument("--public", type=Path, required=True, metavar="FILE", help="the public key (PEM; published)")
    keygen.set_defaults(handler=cmd_keygen)

    create = sub.add_parser("create", help="a submission package from result documents")
    create.add_argument("documents", nargs="+", type=Path, metavar="DOCUMENT", help="result documents or journals")
    create.add_argument("--out", type=Path, required=True, metavar="PKG", help="the package's folder (must not exist)")
    create.add_argument("--product", required=True, help="the product the claim is for")
    create.add_argument("--vendor", required=True, help="who makes the claim")
    create.add_argument("--contact", default="", help="whom to ask about it")
    create.add_argument("--list", dest="lists", action="append", metavar="NAME",
                        help="claim this must-pass list for every backend (repeatable; default: every list "
                             "each backend ran a case of)")
    create.add_argument("--waivers", type=Path, metavar="FILE", help="the waivers (JSON; docs/submission.md)")
    create.add_argument("--log", type=Path, metavar="FILE", help="the run's console output, kept as console.log")
    create.add_argument("--sign", type=Path, metavar="KEY", help="sign the manifest with this Ed25519 private key")
    create.add_argument("--allow-unmet", action="store_true", help="exit 0 when a claim is not met (the package "
                                                                   "says so)")
    create.set_defaults(handler=cmd_create)

    verify = sub.add_parser("verify", help="check a submission package: layout, manifest, signature, schemas, "
                                           "verdicts, lists, waivers, claims, identity, a re-run sample")
    verify.add_argument("packages", nargs="+", type=Path, metavar="PKG")
    verify.add_argument("--key", type=Path, metavar="PUBLIC", help="require a signature by this public key")
    verify.add_argument("--rerun", type=int, default=8, metavar="N",
                        help="re-run N sampled cases of each backend available here (default 8; 0: none)")
    verify.add_argument("--allow-unmet", action="store_true",
                        help="exit 0 for a verified package whose claims are not all met")
    verify.set_defaults(handler=cmd_verify)

    lists = sub.add_parser("lists", help="the published must-pass lists")
    lists.add_argument("name", nargs="?", help="print this list")
    lists.add_argument("--version", dest="list_version", help="of this version (default: the newest)")
    lists.set_defaults(handler=cmd_lists)

    board = sub.add_parser("scoreboard", help="one static page from many packages")
    board.add_argument("packages", nargs="+", type=Path, metavar="PKG")
    board.add_argument("--out", type=Path, required=True, metavar="FILE", help="the page (HTML)")
    board.add_argument("--json", type=Path, metavar="FILE", help="its table as JSON too")
    board.add_argument("--jobs", type=int, default=1, metavar="N", help="packages verified at once (default 1)")
    board.set_defaults(handler=cmd_scoreboard)


def cmd_keygen(args) -> int:
    from .signing import keygen

    print(f"keys written: {args.private} (private), {args.public} (public); fingerprint "
          f"{keygen(args.private, args.public)}")
    return EXIT_OK


def cmd_create(args) -> int:
    from .package import create

    made = create(args.out, args.documents, product=args.product, vendor=args.vendor, contact=args.contact,
                  lists=args.lists, waivers_file=args.waivers, log=args.log, key=args.sign)
    for claim in made.claims:
        print(claim.line())
    unmet = [c for c in made.claims if not c.met]
    print(f"package written: {made.path} ({len(made.claims)} claims, {len(unmet)} not met"
          + (", signed" if args.sign else "") + ")")
    return EXIT_FAIL if unmet and not args.allow_unmet else EXIT_OK


def cmd_verify(args) -> int:
    from .package import verify

    worst = EXIT_OK
    for package in args.packages:
        checked = verify(package, trusted=args.key, rerun=max(0, args.rerun))
        for line in checked.refusals:
            print(f"{package}: REFUSED: {line}")
        for line in checked.notes:
            print(f"{package}: {line}")
        unmet = [c for c in checked.claims if not c.met]
        if checked.refusals:
            print(f"{package}: REFUSED ({len(checked.refusals)} problems)")
            worst = EXIT_FAIL
            continue
        for claim in checked.claims:
            print(f"{package}: {claim.line()}")
        print(f"{package}: VERIFIED ({len(checked.claims)} claims, {len(unmet)} not met)")
        if unmet and not args.allow_unmet:
            worst = EXIT_FAIL
    return worst


def cmd_lists(args) -> int:
    from . import mustpass

    if args.name:
        sys.stdout.write(mustpass.load(args.name, args.list_version).text())
        return EXIT_OK
    for must in mustpass.newest():
        print(f"{must.name:28} {must.version:8} {len(must.cases):4} cases  {must.title}")
    return EXIT_OK


def cmd_scoreboard(args) -> int:
    from .scoreboard import build

    board = build(args.packages, args.out, args.json, max(1, args.jobs))
    print(f"scoreboard written: {args.out} ({board.rows} implementations, {board.columns} lists, "
          f"{board.cells} claims, {board.refused} packages refused)")
    return EXIT_OK
