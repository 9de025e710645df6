"""Checkpoints of a battery run cut into ranges (rngcheck.stats.checkpoint), and the seekable
inter-stream pairs (streams.XorSource.at) that let those groups be cut into ranges too."""

import json
import os

import numpy as np
import pytest

from rngcheck.errors import RngcheckError
from rngcheck.stats import battery
from rngcheck.stats import checkpoint as checkpoint_module
from rngcheck.stats.checkpoint import MANIFEST, Checkpoint, restore, versions
from rngcheck.stats.streams import NEIGHBOURS, Source, XorSource, philox_source
from test_stats_accumulators import same  # deep equality of accumulator attributes

RANGE = 1 << 18  # words per range (not a multiple of the largest sample: ranges hold cut samples)
PLAN = [[0, RANGE], [RANGE, RANGE], [2 * RANGE, RANGE]]
WORDS = philox_source(77).read(3 * RANGE)
FACTORIES = [battery.budgeted(f, 1 << 20) for f in battery.main_tests()]


def identity(**changes):
    base = {
        "source": {"generator": "Philox4x32-10 (rngcheck.reference)", "key": "0x4d", "counter": "0x0"},
        "key": 77,
        "tier": "smoke",
        "bytes": 3 * RANGE * 4,
        "versions": versions(),
        "tests": [f(start=0).name for f in FACTORIES],
        "plan": PLAN,
    }
    for field, value in changes.items():
        if isinstance(value, dict) and isinstance(base.get(field), dict):
            base[field] = {**base[field], **value}
        else:
            base[field] = value
    return base


def measure(index):
    start, count = PLAN[index]
    accs, _ = battery.feed(philox_source(77).at(start), FACTORIES, count, start=start)
    return accs


STATES = {index: [acc.state() for acc in measure(index)] for index in range(len(PLAN))}


def canonical(accs):
    return json.dumps([acc.result() for acc in accs], sort_keys=True, default=float)


def one_line_error(caught) -> str:
    text = str(caught.value)
    assert text and "\n" not in text
    return text


def test_resume_gives_the_serial_result(tmp_path):
    """Ranges 0 and 2 finished before a kill; a new Checkpoint on the directory returns their
    states, range 1 is measured, and the merge in stream order equals one serial pass."""
    first = Checkpoint(tmp_path / "ck", identity())
    assert first.finished == [] and first.done() == {}
    first.save(0, STATES[0])
    first.save(2, STATES[2])
    again = Checkpoint(tmp_path / "ck", identity())
    assert again.finished == [0, 2] and again.plan == PLAN
    done = again.done()
    assert sorted(done) == [0, 2]
    assert same(done[0], STATES[0]) and same(done[2], STATES[2])
    ranges = {i: restore(FACTORIES, states) for i, states in done.items()}
    ranges[1] = measure(1)
    accs = ranges[0]
    for i in (1, 2):
        for acc, other in zip(accs, ranges[i]):
            acc.merge(other)
    serial, _ = battery.feed(philox_source(77), FACTORIES, WORDS.size)
    assert canonical(accs) == canonical(serial)
    manifest = json.loads((tmp_path / "ck" / MANIFEST).read_text())
    assert manifest["finished"] == [0, 2] and manifest["identity"]["plan"] == PLAN
    assert sorted(os.listdir(tmp_path / "ck")) == [MANIFEST, "range-000000.npz", "range-000002.npz"]


def test_a_range_saved_again_replaces_the_first(tmp_path):
    ck = Checkpoint(tmp_path, identity())
    ck.save(1, STATES[0])
    ck.save(1, STATES[1])
    assert same(Checkpoint(tmp_path, identity()).done()[1], STATES[1])


@pytest.mark.parametrize("field,change", [
    ("source.generator", {"source": {"generator": "Philox4x32-7 (rngcheck.reference)"}}),
    ("key", {"key": 78}),
    ("tier", {"tier": "standard"}),
    ("bytes", {"bytes": 4 * RANGE * 4}),
    ("versions.rngcheck", {"versions": {"rngcheck": "0.0.1"}}),
    ("versions.numpy", {"versions": {"numpy": "1.26.4"}}),
    ("versions.scipy", {"versions": {"scipy": "1.11.0"}}),
    ("tests", {"tests": [f(start=0).name for f in FACTORIES][:-1]}),
    ("plan", {"plan": [[0, RANGE], [RANGE, 2 * RANGE]]}),
    ("plan[1][1]", {"plan": [[0, RANGE], [RANGE, RANGE + 1], [2 * RANGE + 1, RANGE - 1]]}),
    ("workers", {"workers": 4}),  # a field the checkpoint does not have
])
def test_another_runs_checkpoint_is_refused_naming_the_field(tmp_path, field, change):
    ck = Checkpoint(tmp_path, identity())
    ck.save(0, STATES[0])
    manifest = (tmp_path / MANIFEST).read_bytes()
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path, identity(**change))
    text = one_line_error(caught)
    assert f" {field} differs" in text and str(tmp_path) in text
    assert (tmp_path / MANIFEST).read_bytes() == manifest  # refusing writes nothing
    assert Checkpoint(tmp_path, identity()).finished == [0]


def test_a_field_the_new_run_lacks_is_named(tmp_path):
    Checkpoint(tmp_path, identity())
    lacking = identity()
    del lacking["tier"]
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path, lacking)
    assert "tier differs (checkpoint: \"smoke\", this run: absent)" in one_line_error(caught)


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "emptied", "missing"])
def test_a_damaged_range_file_is_refused(tmp_path, damage):
    ck = Checkpoint(tmp_path, identity())
    ck.save(0, STATES[0])
    ck.save(1, STATES[1])
    path = tmp_path / "range-000001.npz"
    data = bytearray(path.read_bytes())
    if damage == "flipped byte":
        data[len(data) // 2] ^= 0x40
        path.write_bytes(bytes(data))
    elif damage == "truncated":
        path.write_bytes(bytes(data[:len(data) // 3]))
    elif damage == "emptied":
        path.write_bytes(b"")
    else:
        path.unlink()
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path, identity()).done()
    assert "range-000001.npz" in one_line_error(caught) or "finished range 1" in str(caught.value)


def replace_range(directory, index, data: bytes):
    """Put ``data`` in place of a range file and make the manifest vouch for it (an attacker, or
    a file copied from elsewhere, with the checksum fixed up)."""
    import hashlib
    Checkpoint(directory, identity()).close()  # the journal folded into the manifest
    (directory / f"range-{index:06d}.npz").write_bytes(data)
    manifest = json.loads((directory / MANIFEST).read_text())
    manifest["sha256"][str(index)] = hashlib.sha256(data).hexdigest()
    if index not in manifest["finished"]:
        manifest["finished"].append(index)
    (directory / MANIFEST).write_text(json.dumps(manifest))


class _Payload:
    """Unpickling this would create a file: the proof that no code ran."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_range_file_that_needs_pickle_is_refused_without_running_it(tmp_path):
    ck_dir = tmp_path / "ck"
    Checkpoint(ck_dir, identity()).save(0, STATES[0])
    marker = tmp_path / "code-ran"
    import io
    buffer = io.BytesIO()
    payload = np.empty(1, dtype=object)
    payload[0] = _Payload(str(marker))
    np.savez(buffer, **{"meta/format": "rngcheck-checkpoint", "meta/index": 1, "meta/count": 1,
                        "meta/identity": Checkpoint(ck_dir, identity()).digest, "0/class": payload})
    replace_range(ck_dir, 1, buffer.getvalue())
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(ck_dir, identity()).done()
    assert "range-000001.npz" in one_line_error(caught)
    assert not marker.exists()


def test_a_range_file_of_another_run_is_refused(tmp_path):
    Checkpoint(tmp_path / "other", identity(key=5)).save(1, STATES[1])
    Checkpoint(tmp_path / "ck", identity()).save(0, STATES[0])
    replace_range(tmp_path / "ck", 1, (tmp_path / "other" / "range-000001.npz").read_bytes())
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path / "ck", identity()).done()
    assert "another run" in one_line_error(caught) and "range-000001.npz" in str(caught.value)


def test_a_valid_range_file_swapped_in_is_caught_by_the_checksum(tmp_path):
    """Same run, same index, a well-formed file: only the manifest's checksum tells it is not
    the one that was saved (a file copied from another attempt of the run, say)."""
    Checkpoint(tmp_path / "a", identity()).save(1, STATES[1])
    Checkpoint(tmp_path / "b", identity()).save(1, STATES[0])
    (tmp_path / "a" / "range-000001.npz").write_bytes((tmp_path / "b" / "range-000001.npz").read_bytes())
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path / "a", identity()).done()
    assert "range-000001.npz is damaged" in one_line_error(caught)


def test_restore_refuses_states_of_other_tests(tmp_path):
    states = STATES[0]
    with pytest.raises(RngcheckError):
        restore(FACTORIES[:-1], states)
    swapped = list(FACTORIES)
    i, j = [k for k, f in enumerate(FACTORIES) if f(start=0).name.startswith("knuth.gap")]
    swapped[i], swapped[j] = swapped[j], swapped[i]  # same class, the other nibble
    with pytest.raises(RngcheckError) as caught:
        restore(swapped, states)
    assert "nibble" in one_line_error(caught)
    unbudgeted = [f for f in battery.main_tests()]  # the budget differs for the slow tests
    with pytest.raises(RngcheckError) as caught:
        restore(unbudgeted, states)
    assert "budget" in one_line_error(caught)
    assert [a.name for a in restore(FACTORIES, states)] == [f(start=0).name for f in FACTORIES]


def test_a_range_file_under_another_index_is_refused(tmp_path):
    ck = Checkpoint(tmp_path, identity())
    ck.save(0, STATES[0])
    replace_range(tmp_path, 2, (tmp_path / "range-000000.npz").read_bytes())
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path, identity()).done()
    assert "holds range 0, not 2" in one_line_error(caught)


@pytest.mark.parametrize("text", ["{not json", "", "\xff\xfe garbage", "[1, 2]", '{"format": "something-else"}',
                                  ('{"format": "rngcheck-checkpoint", "format_version": 1, "identity": {}, '
                                   '"finished": [0], "sha256": {}}')])
def test_a_manifest_that_is_not_ours_is_refused(tmp_path, text):
    (tmp_path / MANIFEST).write_bytes(text.encode("latin-1"))
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path, identity()).done()
    assert MANIFEST in one_line_error(caught) or "another run" in str(caught.value)
    assert (tmp_path / MANIFEST).read_bytes() == text.encode("latin-1")


def test_a_manifest_with_a_bad_finished_list_is_refused(tmp_path):
    Checkpoint(tmp_path, identity()).save(0, STATES[0])
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    manifest["finished"] = ["../../etc/passwd"]
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path, identity())
    assert "damaged" in one_line_error(caught)


def test_a_directory_of_other_files_is_not_taken_over(tmp_path):
    (tmp_path / "thesis.tex").write_text("precious")
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path, identity())
    assert "no manifest.json" in one_line_error(caught)
    assert os.listdir(tmp_path) == ["thesis.tex"]


def test_allow_pickle_is_never_needed(tmp_path, monkeypatch):
    calls = []
    real_load = np.load

    def load(*args, **kwargs):
        calls.append(kwargs.get("allow_pickle"))
        return real_load(*args, **kwargs)

    ck = Checkpoint(tmp_path, identity())
    for index, states in STATES.items():
        ck.save(index, states)
    monkeypatch.setattr(np, "load", load)
    done = Checkpoint(tmp_path, identity()).done()
    assert calls == [False, False, False]
    for index, states in done.items():
        assert same(states, STATES[index])
        for value in (v for state in states for v in state.values()):
            assert not isinstance(value, np.ndarray) or not value.dtype.hasobject


def test_save_refuses_what_cannot_be_stored_plainly(tmp_path):
    ck = Checkpoint(tmp_path, identity())
    with pytest.raises(ValueError):
        ck.save(3, STATES[0])  # the plan has ranges 0..2
    with pytest.raises(ValueError):
        ck.save(0, [{"class": np.array([object()], dtype=object)}])
    with pytest.raises(ValueError):
        ck.save(0, [{"total": 1 << 70}])
    with pytest.raises(ValueError):
        ck.save(-1, STATES[0])
    assert ck.finished == [] and sorted(os.listdir(tmp_path)) == [MANIFEST]


def test_a_kill_during_a_save_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    ck = Checkpoint(tmp_path, identity())
    ck.save(0, STATES[0])
    real_replace = os.replace

    def killed(source, target):  # the process "dies" before the rename: the file is written, not in place
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_module.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        ck.save(1, STATES[1])
    monkeypatch.setattr(checkpoint_module.os, "replace", real_replace)
    assert sorted(os.listdir(tmp_path)) == ["finished.jsonl", MANIFEST, "range-000000.npz"]
    # a kill after the range file's rename but before the manifest's: the file is not counted
    (tmp_path / "range-000001.npz").write_bytes(b"half of something")
    (tmp_path / ".partial-abc123").write_bytes(b"left by a kill")
    resumed = Checkpoint(tmp_path, identity())
    assert resumed.finished == [0] and list(resumed.done()) == [0]
    assert ".partial-abc123" not in os.listdir(tmp_path)
    resumed.save(1, STATES[1])
    assert same(Checkpoint(tmp_path, identity()).done()[1], STATES[1])


def test_identity_must_be_json(tmp_path):
    with pytest.raises((TypeError, ValueError)):
        Checkpoint(tmp_path, {"source": object()})
    with pytest.raises(ValueError):
        Checkpoint(tmp_path, {"bytes": float("nan")})


# ----------------------------------------------------------------------------------------
# Inter-stream pairs are seekable: a range read through at() is the range of a serial read.
# ----------------------------------------------------------------------------------------

def xor_pair(source, kind):
    return XorSource(source.at(0), source.neighbour(kind).at(0), kind)


@pytest.mark.parametrize("kind", sorted(NEIGHBOURS))
def test_xor_source_at_equals_the_serial_read(kind):
    source = philox_source(123)
    serial = xor_pair(source, kind).read(20000)
    pair = xor_pair(source, kind)
    assert pair.seekable and pair.fork_safe
    for start, count in ((0, 100), (1, 7), (4, 4096), (4097, 3000), (12345, 7655)):
        assert (pair.at(start).read(count) == serial[start:start + count]).all()
    pair.read(500)  # at() is absolute, whatever has been read
    assert pair.position == 500
    assert (pair.at(10).read(10) == serial[10:20]).all()
    assert pair.position == 500 and (pair.read(10) == serial[500:510]).all()
    assert (pair.at(300).at(9000).read(50) == serial[9000:9050]).all()


def test_xor_source_of_a_backend_stream_is_seekable():
    from rngcheck.backends import load
    from rngcheck.stats.streams import BackendSource
    source = BackendSource(load("numpy"), key=9, tensor_words=1000)
    serial = xor_pair(source, "counter_hi+1").read(6000)
    assert (xor_pair(philox_source(9), "counter_hi+1").read(6000) == serial).all()
    assert (xor_pair(source, "counter_hi+1").at(2501).read(3000) == serial[2501:5501]).all()


def test_an_inter_stream_group_cut_into_ranges_equals_one_pass():
    """The xor group measured range by range (as the main stream is sharded) and merged in
    order gives the results of one serial pass."""
    pair = xor_pair(philox_source(55), "key+1")
    factories = battery.interstream_tests()
    words = 3 * RANGE + 999
    serial, _ = battery.feed(xor_pair(philox_source(55), "key+1"), factories, words)
    ranges = battery.balanced_ranges(factories, words, 4, align=1 << 15)
    assert len(ranges) > 1
    parts = [battery.feed(pair.at(start), factories, count, start=start)[0] for start, count in ranges]
    merged = parts[0]
    for other in parts[1:]:
        for acc, piece in zip(merged, other):
            acc.merge(piece)
    assert canonical(merged) == canonical(serial)


def test_xor_source_of_an_unseekable_stream_says_so():
    class Once(Source):
        def read(self, count):
            return np.zeros(count, np.uint32)

    pair = XorSource(Once(), philox_source(1), "key+1")
    assert not pair.seekable
    with pytest.raises(RngcheckError) as caught:
        pair.at(5)
    assert "offset" in str(caught.value)


def test_save_appends_to_the_journal_and_close_folds_it_into_the_manifest(tmp_path):
    ck = Checkpoint(tmp_path, identity())
    manifest = (tmp_path / MANIFEST).read_bytes()
    for index in (2, 0):
        ck.save(index, STATES[index])
    assert (tmp_path / MANIFEST).read_bytes() == manifest  # not rewritten per range
    lines = (tmp_path / "finished.jsonl").read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == [2, 0]
    ck.close()
    assert not (tmp_path / "finished.jsonl").exists()
    assert json.loads((tmp_path / MANIFEST).read_text())["finished"] == [0, 2]
    with Checkpoint(tmp_path, identity()) as again:
        again.save(1, STATES[1])
    assert json.loads((tmp_path / MANIFEST).read_text())["finished"] == [0, 1, 2]
    assert same(Checkpoint(tmp_path, identity()).done(), STATES)


def test_a_journal_line_cut_by_a_kill_does_not_count(tmp_path):
    ck = Checkpoint(tmp_path, identity())
    ck.save(0, STATES[0])
    ck.save(1, STATES[1])
    journal = tmp_path / "finished.jsonl"
    journal.write_bytes(journal.read_bytes()[:-20])  # the second line cut short
    resumed = Checkpoint(tmp_path, identity())
    assert resumed.finished == [0] and not journal.exists()
    assert json.loads((tmp_path / MANIFEST).read_text())["finished"] == [0]


def test_a_damaged_journal_line_before_the_last_is_refused(tmp_path):
    ck = Checkpoint(tmp_path, identity())
    ck.save(0, STATES[0])
    ck.save(1, STATES[1])
    journal = tmp_path / "finished.jsonl"
    journal.write_bytes(b"garbage\n" + journal.read_bytes())
    with pytest.raises(RngcheckError) as caught:
        Checkpoint(tmp_path, identity())
    assert "finished.jsonl line 1" in one_line_error(caught)


def test_compressed_files_read_back_the_same(tmp_path):
    from rngcheck.stats import knuth
    acc = knuth.Frequency16(start=0)
    acc.update(WORDS[:acc.sample_words])  # one whole sample: 65536 counts, no fragment
    states = [acc.state()]
    plain = Checkpoint(tmp_path / "plain", identity())
    packed = Checkpoint(tmp_path / "packed", identity(), compress=True)
    plain.save(0, states)
    packed.save(0, states)
    sizes = [(tmp_path / d / "range-000000.npz").stat().st_size for d in ("packed", "plain")]
    assert sizes[0] * 3 < sizes[1]
    back = Checkpoint(tmp_path / "packed", identity()).done()[0]
    assert same(back, states)
    assert canonical(restore([knuth.Frequency16], back)) == canonical([acc])


def test_threads_save_ranges_at_once(tmp_path):
    from concurrent.futures import ThreadPoolExecutor
    ck = Checkpoint(tmp_path, identity(plan=[[i, 1] for i in range(24)]))
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(lambda i: ck.save(i, STATES[i % 3]), range(24)))
    ck.close()
    done = Checkpoint(tmp_path, identity(plan=[[i, 1] for i in range(24)])).done()
    assert sorted(done) == list(range(24)) and all(same(done[i], STATES[i % 3]) for i in done)


def test_a_failed_write_is_one_line(tmp_path, monkeypatch):
    ck = Checkpoint(tmp_path, identity())

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint_module.tempfile, "mkstemp", full)
    with pytest.raises(RngcheckError) as caught:
        ck.save(0, STATES[0])
    assert "range-000000.npz" in one_line_error(caught) and "No space left" in str(caught.value)
    assert ck.finished == []


CHILD = """
import json, sys
from rngcheck.stats import knuth
from rngcheck.stats.checkpoint import Checkpoint
from rngcheck.stats.streams import philox_source
acc = knuth.Frequency16(start=0)
acc.update(philox_source(77).read(acc.sample_words + 1000))  # a sample and a fragment
ck = Checkpoint(sys.argv[1], json.load(open(sys.argv[2])))
index = 0
while True:
    ck.save(index, [acc.state()])
    index += 1
"""


def test_a_sigkilled_writer_leaves_a_checkpoint_that_resumes(tmp_path):
    """A real SIGKILL at an arbitrary moment of a run of saves: every range the reopened
    checkpoint counts as finished reads back whole."""
    import signal
    import subprocess
    import sys
    import time

    from rngcheck.stats import knuth
    plan_identity = identity(plan=[[i, 1] for i in range(100000)])
    (tmp_path / "identity.json").write_text(json.dumps(plan_identity))
    acc = knuth.Frequency16(start=0)
    acc.update(philox_source(77).read(acc.sample_words + 1000))
    want = [acc.state()]
    for attempt in range(3):
        directory = tmp_path / f"ck{attempt}"
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(directory), str(tmp_path / "identity.json")])
        journal = directory / "finished.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            if journal.exists() and journal.read_bytes().count(b"\n") >= 3 + 2 * attempt:
                break
            time.sleep(0.005)
        time.sleep(0.003 * attempt)  # a different moment of the save each time
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL
        resumed = Checkpoint(directory, plan_identity)
        done = resumed.done()
        assert len(done) >= 3 + 2 * attempt and sorted(done) == list(range(len(done)))
        assert all(same(states, want) for states in done.values())
        assert not [n for n in os.listdir(directory) if n.startswith(".partial-")]
        assert restore([knuth.Frequency16], done[0])[0].result() == acc.result()
