"""Real peers: an installed tool reads the same stream, and its results go beside ours.

    rngcheck stats --backend numpy --tier standard --with dieharder

dieharder (Robert G. Brown's; Debian/Ubuntu package ``dieharder``) reads raw 32-bit words
from its stdin (``-g 200``, native little-endian, the format of ``--input``). It runs one
test per invocation (``-d N``), each fed the stream from its first word, so every test sees
the same words ours saw first; a backend's stream continues past the tier's bytes for as
long as dieharder asks (its tests read 50-600 MB each), a file or stdin gives what it has
(a test that runs out reports "stream ended" instead of a p-value). The tests per tier:

    smoke     diehard_birthdays, sts_monobit, diehard_runs                  (a few seconds)
    standard  those, plus rank 32x32, count-the-1s stream, parking lot, sts runs and
              serial, rgb permutations, lagged sum and KS test, dab dct     (about a minute)
    deep      all of them (dieharder -a)

dieharder's results are informative: they do not change our verdicts or the exit code.
The stats document gets a ``peers`` list:

    {"tool": "dieharder", "version": "3.31.1", "path": ..., "tests": [ids] | "all",
     "elapsed_seconds": ..., "bytes_sent": ...,
     "results": [{"test", "dieharder_test", "ntup", "tsamples", "psamples", "p_value",
                  "assessment" ("PASSED" | "WEAK" | "FAILED"), "command"}],
     "errors": [{"dieharder_test", "command", "error"}]}
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import RngcheckError
from ..registry import Registry

DIEHARDER_TESTS = {
    "smoke": [0, 100, 15],
    "standard": [0, 100, 15, 2, 8, 10, 101, 102, 202, 203, 204, 206],
    "deep": None,  # -a
}
INSTALL_HINT = "Debian/Ubuntu: apt-get install dieharder"
SEND_WORDS = 1 << 18  # words per write to dieharder's stdin
MAX_SEND_BYTES = 1 << 40  # a backend stream is endless; dieharder -a reads far less than this


def dieharder_path() -> str | None:
    return shutil.which("dieharder")


@dataclass(frozen=True)
class Peer:
    """A tool ``rngcheck stats --with NAME`` runs on the same stream, beside the battery (PEERS)."""
    check: Callable[[], None]   # a one-line RngcheckError when it cannot run here (not installed)
    run: Callable[..., dict]    # run(open_source, tier, tests, progress): its section of the document


def _register_peers() -> None:
    PEERS.add("dieharder", Peer(_check_dieharder, run_dieharder))


PEERS: Registry[Peer] = Registry("peer", load=_register_peers)


def check(peers) -> None:
    """Usage check before anything runs: every requested peer is known and installed."""
    for name in peers or ():
        PEERS.get(name).check()


def _check_dieharder() -> None:
    if dieharder_path() is None:
        raise RngcheckError(f"--with dieharder: dieharder is not installed ({INSTALL_HINT})")


def dieharder_version(path: str) -> str | None:
    try:
        text = subprocess.run([path, "-l"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"dieharder version (\S+)", text)
    return match.group(1) if match else None


_ROW = re.compile(r"^\s*([A-Za-z0-9_]+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*([0-9.eE+-]+)\s*\|\s*(\w+)\s*$")


def parse_dieharder(text: str) -> list[dict]:
    """Result rows of dieharder's default table: name|ntup|tsamples|psamples|p-value|Assessment."""
    rows = []
    for line in text.splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        name, ntup, tsamples, psamples, p, assessment = match.groups()
        rows.append({"test": name, "ntup": int(ntup), "tsamples": int(tsamples), "psamples": int(psamples),
                     "p_value": float(p), "assessment": assessment})
    return rows


def _send(stream_chunks, pipe, sent: list) -> None:
    """Write byte chunks into dieharder's stdin until it stops reading (it exits when done)."""
    try:
        for chunk in stream_chunks:
            pipe.write(chunk)
            sent[0] += len(chunk)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            pipe.close()
        except (BrokenPipeError, OSError):
            pass


def source_chunks(open_source, limit: int = MAX_SEND_BYTES):
    """Bytes of a stream from its first word: ``open_source()`` returns a Source positioned at 0."""
    source = open_source()
    sent = 0
    try:
        while sent < limit:
            words = source.read(SEND_WORDS)
            if words.size == 0:
                return
            data = np.ascontiguousarray(words, dtype="<u4").tobytes()
            sent += len(data)
            yield data
            if words.size < SEND_WORDS:
                return
    finally:
        source.close()


def run_dieharder(open_source, tier: str, tests=None, progress=None) -> dict:
    """Run dieharder on the stream ``open_source()`` gives (from word 0), once per test.
    ``tests``: None (the tier's, DIEHARDER_TESTS), "all" (-a), or a list of -d numbers."""
    path = dieharder_path()
    if path is None:
        raise RngcheckError(f"--with dieharder: dieharder is not installed ({INSTALL_HINT})")
    say = progress or (lambda text: None)
    chosen = DIEHARDER_TESTS[tier] if tests is None else None if tests == "all" else list(tests)
    runs = [["-a"]] if chosen is None else [["-d", str(t)] for t in chosen]
    began = time.perf_counter()
    results, errors, total_sent = [], [], 0
    for arguments in runs:
        command = [path, "-g", "200", *arguments]
        shown = " ".join(["dieharder", "-g", "200", *arguments])
        say(f"peer: {shown}")
        test_id = None if arguments == ["-a"] else int(arguments[1])
        try:
            proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT)
        except OSError as error:
            errors.append({"dieharder_test": test_id, "command": shown, "error": str(error)})
            continue
        sent = [0]
        writer = threading.Thread(target=_send, args=(source_chunks(open_source), proc.stdin, sent), daemon=True)
        writer.start()
        assert proc.stdout is not None, "started with stdout=PIPE"
        output = proc.stdout.read().decode("utf-8", "replace")
        proc.wait()
        writer.join(timeout=60)
        total_sent += sent[0]
        rows = parse_dieharder(output)
        for row in rows:
            row["dieharder_test"] = test_id
            row["command"] = shown
        results.extend(rows)
        if "Error: EOF" in output:
            errors.append({"dieharder_test": test_id, "command": shown,
                           "error": f"the stream ended after {sent[0]} bytes, before dieharder finished"
                                    + (f" ({len(rows)} results before that)" if rows else "")})
        elif proc.returncode and not rows:
            last = [line for line in output.splitlines() if line.strip()][-1:] or [""]
            errors.append({"dieharder_test": test_id, "command": shown,
                           "error": f"exit status {proc.returncode}: {last[0].strip()}"})
    return {"tool": "dieharder", "version": dieharder_version(path), "path": path,
            "tests": "all" if chosen is None else chosen, "elapsed_seconds": time.perf_counter() - began,
            "bytes_sent": total_sent, "results": results, "errors": errors,
            "note": "informative: dieharder's assessments do not change rngcheck's verdicts or exit code"}
