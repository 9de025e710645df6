"""The battery's work beside the reading (issue 44): scipy.special, which only the p-values need,
is imported in a thread of the parent while its workers read the stream
(rngcheck.stats.special.import_beside), never while a worker is forked."""

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
    saves: feed starts none, and scipy.special comes when a p-value first needs it."""
    found = json.loads(_fresh("""
        import json, sys
        from rngcheck.stats import battery, special
        from rngcheck.stats.streams import philox_source
        accs, read = battery.feed(philox_source(3), battery.main_tests("smoke"), 1 << 16)
        print(json.dumps([special._IMPORTING is None, "scipy.special" in sys.modules, special.UFUNCS in sys.modules]))
    """))
    assert found == [True, False, False]


def test_a_pool_is_forked_with_no_import_in_flight_and_the_import_starts_after():
    """feed_parallel waits for an import in flight before it forks (a child must not inherit a
    lock held by an import half done), and starts the import once its workers exist. In a fresh
    process, where scipy.special is not imported yet: the import started just before is only
    marked done by that wait, so without it the mark would still be there when the pool is made."""
    found = json.loads(_fresh("""
        import json, multiprocessing, sys
        from rngcheck.stats import battery, special
        from rngcheck.stats.streams import philox_source
        events = [("imported before", special.UFUNCS in sys.modules)]
        real_pool, real_beside = battery.ProcessPoolExecutor, special.import_beside

        class Pool(real_pool):
            def __init__(self, *args, **kwargs):
                events.append(("in flight at the pool", special._IMPORTING is not None))
                super().__init__(*args, **kwargs)

        def beside():
            events.append(("workers at the import", len(multiprocessing.active_children())))
            real_beside()

        battery.ProcessPoolExecutor, battery.import_beside = Pool, beside
        battery.PARALLEL_MIN_WORDS = 1 << 16
        real_beside()  # as if an earlier reading had started it
        events.append(("in flight before", special._IMPORTING is not None))
        factories = battery.interstream_tests()
        accs, read = battery.feed_parallel(philox_source(5), factories, 1 << 18, workers=2)
        special.import_settled()
        serial, _ = battery.feed(philox_source(5), factories, 1 << 18)
        events.append(("same results", read == 1 << 18 and [a.result() for a in accs] == [s.result() for s in serial]))
        print(json.dumps(events, default=str))
    """))
    assert [list(e) for e in found[:3]] == [["imported before", False], ["in flight before", True],
                                            ["in flight at the pool", False]]
    assert found[3][0] == "workers at the import" and found[3][1] >= 1, found  # the workers were running
    assert found[4] == ["same results", True]


def test_p_values_after_an_import_beside_are_the_same_as_without():
    """In a fresh process: a p-value asked for while the import runs waits for it, and is the
    one a process that imported scipy.special first gives."""
    code = """
        import json, sys
        from rngcheck.stats import pvalues, special
        ps = [((k * 2654435761) % 1000003) / 1000003 for k in range(1, 200)]
        {first}
        started = special._IMPORTING is not None
        statistic, p = pvalues.ks_uniform(ps)
        chi = pvalues.chi2(300.0, 255)
        special.import_settled()
        print(json.dumps([started, statistic, p.p, chi.p, chi.q]))
    """
    beside = json.loads(_fresh(code.format(first="special.import_beside()")))
    before = json.loads(_fresh(code.format(first="import scipy.special")))
    assert beside[0] is True and before[0] is False
    assert beside[1:] == before[1:]
