"""The triton backend's kernels (rngcheck.backends.triton_backend): imported once TRITON_INTERPRET=1 is set, so
that ``triton.jit`` makes them interpreted (Triton's interpreter runs a kernel from its source, so they live at a
module's top level, not in a closure)."""

from __future__ import annotations

import triton
import triton.language as tl
from triton.language.random import philox

from .. import numbers


@triton.jit
def uniform(out, seed, offset, n, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + at, tl.rand(seed, at + offset), mask=at < n)


@triton.jit
def normal(out, seed, offset, n, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + at, tl.randn(seed, at + offset), mask=at < n)


@triton.jit
def randint4x(out, seed, offset, n, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = at < n
    w0, w1, w2, w3 = tl.randint4x(seed, at + offset)
    tl.store(out + at * 4, w0, mask=inside)
    tl.store(out + at * 4 + 1, w1, mask=inside)
    tl.store(out + at * 4 + 2, w2, mask=inside)
    tl.store(out + at * 4 + 3, w3, mask=inside)


@triton.jit
def blocks(given, out, seed, n, ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = at < n
    c0 = tl.load(given + at * 4, mask=inside).to(tl.uint32, bitcast=True)
    c1 = tl.load(given + at * 4 + 1, mask=inside).to(tl.uint32, bitcast=True)
    c2 = tl.load(given + at * 4 + 2, mask=inside).to(tl.uint32, bitcast=True)
    c3 = tl.load(given + at * 4 + 3, mask=inside).to(tl.uint32, bitcast=True)
    w0, w1, w2, w3 = philox(seed, c0, c1, c2, c3, ROUNDS)
    tl.store(out + at * 4, w0.to(tl.int32, bitcast=True), mask=inside)
    tl.store(out + at * 4 + 1, w1.to(tl.int32, bitcast=True), mask=inside)
    tl.store(out + at * 4 + 2, w2.to(tl.int32, bitcast=True), mask=inside)
    tl.store(out + at * 4 + 3, w3.to(tl.int32, bitcast=True), mask=inside)


KERNELS = {numbers.UNIFORM: uniform, numbers.NORMAL: normal, "randint4x": randint4x, "philox": blocks}
