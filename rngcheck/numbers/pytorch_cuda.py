"""A numpy model of PyTorch CUDA's ``torch.rand`` (float32): which Philox word each element reads, as a
function of the launch grid (pytorch/pytorch#196613: the values depend on the GPU's number of SMs).

UNVERIFIED: nothing here has been compared with a GPU yet. ``scripts/gpu-check.sh`` compares it with the
lent machine's ``torch.rand`` (step ``torch-grid``) and writes the comparison to ``$OUT/torch-grid.json``;
until a kept document (docs/measurements/) shows a match, this is a reading of the source, not a finding.

Facts read in PyTorch's aten/src/ATen/native/cuda/DistributionTemplates.h (several versions; they differ in
one place, the grid's first bound, which is therefore a parameter, ``grid_rule``):

  P1 calc_execution_policy: block_size = 256 (block_size_bound); blocks_per_sm = maxThreadsPerMultiProcessor
     / block_size (2048 / 256 = 8 on sm_80 and sm_90); grid = min(SMs * blocks_per_sm, B) where B is
     ceil(n / block_size) in the versions read (``grid_rule="block"``) or ceil(n / (block_size * unroll)) in
     others (``grid_rule="block_unroll"``, as issue 41 states it).
  P2 counter_offset = ((n - 1) // (block_size * grid * unroll) + 1) * 4 (curand4_engine_calls): the Philox
     offset the generator advances by for this call (philox_cuda_state(counter_offset)), in 32-bit values.
  P3 distribution_elementwise_grid_stride_kernel: thread idx = blockIdx.x * blockDim.x + threadIdx.x calls
     curand_init(seed, idx, offset) and then, per trip of the grid-stride loop, curand_uniform4 once (unroll
     = 4 for float); element li = linear_index + blockDim.x * gridDim.x * ii takes lane ii of that call,
     where linear_index = idx + trip * blockDim.x * gridDim.x * unroll.
  P4 cuRAND (curand_kernel.h): curand_init(seed, subsequence, offset) sets the Philox4x32-10 key to (seed
     low, seed high), the counter's high 64 bits to the subsequence and its low 64 bits to offset / 4 (the
     offset is a multiple of 4 here, P2); each curand_uniform4 is one block, the counter's low half + 1.
  P5 conversion: curand_uniform (word * 2^-32 + 2^-33 in float32, rngcheck.numbers.curand rule 1, in (0,
     1]); uniform_kernel computes rand * (to - from) + from and maps a value equal to ``to`` back to
     ``from`` (pytorch#16706), so torch.rand is in [0, 1).
  P6 torch.manual_seed(s) sets the CUDA generator's seed to s and its offset to 0; each call starts at the
     generator's offset and moves it by P2's counter_offset.

So below one wave (B <= SMs * blocks_per_sm) the grid does not depend on the SM count and element e is lane 0
of block (offset / 4, 0, e) (subsequence e): the same on every card. Above it, the grid is SMs *
blocks_per_sm, and the elements past the first grid * 256 take lanes 1-3 and later trips: each SM count is
its own stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import philox
from .curand import uniform_float

BLOCK_SIZE = 256            # P1 block_size_bound
UNROLL = 4                  # P3 curand4_engine_calls: curand_uniform4, four floats a call
ENGINE_CALLS = 4            # P2 the offset's unit per trip
MAX_THREADS_PER_SM = 2048   # sm_80 / sm_90 (A100, H100, H200): cudaDeviceProp.maxThreadsPerMultiProcessor
GRID_RULES = ("block", "block_unroll")
MASK32 = 0xFFFFFFFF


@dataclass(frozen=True)
class Policy:
    """One launch (P1, P2): the grid, the block size, and the generator's offset advance."""

    grid: int
    block_size: int
    counter_offset: int

    @property
    def threads(self) -> int:
        return self.grid * self.block_size


def execution_policy(n: int, sms: int, *, max_threads_per_sm: int = MAX_THREADS_PER_SM,
                     block_size: int = BLOCK_SIZE, unroll: int = UNROLL, grid_rule: str = "block") -> Policy:
    """P1 and P2 for ``n`` elements on a device of ``sms`` multiprocessors."""
    if n < 1 or sms < 1:
        raise ValueError(f"need n >= 1 and sms >= 1, got n={n}, sms={sms}")
    if grid_rule not in GRID_RULES:
        raise ValueError(f"grid_rule must be one of {', '.join(GRID_RULES)}, got {grid_rule!r}")
    per_block = block_size if grid_rule == "block" else block_size * unroll
    wanted = -(-n // per_block)
    grid = min(sms * (max_threads_per_sm // block_size), wanted)
    counter_offset = ((n - 1) // (block_size * grid * unroll) + 1) * ENGINE_CALLS
    return Policy(grid=grid, block_size=block_size, counter_offset=counter_offset)


def one_wave(sms: int, *, max_threads_per_sm: int = MAX_THREADS_PER_SM, block_size: int = BLOCK_SIZE,
             unroll: int = UNROLL, grid_rule: str = "block") -> int:
    """The largest n whose grid does not depend on the SM count (P1's second bound not reached)."""
    per_block = block_size if grid_rule == "block" else block_size * unroll
    return sms * (max_threads_per_sm // block_size) * per_block


def element_map(n: int, policy: Policy, unroll: int = UNROLL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P3: for each element, (thread idx = subsequence, trip = counter block past the offset, lane ii)."""
    stride = policy.threads
    e = np.arange(n, dtype=np.int64)
    trip, rest = np.divmod(e, stride * unroll)
    lane, idx = np.divmod(rest, stride)
    return idx, trip, lane


def words(n: int, seed: int, sms: int, *, offset: int = 0, policy: Policy | None = None,
          **policy_options: Any) -> np.ndarray:
    """The uint32 Philox word each of ``n`` elements reads (P3, P4), at generator offset ``offset``."""
    if offset % ENGINE_CALLS:
        raise ValueError(f"PyTorch's CUDA offsets are multiples of {ENGINE_CALLS} (P2), got {offset}")
    policy = policy or execution_policy(n, sms, **policy_options)
    idx, trip, lane = element_map(n, policy)
    low = (offset // ENGINE_CALLS) + trip.astype(np.uint64)       # counter low 64 bits
    sub = idx.astype(np.uint64)                                   # counter high 64 bits
    blocks = philox.philox4x32((low & MASK32).astype(np.uint32), (low >> np.uint64(32)).astype(np.uint32),
                               (sub & MASK32).astype(np.uint32), (sub >> np.uint64(32)).astype(np.uint32),
                               seed & MASK32, (seed >> 32) & MASK32)
    picked: np.ndarray = blocks[np.arange(n), lane]
    return picked


def rand(n: int, seed: int, sms: int, *, offset: int = 0, **policy_options: Any) -> tuple[np.ndarray, int]:
    """``torch.manual_seed(seed)`` then ``torch.rand(n, device="cuda")`` at generator offset ``offset``
    (0 after manual_seed): the float32 values (P5) and the generator's next offset (P6)."""
    policy = execution_policy(n, sms, **policy_options)
    values = uniform_float(words(n, seed, sms, offset=offset, policy=policy))
    values = np.where(values == np.float32(1.0), np.float32(0.0), values).astype(np.float32)
    return values, offset + policy.counter_offset
