"""The ``iree`` backend: StableHLO's rng_bit_generator compiled by IREE for the CPU (llvm-cpu).

The same hand-written module as the xla backend (rngcheck.backends.stablehlo_text), compiled by
``iree.compiler`` (PyPI iree-base-compiler, StableHLO input, llvm-cpu target, generic CPU) and run by
``iree.runtime`` (iree-base-runtime, the local-task driver). IREE lowers the op itself
(compiler/plugins/input/StableHLO: StablehloToLinalgRandom.cpp), a variant of its own: the
divergences from XLA's are named by rngcheck.conformance.rng_bit_generator (docs/adding-an-operator.md).

This backend implements only the StableHLO operator: DirectML's is not applicable on it.
"""

from __future__ import annotations

import numpy as np

from .. import stablehlo
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendUnavailable, NotApplicable, Rejected, one_line
from . import Backend
from .stablehlo_text import Compiled, state_of_words, state_words

COMPILE_FLAGS = ("--iree-llvmcpu-target-cpu=generic",)   # any x86-64 (and silences the target warning)


class IreeBackend(Backend):
    """stablehlo.rng_bit_generator through IREE (llvm-cpu), on the CPU."""

    name = "iree"
    validates = True
    operators = ("stablehlo",)

    def __init__(self):
        try:
            import iree.compiler as compiler
            import iree.runtime as runtime
        except ImportError:
            raise BackendUnavailable("IREE is not installed: pip install rngcheck[iree]") from None
        self._compiler, self._runtime = compiler, runtime
        self._config = runtime.Config("local-task")
        self._functions = Compiled(self._compile)

    def describe(self) -> dict[str, str]:
        from importlib.metadata import version
        compiler, runtime = version("iree-base-compiler"), version("iree-base-runtime")
        return {"implementation": "IREE rng_bit_generator (StableHLO input, llvm-cpu target, local-task driver)",
                "version": f"iree {compiler}", "iree-base-compiler": compiler, "iree-base-runtime": runtime,
                "device": "cpu: llvm-cpu (generic)"}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        raise NotApplicable("the iree backend runs stablehlo.rng_bit_generator only")

    def _compile(self, text: str):
        try:
            binary = self._compiler.compile_str(text, target_backends=["llvm-cpu"], input_type="stablehlo",
                                                extra_args=list(COMPILE_FLAGS))
        except Exception as error:
            raise Rejected(f"IREE refuses it: {one_line(error)[:300]}") from None
        context = self._runtime.SystemContext(config=self._config)
        context.add_vm_module(self._runtime.VmModule.copy_buffer(context.instance, binary))
        return context.modules.rngcheck_rng_bit_generator["main"]

    def rng_bit_generator(self, algorithm: str, state: np.ndarray, shape: tuple[int, ...], dtype: str):
        state = np.asarray(state, dtype=np.uint64).reshape(-1)
        if dtype not in stablehlo.ELEMENT_TYPES:
            raise NotApplicable(f"element type {dtype!r} is not one rngcheck passes to IREE")
        main = self._functions.program(algorithm, state.size, tuple(shape), dtype)
        new_words, bits = main(state_words(state))
        output = np.asarray(bits.to_host() if hasattr(bits, "to_host") else bits).view(np.dtype(dtype))
        return state_of_words(np.asarray(new_words.to_host() if hasattr(new_words, "to_host") else new_words)), \
            output.reshape(tuple(shape))
