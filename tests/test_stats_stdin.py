"""Standard input read like a file (streams.StdinSpool): cut into ranges read by two processes,
the same results as the file, the trailing bytes reported, a tee copy of every byte."""

import json
import os
import subprocess
import sys

import numpy as np

from rngcheck.stats.streams import philox_source

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = """
import json, sys
from rngcheck.stats import battery
from rngcheck.stats.streams import RawSource
source = RawSource(sys.argv[1])
if sys.argv[1] == "-" and len(sys.argv) > 2:
    tee = open(sys.argv[2], "wb")
    source.tee = tee
doc = battery.run(source, tier="smoke", nbytes=40 << 20, workers=2)
if sys.argv[1] == "-" and len(sys.argv) > 2:
    source.close()
    tee.close()
results = [(e["test"], e["level"], e["p_value"]) for e in doc["results"]]
print(json.dumps({"message": doc["message"], "results": results}))
"""


def run(path, data=None, tee=None):
    out = subprocess.run([sys.executable, "-c", SCRIPT, path] + ([tee] if tee else []), input=data,
                         capture_output=True, cwd=REPO, env={**os.environ, "PYTHONPATH": REPO}, timeout=600)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    return json.loads(out.stdout.decode().strip().splitlines()[-1])


def test_stdin_gives_the_files_results_in_two_processes(tmp_path):
    data = philox_source(9).read(9 << 20).astype("<u4").tobytes() + b"\x05\x06"  # 36 MiB: split in ranges
    path = tmp_path / "stream.bin"
    path.write_bytes(data)
    from_file = run(str(path))
    from_stdin = run("-", data, str(tmp_path / "copy.bin"))
    assert from_stdin["results"] == from_file["results"]
    assert "plus 2 trailing bytes ignored" in from_stdin["message"]
    assert from_stdin["message"] == from_file["message"]
    copy = (tmp_path / "copy.bin").read_bytes()
    assert copy == data  # the stream ended before the read-ahead: every byte, once


def test_the_spool_reads_no_further_than_asked_plus_the_read_ahead():
    from rngcheck.stats.streams import StdinSpool

    class Endless:
        def __init__(self):
            self.given = 0

        def readinto(self, view):
            view[:] = b"\x01" * len(view)
            self.given += len(view)
            return len(view)

    stream = Endless()
    spool = StdinSpool(stream)
    spool.start()
    data = np.empty(1000, dtype=np.uint8)
    assert spool.read_into(data, 10 << 20) == 1000 and (data == 1).all()
    import time
    time.sleep(0.3)
    assert stream.given <= (10 << 20) + 1000 + spool.READ_AHEAD + spool.BLOCK
    spool.close()
