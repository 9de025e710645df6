"""rngcheck.progress: a rich bar on a terminal, plain lines otherwise, nothing when disabled."""

from __future__ import annotations

import io

from rngcheck import progress as P


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_lines_when_not_a_terminal(monkeypatch):
    clock = iter(range(0, 1000, 6))
    monkeypatch.setattr(P.time, "monotonic", lambda: float(next(clock)))
    out = io.StringIO()
    bar = P.Progress(True, 10, stream=out)
    for number in range(10):
        bar.step(f"numpy: case/{number}\x1b[31m")
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines and all(line.startswith("rngcheck: ") and " cases (" in line and "ETA " in line for line in lines)
    assert "\x1b" not in out.getvalue()       # a backend's text cannot drive the terminal
    assert len(lines) < 10                   # at most one line per PLAIN_EVERY seconds


def test_a_bar_on_a_terminal_and_nothing_when_quiet():
    out = Terminal()
    bar = P.Progress(True, 3, stream=out)
    for number in range(3):
        bar.step(f"numpy: case/{number}")
    bar.close()
    assert "case/" in out.getvalue() and "3" in out.getvalue()
    quiet = Terminal()
    bar = P.Progress(False, 3, stream=quiet)
    bar.step("x")
    bar("message")
    bar.close()
    assert quiet.getvalue() == ""


def test_bytes_per_stream():
    out = Terminal()
    bar = P.Progress(True, 0, "bytes", stream=out)
    bar.begin("main stream", 8 << 20, "bytes")
    bar.advance(4 << 20)
    bar("main: reading 8 MiB")
    bar.advance(4 << 20)
    bar.close()
    assert "main stream" in out.getvalue() and "MiB" in out.getvalue()
