"""Progress of a long run on stderr: a rich progress bar (current item, counts, ETA) on a terminal,
a plain line at most every PLAIN_EVERY seconds otherwise, nothing when disabled (``--quiet``).

    progress = Progress(True, total=560, what="cases")
    progress.step("numpy: layout/rank5")     # before each item; advance(n) for units of work
    progress.close()
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

PLAIN_EVERY = 10.0   # seconds between plain lines when stderr is not a terminal


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    def __init__(self, enabled: bool, total: int, what: str = "cases", stream=None, terminal: bool | None = None):
        self.stream = stream or sys.stderr
        self.enabled = enabled and (total > 0 or what == "bytes")
        self.total, self.done, self.what = total, 0, what
        self.started = self.last_line = time.monotonic()
        self.bar: RichProgress | None = None
        self.task: TaskID | None = None   # the bar's one task
        if terminal is None:
            terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        if self.enabled and terminal:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            count = DownloadColumn(binary_units=True) if what == "bytes" else MofNCompleteColumn()
            self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(), count,
                                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                    TextColumn("{task.fields[item]}", markup=False),
                                    console=Console(file=self.stream), transient=True)
            self.task = self.bar.add_task("rngcheck", total=total, item="")
            self.bar.start()

    def step(self, label: str) -> None:
        """The next item starts (the ones before it are done)."""
        self._show(label)
        self.done += 1

    def advance(self, count: int, label: str | None = None) -> None:
        """``count`` units of work done (``rngcheck stats``: bytes); ``label``: what is being done now."""
        self.done += count
        self._show(label)

    def _show(self, label: str | None) -> None:
        if not self.enabled:
            return
        printable = None if label is None else "".join(c if c.isprintable() else "?" for c in label)[:60]
        if self.bar is not None and self.task is not None:
            if printable is None:
                self.bar.update(self.task, completed=min(self.done, self.total))
            else:
                self.bar.update(self.task, completed=min(self.done, self.total), item=printable)
            return
        now = time.monotonic()
        if now - self.last_line < PLAIN_EVERY or not self.done:
            return
        self.last_line = now
        rate = self.done / max(now - self.started, 1e-9)
        eta = _clock((self.total - self.done) / rate) if rate else "?"
        self.stream.write(f"rngcheck: {self.done}/{self.total} {self.what} ({100 * self.done // max(1, self.total)}%), "
                          f"ETA {eta}" + (f", {printable}" if printable else "") + "\n")
        self.stream.flush()

    def begin(self, label: str, total: int, what: str | None = None) -> None:
        """A new stretch of work of ``total`` units (``rngcheck stats``: each stream's bytes)."""
        self.total, self.done, self.what = total, 0, what or self.what
        self.started = time.monotonic()
        if self.bar is not None and self.task is not None:
            self.bar.reset(self.task, total=total, description=label, item="")

    def __call__(self, text: str) -> None:
        """A message: the current item on a terminal, a line of its own otherwise."""
        if not self.enabled:
            return
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, item="".join(c if c.isprintable() else "?" for c in text)[:60])
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
