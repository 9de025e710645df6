"""Command-line values: each wrong one said in one line, each odd one handled (hardening round 3, item
22)."""

from __future__ import annotations

import os
import re
import time

import pytest

from probes import backend_file, one_line_error, rngcheck


def test_an_unknown_backend_option_is_named_in_one_line():
    result = rngcheck("run", "--backend", "directml:bogus=1", "--case", "kat", "--quiet")
    one_line_error(result, 2, "bogus", "adapter")
    assert "TypeError" not in result.stderr and "__init__" not in result.stderr


def test_a_directml_library_given_by_bare_name_is_loaded_from_that_file(tmp_path, monkeypatch):
    from rngcheck.backends.directml import loader, vkd3d

    (tmp_path / "libc.so.6").write_bytes(b"not a library")   # a bare name the loader would find elsewhere
    monkeypatch.chdir(tmp_path)
    path, _ = vkd3d.directml_path("libc.so.6")
    assert path.is_absolute() and path == tmp_path / "libc.so.6"
    assert loader._directml_candidates("libdirectml.so", "libc.so.6") == [str(tmp_path / "libc.so.6")]


@pytest.mark.parametrize("state", ["0,0,0,0,1,1_000", "0,0,0,0,1,\uff11", "0,0,0,0,1,\u0661"])
def test_state_words_are_ascii_integers(state):
    one_line_error(rngcheck("repro", "--backend", "numpy", "--state", state, "--sizes", "4"), 2, "--state")


def test_a_huge_stride_is_said_without_a_made_up_buffer():
    result = rngcheck("repro", "--backend", "numpy", "--state", "0,0,0,0,1,2", "--sizes", "2,2",
                      "--strides", "9223372036854775807,1")
    one_line_error(result, 2)
    assert not re.search(r"\d{16}", result.stderr), result.stderr


def test_a_run_leaves_no_hypothesis_folder_in_the_working_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env["RNGCHECK_CACHE"] = str(tmp_path / "cache")
    work = tmp_path / "work"
    work.mkdir()
    result = rngcheck("run", "--backend", "numpy", "--case", "property", "--quiet", cwd=work, env=env)
    assert result.returncode == 0, result.stderr
    assert not (work / ".hypothesis").exists() and list(work.iterdir()) == []


def test_repro_has_a_timeout(tmp_path):
    spec = backend_file(tmp_path, "HangsEveryCall")
    started = time.monotonic()
    result = rngcheck("repro", "--backend", spec, "--state", "0,0,0,0,1,2", "--sizes", "8", "--timeout", "2",
                      timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "timeout" in result.stdout and time.monotonic() - started < 90
