"""The battery's work beside the reading (issue 44): scipy.stats, which only the second level's
KS needs, is imported in a thread of the parent while its workers read the stream
(pvalues.prepare_ks), never while a worker is forked."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from rngcheck.stats import battery, pvalues
from rngcheck.stats.streams import philox_source


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_reading_in_one_process_leaves_the_import_to_the_end():
    """In one process an import thread would take the GIL from the reading for as long as it
    saves: feed starts none, and scipy.stats comes when the KS first needs it."""
    found = json.loads(_fresh("""
        import json, sys
        from rngcheck.stats import battery, pvalues
        from rngcheck.stats.streams import philox_source
        accs, read = battery.feed(philox_source(3), battery.main_tests("smoke"), 1 << 16)
        print(json.dumps([pvalues._SECOND_LEVEL_IMPORT is None, "scipy.stats" in sys.modules]))
    """))
    assert found == [True, False]


def test_a_pool_is_forked_with_no_import_in_flight_and_the_import_starts_after(monkeypatch):
    """feed_parallel waits for an import in flight before it forks (a child must not inherit a
    lock held by an import half done), and starts the import once its workers exist."""
    monkeypatch.setattr(battery, "PARALLEL_MIN_WORDS", 1 << 16)
    events = []
    pvalues.prepare_ks()  # as if an earlier reading had started it

    real_pool = battery.ProcessPoolExecutor

    class Pool(real_pool):
        def __init__(self, *args, **kwargs):
            events.append(("pool", pvalues._SECOND_LEVEL_IMPORT is None))
            super().__init__(*args, **kwargs)

    real_prepare = pvalues.prepare_ks

    def prepare():
        import multiprocessing
        events.append(("prepare", len(multiprocessing.active_children())))
        real_prepare()

    monkeypatch.setattr(battery, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(pvalues, "prepare_ks", prepare)
    factories = battery.interstream_tests()
    accs, read = battery.feed_parallel(philox_source(5), factories, 1 << 18, workers=2)
    assert read == 1 << 18
    assert events[0] == ("pool", True)
    assert events[1][0] == "prepare" and events[1][1] >= 1, events  # the workers were running
    pvalues.ks_settled()
    serial, _ = battery.feed(philox_source(5), factories, 1 << 18)
    assert [a.result() for a in accs] == [s.result() for s in serial]


def test_ks_after_a_prepared_import_is_the_same_as_without():
    ps = [((k * 2654435761) % 1000003) / 1000003 for k in range(1, 200)]
    pvalues.prepare_ks()
    first = pvalues.ks_uniform(ps)
    assert pvalues._SECOND_LEVEL_IMPORT is None  # ks_uniform waited for it
    assert pvalues.ks_uniform(ps) == first
    from scipy import stats
    expected = stats.kstest(sorted(ps), "uniform", method="auto")
    assert first[0] == float(expected.statistic) and first[1].p == float(expected.pvalue)
