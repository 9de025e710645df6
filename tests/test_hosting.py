"""The hosting rule (rngcheck.backends.hosting): one rule for run, stats, repro and the pytest plugin."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also in a worker that loads this file
import panel  # noqa: E402
from rngcheck import cli  # noqa: E402
from rngcheck.backends import hosting  # noqa: E402
from rngcheck.backends.exec_backend import ExecBackend  # noqa: E402

PANEL = panel.__file__


def test_the_rule():
    assert hosting.where("numpy") == "in-process"
    assert hosting.where("randomgen") == "worker" and hosting.where(f"{PANEL}:Only4D") == "worker"
    assert hosting.where("exec:./impl --flag") == "exec"
    assert hosting.where("randomgen", in_process=True) == "in-process"


def test_reference_in_process_others_in_a_worker():
    reference = hosting.hosted("numpy")
    assert not isinstance(reference, ExecBackend)
    other = hosting.hosted(f"{PANEL}:LanesReversed")
    try:
        assert isinstance(other, ExecBackend)
        assert other.describe()["implementation"] == "tests/panel.py KnobbedPhilox"
    finally:
        hosting.close(other)


def test_stats_runs_a_backend_in_a_worker(tmp_path, monkeypatch):
    """``rngcheck stats --backend X`` hosts X as ``run`` does: in a worker, unless --in-process."""
    notes = tmp_path / "pids.txt"
    monkeypatch.setenv("RNGCHECK_WHEREAMI", str(notes))
    spec = f"{__file__}:WhereAmI"
    assert cli.main(["stats", "--backend", spec, "--bytes", "64K", "--quiet", "--json", str(tmp_path / "s.json")]) == 0
    pids = {int(line) for line in notes.read_text().split()}
    assert pids and os.getpid() not in pids
    notes.unlink()
    assert cli.main(["stats", "--backend", spec, "--in-process", "--bytes", "64K", "--quiet",
                     "--json", str(tmp_path / "t.json")]) == 0
    assert {int(line) for line in notes.read_text().split()} == {os.getpid()}


class WhereAmI(panel.KnobbedPhilox):
    """A correct backend that notes the process it runs in (beside the test's directory)."""

    def random_generator(self, state, sizes, strides, buffer, **kw):
        target = os.environ.get("RNGCHECK_WHEREAMI")
        if target:
            with open(target, "a") as file:
                file.write(f"{os.getpid()}\n")
        return super().random_generator(state, sizes, strides, buffer, **kw)
