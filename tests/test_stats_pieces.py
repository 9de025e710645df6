"""The pieces the battery's processes read (battery.GuidedCuts, issue 44): contiguous, covering the
stream once, on the alignment, smaller and smaller, so that processes end together even where the
cost model is wrong; and a reading cut so gives the results of one pass."""

from __future__ import annotations

import json

import pytest

from rngcheck.stats import battery
from rngcheck.stats.streams import philox_source


def _pieces(factories, words: int, workers: int, align: int) -> list[tuple[int, int]]:
    cuts = battery.GuidedCuts(factories, words, workers, align)
    pieces = []
    while (piece := cuts.next()) is not None:
        pieces.append(piece)
        assert len(pieces) < 1000
    return pieces


@pytest.mark.parametrize("tier, nbytes, workers", [("standard", 256 << 20, 2), ("standard", 256 << 20, 4),
                                                    ("smoke", 4 << 20, 2), ("deep", 1 << 30, 16)])
def test_guided_pieces_cover_the_stream_once_and_end_small(tier, nbytes, workers):
    factories = [battery.budgeted(f, nbytes) for f in battery.main_tests(tier, nbytes)]
    words = nbytes // 4
    align = min(1 << 19, max(1, words // (4 * workers * battery.GUIDED_SMALLEST)))
    pieces = _pieces(factories, words, workers, align)
    work = battery.work_model(factories)
    total = work(words)
    assert pieces[0][0] == 0 and all(a + n == b for (a, n), (b, _) in zip(pieces, pieces[1:]))
    assert sum(n for _, n in pieces) == words and all(n > 0 for _, n in pieces)
    assert all(a % align == 0 for a, _ in pieces)
    shares = [(work(a + n) - work(a)) / total for a, n in pieces]
    # the first pieces are the largest (a quarter of the work per 2 processes, less with more, unless
    # the first align step alone holds more: the deep tier's long linear complexity at the start)...
    first_step = work(align) / total
    assert shares[0] <= max(1 / (battery.GUIDED_SHARE * workers), first_step) + 0.02
    assert shares[0] == pytest.approx(max(shares), abs=0.02)
    # ...and the last ones small: processes that finish early take them, so none waits long
    smallest = 2 / (battery.GUIDED_SMALLEST * workers)
    assert all(s <= smallest + 0.02 for s in shares[-workers:]), shares
    assert len(pieces) <= 7 * workers, len(pieces)  # about 2w ln 8 shrinking, then 2w of the smallest


def test_a_reading_cut_in_guided_pieces_is_one_pass(monkeypatch):
    """Two processes reading guided pieces (here 7, some cutting samples in two) give every result
    one process gives, to the bit."""
    monkeypatch.setattr(battery, "PARALLEL_MIN_WORDS", 1 << 16)
    nbytes = 8 << 20
    factories = [battery.budgeted(f, nbytes) for f in battery.main_tests("smoke", nbytes)]
    words = nbytes // 4
    pieces = _pieces(factories, words, 2, min(1 << 19, max(1, words // (4 * 2 * battery.GUIDED_SMALLEST))))
    assert len(pieces) >= 5
    accs, read = battery.feed_parallel(philox_source(21), factories, words, workers=2)
    serial, _ = battery.feed(philox_source(21), factories, words)

    def key(accs):
        return json.dumps([acc.result() for acc in accs], sort_keys=True, default=float)

    assert read == words and key(accs) == key(serial)


def test_a_stream_that_ends_inside_a_piece_keeps_what_came_before(monkeypatch, tmp_path):
    """A file shorter than asked, read by two processes in guided pieces: the words up to its end
    are merged in order (the pieces after the end read nothing and are left out), as one process
    reads them."""
    from rngcheck.stats.streams import RawSource

    monkeypatch.setattr(battery, "PARALLEL_MIN_WORDS", 1 << 16)
    path = tmp_path / "short.bin"
    path.write_bytes(philox_source(8).read((5 << 20) // 4 + 3).tobytes())   # 5 MiB and 3 words
    factories = battery.interstream_tests()
    words = (8 << 20) // 4
    accs, read = battery.feed_parallel(RawSource(str(path)), factories, words, workers=2)
    serial, read_serial = battery.feed(RawSource(str(path)), factories, words)
    assert read == read_serial == (5 << 20) // 4 + 3
    assert [a.result() for a in accs] == [s.result() for s in serial]
