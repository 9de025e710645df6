"""The ``triton`` backend: Triton's ``tl.rand`` / ``tl.randn`` (numbers) and its Philox core (generator blocks),
run by Triton's interpreter (``TRITON_INTERPRET=1``: the kernels run on the CPU, no GPU and no compiler).

Written against Triton 3.9.0 (triton/language/random.py). Its generator is Philox4x32-10, one block an
element: ``tl.randint4x(seed, offset)`` is Philox4x32-10 of counter (offset mod 2^32, offset >> 32, 0, 0)
(the high word only for an int64 offset) under key (seed mod 2^32, seed >> 32); ``tl.randint`` is its lane 0.
(triton-lang/triton#6832 moved int64 offsets from Philox4x64 to this: Triton 3.3.1 gives Philox4x64-10 of
(offset, 0, 0, 0) under key (seed, 0), its words' low 32 bits, so an int64 offset gives other bits there; measured,
docs/library-findings.md.) ``tl.rand`` folds lane 0 as int32 (``x < 0 ? ~x : x``) and scales it by the float32
nearest 4.6566127342e-10 (just under 2^-31, so the largest, 2^31 - 1 rounded to 2^31, gives 1 - 2^-24, never 1);
``tl.randn`` is Box-Muller of lanes 0 and 1 made uniform that way (u1 at least 1e-7), the cosine only.
rngcheck.numbers.triton models each of these, and tests/test_triton_backend.py checks the library against it.

1. Generator blocks (the known-answers axis): ``philox4x32`` at any round count, any counter and key, through
   ``triton.language.random.philox`` (the function under ``randint4x``; the key is its 64-bit seed).
2. Numbers: the convention ``triton`` (the library's own, judged by the property axis only: one Philox block an
   element, lane 0 for a uniform, is not the numbers layer's word stream). Kinds: uniform float32 in [0, 1)
   (``tl.rand``; Triton has no range) and normal float32 (``tl.randn``). Triton has no integer range.
3. Seed and position (the property axis's rule 1): the seed is state word 4 (word 5 zero); position c is the
   c-th of consecutive draws of the request: a draw of n numbers at position c reads offsets c*n .. c*n + n - 1,
   as a kernel that moves its offset by what it drew does.
4. Device: ``device=interpreter`` (the default) as above; ``device=gpu`` compiles the same kernels for the CUDA
   device (TRITON_INTERPRET left unset; torch tensors on ``cuda``). Without a CUDA device it is unavailable, with
   the reason in one line. Not run on a GPU yet (issue 41: scripts/gpu-check.sh runs it).
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np

from .. import numbers
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable
from . import Backend, placement

INSTALL_HINT = "triton is not installed: pip install rngcheck[triton]"
WRITTEN_AGAINST = "3.9.0"
CONVENTION = "triton"
KINDS = {numbers.UNIFORM: ("float32",), numbers.NORMAL: ("float32",)}
GENERATOR = "philox4x32"
MAX_NUMBERS = 1 << 20
MAX_POSITION = (1 << 32) - 1   # a position is an offset: every counter word 0 is reachable
DEVICES = ("interpreter", "gpu")
GPU_BLOCK = 1 << 10     # elements a compiled program handles (a register tile, not the interpreter's loop)
MAX_BLOCK = 1 << 14     # elements a Triton program handles (the interpreter runs programs one by one)


class TritonBackend(Backend):
    """Triton's Philox and its uniforms and normals, in Triton's interpreter (module doc rules 1-3)."""

    name = "triton"
    validates = False
    conventions = (CONVENTION,)
    generators = (GENERATOR,)

    def __init__(self, device: str = "interpreter") -> None:
        if device not in DEVICES:
            raise BackendSpecError(f"triton: device must be one of {', '.join(DEVICES)}, got {device!r}")
        if importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None:
            raise BackendUnavailable(INSTALL_HINT)
        self.device = device
        self.max_block = GPU_BLOCK if device == "gpu" else MAX_BLOCK
        if device == "gpu":
            self._start_gpu()
            return
        os.environ.setdefault("TRITON_INTERPRET", "1")
        if os.environ["TRITON_INTERPRET"] != "1":
            raise BackendUnavailable(f"triton: TRITON_INTERPRET={os.environ['TRITON_INTERPRET']} is set; the "
                                     "triton backend runs Triton's interpreter (TRITON_INTERPRET=1)")
        import torch
        import triton

        from . import triton_kernels  # after TRITON_INTERPRET is set: its kernels are made on import

        self.torch, self.triton = torch, triton
        self.kernels = triton_kernels.KERNELS
        if any(type(kernel).__name__ != "InterpretedFunction" for kernel in self.kernels.values()):
            raise BackendUnavailable("triton: its kernels are not interpreted (TRITON_INTERPRET=1 was not read); "
                                     "run the triton backend in its own process (rngcheck run does)")

    def _start_gpu(self) -> None:
        """Rule 4: the kernels compiled for the CUDA device (TRITON_INTERPRET unset)."""
        if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
            raise BackendUnavailable(f"triton: device=gpu needs TRITON_INTERPRET unset, not "
                                     f"{os.environ['TRITON_INTERPRET']!r}")
        import torch

        if not torch.cuda.is_available():
            raise BackendUnavailable(f"triton: device=gpu needs a CUDA device: torch {torch.__version__} sees none "
                                     "(torch.cuda.is_available() is False)")
        import triton

        from . import triton_kernels

        self.torch, self.triton = torch, triton
        self.kernels = triton_kernels.KERNELS
        if any(type(kernel).__name__ == "InterpretedFunction" for kernel in self.kernels.values()):
            raise BackendUnavailable("triton: device=gpu, but its kernels were made interpreted (TRITON_INTERPRET=1 "
                                     "was read first); run the backend in its own process (rngcheck run does)")

    def _tensor(self, tensor):
        return tensor.to("cuda") if self.device == "gpu" else tensor

    def _host(self, tensor):
        return tensor.cpu().numpy() if self.device == "gpu" else tensor.numpy()

    def describe(self) -> dict[str, str]:
        version = self.triton.__version__
        return {"implementation": "tl.rand / tl.randn, triton.language.random.philox (Philox4x32-10)",
                "generator": "philox4x32-10, one block an element: counter (offset lo, offset hi, 0, 0), key seed",
                "device": ("Triton interpreter (TRITON_INTERPRET=1, CPU)" if self.device == "interpreter"
                           else f"gpu ({self.torch.cuda.get_device_name()})"), "written_against": WRITTEN_AGAINST,
                "version": f"triton {version}", "triton": version, "torch": str(self.torch.__version__)}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        raise NotApplicable("Triton draws one Philox block an element (its offset), not DirectML's word stream")

    def generator_blocks(self, generator, rounds, counters, key):
        """Rule 1 of the module doc: one philox4x32-``rounds`` block per row of ``counters``."""
        self.generator_request(generator, counters)
        if len(key) != 2:
            raise NotApplicable(f"philox4x32 takes a key of 2 words, not {len(key)}")
        rows = np.ascontiguousarray(counters, dtype=np.uint32)
        blocks = rows.shape[0]
        if not blocks:
            return np.empty((0, 4), dtype=np.uint32)
        torch = self.torch
        given = self._tensor(torch.from_numpy(rows.view(np.int32).copy()))
        out = torch.zeros_like(given)
        seed = int(key[0]) | int(key[1]) << 32
        block = _block(blocks, self.max_block)
        self.kernels["philox"][(self.triton.cdiv(blocks, block),)](given, out, seed, blocks, ROUNDS=int(rounds),
                                                                   BLOCK=block)
        return self._host(out).view(np.uint32).reshape(blocks, 4).copy()

    def random_numbers(self, request: dict, state):
        """Rules 2-3 of the module doc."""
        parsed = self.numbers_request(request, kinds=KINDS, max_numbers=MAX_NUMBERS, ranged=False)  # tl.rand: [0, 1)
        seed, position = placement.seed_and_position(state, "triton", MAX_POSITION)
        return self.draw(parsed.kind, seed, position * parsed.count, parsed.count)

    def draw(self, kind: str, seed: int, offset: int, count: int) -> np.ndarray:
        """``count`` float32 numbers of ``kind`` (uniform: tl.rand, normal: tl.randn) at offsets offset.."""
        out = self._tensor(self.torch.zeros(count, dtype=self.torch.float32))
        block = _block(count, self.max_block)
        self.kernels[kind][(self.triton.cdiv(count, block),)](out, seed, offset, count, BLOCK=block)
        return self._host(out).copy()

    def words(self, seed: int, offset: int, count: int) -> np.ndarray:
        """``tl.randint4x(seed, offset..)``: (count, 4) uint32, one Philox block an offset."""
        out = self._tensor(self.torch.zeros(count * 4, dtype=self.torch.int32))
        block = _block(count, self.max_block)
        self.kernels["randint4x"][(self.triton.cdiv(count, block),)](out, seed, offset, count, BLOCK=block)
        return self._host(out).view(np.uint32).reshape(count, 4).copy()


def _block(count: int, most: int = MAX_BLOCK) -> int:
    return min(most, 1 << max(0, (count - 1).bit_length()))
