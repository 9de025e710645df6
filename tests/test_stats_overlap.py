"""The battery's work beside the reading (issue 44): scipy.stats, which only the second level's
KS needs, is imported in a thread of the parent while its workers read the stream
(pvalues.prepare_ks), never while a worker is forked."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


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


def test_a_pool_is_forked_with_no_import_in_flight_and_the_import_starts_after():
    """feed_parallel waits for an import in flight before it forks (a child must not inherit a
    lock held by an import half done), and starts the import once its workers exist. In a fresh
    process, where scipy.stats is not imported yet: the import started just before takes about
    0.4 s, so without the wait it would still be in flight when the pool is made."""
    found = json.loads(_fresh("""
        import json, multiprocessing, sys
        from rngcheck.stats import battery, pvalues
        from rngcheck.stats.streams import philox_source
        events = [("imported before", "scipy.stats" in sys.modules)]
        real_pool, real_prepare = battery.ProcessPoolExecutor, pvalues.prepare_ks

        class Pool(real_pool):
            def __init__(self, *args, **kwargs):
                events.append(("in flight at the pool", pvalues._SECOND_LEVEL_IMPORT is not None))
                super().__init__(*args, **kwargs)

        def prepare():
            events.append(("workers at the import", len(multiprocessing.active_children())))
            real_prepare()

        battery.ProcessPoolExecutor, pvalues.prepare_ks = Pool, prepare
        battery.PARALLEL_MIN_WORDS = 1 << 16
        real_prepare()  # as if an earlier reading had started it
        events.append(("in flight before", pvalues._SECOND_LEVEL_IMPORT is not None))
        factories = battery.interstream_tests()
        accs, read = battery.feed_parallel(philox_source(5), factories, 1 << 18, workers=2)
        pvalues.ks_settled()
        serial, _ = battery.feed(philox_source(5), factories, 1 << 18)
        events.append(("same results", read == 1 << 18 and [a.result() for a in accs] == [s.result() for s in serial]))
        print(json.dumps(events, default=str))
    """))
    assert [list(e) for e in found[:3]] == [["imported before", False], ["in flight before", True],
                                            ["in flight at the pool", False]]
    assert found[3][0] == "workers at the import" and found[3][1] >= 1, found  # the workers were running
    assert found[4] == ["same results", True]


def test_ks_after_a_prepared_import_is_the_same_as_without():
    """In a fresh process: ks_uniform waits for the import prepare_ks started, and gives
    scipy.stats.kstest's statistic and p-value."""
    found = json.loads(_fresh("""
        import json, sys
        from rngcheck.stats import pvalues
        ps = [((k * 2654435761) % 1000003) / 1000003 for k in range(1, 200)]
        pvalues.prepare_ks()
        started = pvalues._SECOND_LEVEL_IMPORT is not None
        statistic, p = pvalues.ks_uniform(ps)
        settled = pvalues._SECOND_LEVEL_IMPORT is None
        from scipy import stats
        expected = stats.kstest(sorted(ps), "uniform", method="auto")
        print(json.dumps([started, settled, statistic == float(expected.statistic), p.p == float(expected.pvalue)]))
    """))
    assert found == [True, True, True, True]
