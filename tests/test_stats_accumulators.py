"""Accumulators: results independent of chunk sizes and of how the stream is split and merged."""

import inspect
import io
import json
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rngcheck.errors import RngcheckError
from rngcheck.stats import battery, knuth, lanes, nist, testu01
from rngcheck.stats.accumulators import Accumulator, StateError
from rngcheck.stats.streams import philox_source

FACTORIES = battery.main_tests()
STREAM = philox_source(2024).read(int(3.4 * (1 << 19)))  # > 3 samples of the largest test


def canonical(acc: Accumulator) -> str:
    return json.dumps(acc.result(), sort_keys=True, default=float)


def one_pass(factory, words, start=0):
    acc = factory(start=start)
    acc.update(words)
    return acc


def pieces(words, cuts, chunk):
    """Accumulate words[a:b] for consecutive ranges, each fed in chunks of `chunk` words."""
    bounds = [0] + sorted(cuts) + [words.size]
    return [(a, b) for a, b in zip(bounds, bounds[1:])]


def split_and_merge(factory, words, cuts, chunk):
    accs = []
    for a, b in pieces(words, cuts, chunk):
        acc = factory(start=a)
        for i in range(a, b, chunk):
            acc.update(words[i:min(b, i + chunk)])
        accs.append(acc)
    total = accs[0]
    for other in accs[1:]:
        total.merge(other)
    return total


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f(start=0).name)
def test_split_anywhere_gives_the_same_result(factory):
    size = min(STREAM.size, 3 * factory(start=0).sample_words + 12345)
    words = STREAM[:size]
    want = canonical(one_pass(factory, words))
    rng = np.random.default_rng(size)
    for trial in range(3):
        cuts = sorted(int(c) for c in rng.integers(1, size, size=trial + 1))
        chunk = int(rng.integers(1000, 200000))
        assert canonical(split_and_merge(factory, words, cuts, chunk)) == want


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(1, 3 * nist.SAMPLE_WORDS + 999), max_size=4, unique=True),
       chunk=st.integers(1000, 70000), tree=st.booleans())
def test_hypothesis_splits(cuts, chunk, tree):
    words = STREAM[:3 * nist.SAMPLE_WORDS + 1000]
    for factory in (nist.Runs, lanes.LaneBits, knuth.Gap, testu01.HammingWeight):
        want = canonical(one_pass(factory, words))
        if tree and len(cuts) >= 2:
            bounds = [0] + sorted(cuts) + [words.size]
            accs = [one_pass(factory, words[a:b], start=a) for a, b in zip(bounds, bounds[1:])]
            while len(accs) > 1:  # merge pairwise, like a reduction tree
                merged = []
                for i in range(0, len(accs) - 1, 2):
                    merged.append(accs[i].merge(accs[i + 1]))
                if len(accs) % 2:
                    merged.append(accs[-1])
                accs = merged
            got = accs[0]
        else:
            got = split_and_merge(factory, words, cuts, chunk)
        assert canonical(got) == want


def test_merge_refuses_non_contiguous_pieces():
    a = nist.Monobit(start=0)
    a.update(STREAM[:100])
    b = nist.Monobit(start=200)
    with pytest.raises(ValueError):
        a.merge(b)


def test_budgeted_test_measures_only_the_first_samples_wherever_split():
    def factory(start=0):
        acc = nist.MatrixRank(start=start)
        acc.max_samples = 2
        return acc
    words = STREAM[:4 * nist.SAMPLE_WORDS]
    whole = one_pass(factory, words)
    assert whole.samples == 2 and whole.skipped == 2
    assert canonical(split_and_merge(factory, words, [nist.SAMPLE_WORDS + 17, 3 * nist.SAMPLE_WORDS - 5], 9999)) \
        == canonical(whole)


def test_settled_results_are_kept_while_no_sample_is_added():
    """settle() computes a test's results and result() hands out copies of them (a caller's changes
    stay its own) while no sample is added; a budgeted test with its budget read takes none, so its
    settled results are its results at the end; one that takes a sample computes them again."""
    budgeted = nist.MatrixRank(start=0)
    budgeted.max_samples = 2
    budgeted.update(STREAM[:2 * nist.SAMPLE_WORDS])
    assert budgeted.budget_read
    budgeted.settle()
    first = budgeted.result()
    first[0]["p_value"] = -1.0
    budgeted.update(STREAM[2 * nist.SAMPLE_WORDS:4 * nist.SAMPLE_WORDS])
    assert budgeted.samples == 2 and budgeted.result()[0]["p_value"] != -1.0
    assert budgeted.result() == one_pass(lambda start=0: _budgeted(start), STREAM[:4 * nist.SAMPLE_WORDS]).result()
    open_ended = nist.MatrixRank(start=0)
    open_ended.update(STREAM[:nist.SAMPLE_WORDS])
    assert not open_ended.budget_read
    open_ended.settle()
    open_ended.update(STREAM[nist.SAMPLE_WORDS:2 * nist.SAMPLE_WORDS])
    assert open_ended.result()[0]["samples"] == 2
    assert open_ended.result() == one_pass(nist.MatrixRank, STREAM[:2 * nist.SAMPLE_WORDS]).result()


def _budgeted(start=0):
    acc = nist.MatrixRank(start=start)
    acc.max_samples = 2
    return acc


def test_unused_words_are_reported():
    acc = nist.Monobit(start=5)
    acc.update(STREAM[:nist.SAMPLE_WORDS * 2])
    assert acc.samples == 1
    assert acc.unused_words == 2 * nist.SAMPLE_WORDS - nist.SAMPLE_WORDS


# ----------------------------------------------------------------------------------------
# state() / from_state(): every accumulator the battery builds, through an .npz file.
# ----------------------------------------------------------------------------------------

def battery_factories():
    """Every accumulator configuration battery.py builds: main_tests(), interstream_tests() and
    the budgeted factories of every tier, one of each distinct (class, parameters, budget)."""
    candidates = list(battery.main_tests()) + list(battery.interstream_tests())
    for nbytes in battery.TIERS.values():
        candidates += [battery.budgeted(f, nbytes) for f in battery.main_tests()]
    candidates += [battery.budgeted(f, 2 << 20) for f in battery.main_tests()]  # budgets this data exceeds
    chosen = {}
    for factory in candidates:
        acc = factory(start=0)
        key = (type(acc), tuple(sorted(acc.parameters.items())), acc.max_samples)
        label = acc.name + ("" if acc.max_samples is None else f"-budget{acc.max_samples}")
        chosen.setdefault(key, (label, factory))
    return sorted(chosen.values(), key=lambda x: x[0])


STATE_FACTORIES = battery_factories()
STATE_WORDS = STREAM[:3 * (1 << 19) + 777]
CUTS = [0, (1 << 19) + 12345, (1 << 19) + 12445, STATE_WORDS.size]  # the middle piece: 100 words, no sample boundary


def through_npz(state, path):
    np.savez(path, **state)
    with np.load(path, allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files}


def same(a, b) -> bool:
    """Deep equality of attribute values (arrays: same dtype, shape and values)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and bool((a == b).all()))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def records_view(acc):
    """The accumulator's attributes, with the per-batch record list joined (the state keeps one batch)."""
    out = dict(vars(acc))
    out["_records"] = acc.records()
    return out


@pytest.mark.parametrize("label,factory", STATE_FACTORIES, ids=[label for label, _ in STATE_FACTORIES])
def test_state_round_trips_through_npz(label, factory, tmp_path):
    originals, restored = [], []
    for i, (a, b) in enumerate(zip(CUTS, CUTS[1:])):
        acc = one_pass(factory, STATE_WORDS[a:b], start=a)
        state = acc.state()
        back = type(acc).from_state(through_npz(state, tmp_path / f"{i}.npz"))
        assert same(records_view(back), records_view(acc))  # every attribute: counts, fragments, rebuilt tables
        assert canonical(back) == canonical(acc)
        assert same(back.state(), state)
        originals.append(acc)
        restored.append(back)
    assert restored[1]._head.size == 100 and not restored[1].aligned  # the piece that holds only a head
    assert restored[0]._tail.size == CUTS[1] % restored[0].sample_words > 0  # a sample cut by the split
    whole = canonical(one_pass(factory, STATE_WORDS))
    merged = restored[0].merge(restored[1]).merge(restored[2])
    expected = originals[0].merge(originals[1]).merge(originals[2])
    assert canonical(merged) == canonical(expected) == whole
    assert same(merged.state(), expected.state())
    # a restored piece merges with a live one, either way round
    live = [one_pass(factory, STATE_WORDS[a:b], start=a) for a, b in zip(CUTS, CUTS[1:])]
    back = [type(acc).from_state(acc.state()) for acc in live]
    assert canonical(live[0].merge(back[1]).merge(live[2])) == whole
    assert canonical(back[0].merge(live[1]).merge(back[2])) == whole


def test_state_leaves_out_the_lookup_tables():
    """MaximumOfT and RandomWalk carry ~0.6 MB and ~0.2 MB of tables their constructors rebuild."""
    words = STREAM[:1 << 19]
    sizes = {}
    for cls in (knuth.MaximumOfT, testu01.RandomWalk, knuth.CouponCollector, nist.Monobit):
        acc = cls(start=0)
        acc.update(words)
        buffer = io.BytesIO()
        np.savez(buffer, **acc.state())
        sizes[cls.name] = (buffer.getbuffer().nbytes, len(pickle.dumps(acc)))
        print(f"{cls.name}: state {sizes[cls.name][0]} bytes, pickled {sizes[cls.name][1]} bytes")
    for name in ("knuth.maximum_of_t", "testu01.random_walk"):
        state_bytes, pickled_bytes = sizes[name]
        assert state_bytes * 10 < pickled_bytes
    keys = knuth.MaximumOfT(start=0).state().keys()
    assert not any("edge" in k or "cell" in k or "probab" in k for k in keys)


def test_every_constructor_parameter_is_in_the_state():
    """from_state rebuilds with cls(start, **parameters): a constructor parameter that is not
    recorded in acc.parameters could not be rebuilt."""
    for _, factory in STATE_FACTORIES:
        acc = factory(start=0)
        signature = inspect.signature(type(acc).__init__)
        names = {name for name, p in signature.parameters.items()
                 if name not in ("self", "start") and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
        assert names == set(acc.parameters), type(acc).__name__
        assert {k[len("param/"):] for k in acc.state() if k.startswith("param/")} == names


def test_huge_scalar_totals_survive_the_npz(tmp_path):
    acc = nist.Monobit(start=0)
    acc.update(STREAM[:nist.SAMPLE_WORDS])
    acc.totals["ones"] = (1 << 70) + 3  # beyond int64: kept as text, read back exactly
    state = acc.state()
    assert state["totals/ones"] == str((1 << 70) + 3)
    back = nist.Monobit.from_state(through_npz(state, tmp_path / "s.npz"))
    assert back.totals["ones"] == (1 << 70) + 3 and type(back.totals["ones"]) is int
    assert type(back.samples) is int and type(back.start) is int


def test_budget_is_part_of_the_state():
    acc = battery.budgeted(nist.MatrixRank, 2 << 20)(start=0)
    state = acc.state()
    assert state["set/max_samples"] == acc.max_samples == 16
    assert nist.MatrixRank.from_state(state).max_samples == 16
    assert "set/max_samples" not in nist.MatrixRank(start=0).state()


def state_of_two_samples():
    acc = nist.Monobit(start=5)
    acc.update(STREAM[:3 * nist.SAMPLE_WORDS])
    return acc.state()


@pytest.mark.parametrize("damage", [
    "other class", "unknown key", "rows", "float head", "version", "object array", "negative start",
    "missing key", "text count", "long tail", "over budget", "records without samples", "not a dict",
])
def test_from_state_refuses_a_state_that_is_not_its_own(damage):
    state = state_of_two_samples()
    target = nist.Monobit
    if damage == "other class":
        target = nist.Runs
    elif damage == "unknown key":
        state["extra"] = 1
    elif damage == "rows":
        state["records/ones"] = state["records/ones"][:1]
    elif damage == "float head":
        state["head"] = state["head"].astype(np.float64)
    elif damage == "version":
        state["version"] = 99
    elif damage == "object array":
        state["records/ones"] = state["records/ones"].astype(object)
    elif damage == "negative start":
        state["start"] = -1
    elif damage == "missing key":
        del state["end"]
    elif damage == "text count":
        state["samples"] = "two"
    elif damage == "long tail":
        state["tail"] = np.zeros(nist.SAMPLE_WORDS, np.uint32)
    elif damage == "over budget":
        state["set/max_samples"] = 1
    elif damage == "records without samples":
        state["samples"] = 0
    elif damage == "not a dict":
        state = [1, 2]
    with pytest.raises(StateError) as caught:
        target.from_state(state)
    assert isinstance(caught.value, RngcheckError) and isinstance(caught.value, ValueError)
    assert "\n" not in str(caught.value) and str(caught.value)


def test_state_is_a_snapshot():
    """Changing the accumulator after state() does not change the state, nor the reverse."""
    acc = testu01.HammingWeight(start=0)
    acc.update(STREAM[:40000])
    state = acc.state()
    before = canonical(acc)
    state["totals/dist"][:] = 0
    state["tail"][:] = 0
    assert canonical(acc) == before
    back = testu01.HammingWeight.from_state(acc.state())
    acc.update(STREAM[40000:80000])
    assert back.end == 40000 and canonical(back) == before
