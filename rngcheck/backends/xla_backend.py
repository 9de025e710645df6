"""The ``xla`` backend: StableHLO's rng_bit_generator compiled by XLA (jaxlib's CPU client).

A hand-written StableHLO module (rngcheck.backends.stablehlo_text) is compiled with jaxlib's PJRT CPU
client (``compile_and_load``) and run: every algorithm (DEFAULT, THREE_FRY, PHILOX) and both state
sizes, which the public ``jax.lax.rng_bit_generator`` cannot all reach (it takes a 2-word state).
XLA's expander (xla/service/rng_bit_generator_expander.cc) and prng.cc are rngcheck's reference
variant (rngcheck.stablehlo). A program XLA refuses (THREE_FRY with u64[3], say) is Rejected.

This backend implements only the StableHLO operator: DirectML's is not applicable on it.
"""

from __future__ import annotations

import numpy as np

from .. import stablehlo
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable, Rejected, one_line
from . import Backend
from .stablehlo_text import Compiled, state_of_words, state_words


class XlaBackend(Backend):
    """stablehlo.rng_bit_generator through XLA (jaxlib), on the CPU."""

    name = "xla"
    validates = True
    operators = ("stablehlo",)

    def __init__(self, platform: str = "cpu"):
        try:
            import jax
            from jax._src import xla_bridge
            from jax._src.lib import xla_client
        except ImportError:
            raise BackendUnavailable("jax is not installed: pip install rngcheck[jax]") from None
        if platform != "cpu":
            raise BackendSpecError(f"xla option platform must be cpu, got {platform!r}")
        self._jax, self._client_module = jax, xla_client
        try:
            self._client = xla_bridge.get_backend(platform)
            self._device = self._client.devices()[0]
        except Exception as error:   # private jaxlib names moved: say so, do not crash
            raise BackendUnavailable(f"jax {jax.__version__}: XLA's {platform} client is not reachable "
                                     f"({one_line(error)})") from None
        self._executables = Compiled(self._compile)

    def describe(self) -> dict[str, str]:
        import jaxlib
        return {"implementation": "XLA rng_bit_generator (a StableHLO module compiled by jaxlib's PJRT CPU client)",
                "version": f"jaxlib {jaxlib.__version__}", "jax": self._jax.__version__,
                "jaxlib": jaxlib.__version__, "device": f"{self._device.platform}: {self._device.device_kind}"}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        raise NotApplicable("the xla backend runs stablehlo.rng_bit_generator only")

    def _compile(self, text: str):
        try:
            return self._client.compile_and_load(
                text, self._client_module.DeviceList((self._device,)), self._client_module.CompileOptions())
        except Exception as error:
            raise Rejected(f"XLA refuses it: {one_line(error)[:300]}") from None

    def rng_bit_generator(self, algorithm: str, state: np.ndarray, shape: tuple[int, ...], dtype: str):
        state = np.asarray(state, dtype=np.uint64).reshape(-1)
        if dtype not in stablehlo.ELEMENT_TYPES:
            raise NotApplicable(f"element type {dtype!r} is not one rngcheck passes to XLA")
        executable = self._executables.program(algorithm, state.size, tuple(shape), dtype)
        given = self._jax.device_put(state_words(state), self._device)
        new_words, bits = executable.execute([given])
        output = np.asarray(bits).view(np.dtype(dtype)).reshape(tuple(shape))
        return state_of_words(np.asarray(new_words)), output
