"""rngcheck.numbers.pytorch_cuda: the grid model's internal consistency (no GPU; the model is unverified until
scripts/gpu-check.sh compares it with a GPU's torch.rand)."""

from __future__ import annotations

import numpy as np
import pytest

from rngcheck import philox
from rngcheck.numbers import curand
from rngcheck.numbers import pytorch_cuda as model


@pytest.mark.parametrize("grid_rule", model.GRID_RULES)
def test_below_one_wave_the_sm_count_does_not_matter(grid_rule):
    n = model.one_wave(20, grid_rule=grid_rule)          # the smallest card's wave bounds them all
    values = [model.rand(n, 1234, sms, grid_rule=grid_rule)[0] for sms in (20, 108, 132)]
    assert np.array_equal(values[0], values[1]) and np.array_equal(values[0], values[2])


@pytest.mark.parametrize("grid_rule", model.GRID_RULES)
def test_above_one_wave_each_sm_count_is_its_own_stream(grid_rule):
    n = 2 * model.one_wave(132, grid_rule=grid_rule) + 17
    a, b = model.rand(n, 7, 132, grid_rule=grid_rule)[0], model.rand(n, 7, 114, grid_rule=grid_rule)[0]
    wave = model.execution_policy(n, 114, grid_rule=grid_rule).threads
    assert np.array_equal(a[:wave], b[:wave])             # lane 0 of the first threads: the same blocks
    assert not np.array_equal(a, b)
    assert np.array_equal(np.sort(a[:wave]), np.sort(b[:wave]))


def test_below_one_wave_element_e_is_lane_0_of_subsequence_e():
    n, seed, offset = 1000, 0x1_2345_6789, 8
    blocks = philox.philox4x32(np.full(n, offset // 4, np.uint32), np.zeros(n, np.uint32),
                               np.arange(n, dtype=np.uint32), np.zeros(n, np.uint32), seed & 0xFFFFFFFF, seed >> 32)
    assert np.array_equal(model.words(n, seed, 132, offset=offset), blocks[:, 0])


def test_every_word_read_once_and_the_offset_covers_the_trips():
    n, sms = 3 * model.one_wave(4) + 99, 4
    policy = model.execution_policy(n, sms)
    idx, trip, lane = model.element_map(n, policy)
    assert len(set(zip(idx.tolist(), trip.tolist(), lane.tolist()))) == n
    assert idx.max() < policy.threads and lane.max() < model.UNROLL
    assert trip.max() * model.ENGINE_CALLS < policy.counter_offset


def test_consecutive_calls_move_the_offset_and_do_not_repeat():
    first, offset = model.rand(4096, 3, 132)
    second, offset2 = model.rand(4096, 3, 132, offset=offset)
    assert offset == model.execution_policy(4096, 132).counter_offset and offset2 == 2 * offset
    assert not np.array_equal(first, second)


def test_values_are_curand_uniforms_folded_into_0_1():
    values = model.rand(5000, 11, 132)[0]
    expected = curand.uniform_float(model.words(5000, 11, 132))
    expected[expected == 1] = 0
    assert values.dtype == np.float32 and np.array_equal(values, expected)
    assert values.min() >= 0 and values.max() < 1


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        model.execution_policy(0, 132)
    with pytest.raises(ValueError):
        model.execution_policy(10, 132, grid_rule="other")
    with pytest.raises(ValueError):
        model.words(10, 0, 132, offset=2)
