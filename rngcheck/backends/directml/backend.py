"""The ``directml`` backend: DirectML's own DML_RANDOM_GENERATOR, through ctypes.

Options: ``directml`` (the default adapter: DXGI adapter 0 on Windows, D3D12's default
under WSL, vkd3d's Vulkan device on Linux), ``directml:adapter=warp`` (the WARP software
adapter, Windows), or ``directml:adapter=N`` (DXGI adapter N); ``lib=`` the DirectML library:
a path, or on Linux a pinned build (``lib=0.2.5``, ``lib=0.2.0``; see bridge/chain.py), else
RNGCHECK_DIRECTML_DLL or the platform's default; ``d3d12=`` the folder of rngcheck's vkd3d
bridge on Linux (default: the set-up's cache); ``name=`` the backend's name in reports. On Linux
``lib=`` also takes a release of rngcheck.backends.directml.releases (``lib=1.9.1``: the
tensorflow-directml-plugin's build, fetched from PyPI into the cache once). A description of a
feature level above the device's maximum is not applicable (rngcheck.NotApplicable, with both
levels), never a failure. See rngcheck.backends.directml.loader.

What the backend decides itself, and why (everything else is DirectML's to accept or refuse
with E_INVALIDARG, which becomes rngcheck.Rejected):
  * descriptions a DML_BUFFER_TENSOR_DESC cannot express: strides whose count differs from
    the dimension count (one DimensionCount covers both arrays), negative sizes or strides
    and values beyond UINT32 (the arrays are UINT), element types without a
    DML_TENSOR_DATA_TYPE;
  * the requested feature level: below 3.0 the operator does not exist; at 3.x every tensor
    is 4-D and the states {1,1,1,6}. DirectML validates against the device's own (higher)
    level, so a 3.0 request on a newer DirectML is enforced here.
The layer that makes the native calls is injectable: ``DirectMLBackend(exports=..., abi=...)``
runs the same code over any provider of entry-point addresses, such as the tests' fake
layer (tests/directml_fake.py). Only Python code can pass one: the ``directml:`` spec's
options are text and load nothing but the real libraries.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ... import __version__
from ...description import FEATURE_LEVEL_3_0, FEATURE_LEVEL_4_0, RULES, Description
from ...errors import BackendSpecError, NotApplicable, Rejected
from .. import Backend
from . import dispatch, loader
from .bridge.cache import sha256_of
from .com import ABIS, Com

UINT_MAX = 0xFFFFFFFF


def _reject(rule: str, detail: str):
    raise Rejected(f"{rule}: {detail} ({RULES[rule]}; checked by the rngcheck DirectML backend)", rule=rule)


def _check_uint(values, what, rule_negative):
    for value in values:
        if int(value) < 0:
            _reject(rule_negative, f"{what} {list(values)} (DML_BUFFER_TENSOR_DESC holds UINT)")
        if int(value) > UINT_MAX:
            _reject("element-count", f"{what} {list(values)} exceed UINT32")


class DirectMLBackend(Backend):
    """DML_RANDOM_GENERATOR (Philox 4x32-10) executed by DirectML on a D3D12 adapter."""

    name = "directml"
    validates = True

    def __init__(self, adapter: str = "default", lib: str | None = None, d3d12: str | None = None,
                 name: str | None = None, *, exports=None, abi: str | None = None):
        adapter = str(adapter).strip().lower()
        if adapter not in ("default", "warp") and not adapter.isdigit():
            raise BackendSpecError(f"directml: adapter must be default, warp or an index, got {adapter!r}")
        if isinstance(exports, str) or isinstance(abi, str) and abi not in ABIS:
            # keyword-only, for Python callers (tests hand in a fake layer); a spec's text cannot name one
            raise BackendSpecError("directml: the options are adapter, lib, d3d12 and name "
                                   f"(abi= is one of {', '.join(ABIS)}; "
                                   "exports= takes a Python object, not spec text)")
        self.exports = exports if exports is not None else loader.load(lib, d3d12)
        if lib:                 # one run may hold several builds: name each after its library
            self.name = f"directml:lib={lib}"
        if name:                # the release matrix gives every Linux build one name (History, compare)
            self.name = str(name)
        self.com = Com(self.exports, abi)
        self.device = dispatch.Device(self.com, adapter)
        self.feature_level = self.device.feature_level

    def describe(self) -> dict[str, str]:
        info = {"implementation": "DirectML DML_OPERATOR_RANDOM_GENERATOR (Philox 4x32-10)"}
        info.update(self.device.info)
        adapter = getattr(self.exports, "adapter", None)
        if adapter is not None:
            info.update(adapter())
        info["DirectML version"] = self.exports.directml_version
        info["version"] = f"DirectML version {self.exports.directml_version}"
        info["max feature level"] = info.pop("feature level", "?")
        info.update(getattr(self.exports, "details", {}))
        for library, path in getattr(self.exports, "paths", {}).items():
            info[f"{library} library"] = str(path)
            if library == "directml":   # the bytes tested, as a conformance statement names them
                try:
                    info["directml sha256"] = sha256_of(Path(path), remember=True)
                except OSError as error:   # a layer that is no file (the tests' fake DirectML)
                    info["directml sha256"] = f"unknown ({error.strerror or error})"
        info["platform"] = self.exports.platform
        info["rngcheck"] = __version__
        return info

    def close(self) -> None:
        device = self.__dict__.pop("device", None)   # closed: the backend holds no device any more
        if device is not None:
            device.close()

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        if FEATURE_LEVEL_3_0 <= tuple(feature_level) and tuple(feature_level) > tuple(self.feature_level):
            raise NotApplicable(f"the description needs DirectML feature level {feature_level[0]}.{feature_level[1]}; "
                                f"this DirectML's maximum is {self.feature_level[0]}.{self.feature_level[1]} "
                                f"(DML_FEATURE_FEATURE_LEVELS)")
        caller_state = state
        state = np.ascontiguousarray(state)
        sizes = tuple(int(s) for s in sizes)
        strides = None if strides is None else tuple(int(s) for s in strides)
        output_state_sizes = Description.of_call(state, sizes, strides, buffer, output_state,
                                                 feature_level).output_state_sizes
        self._check_expressible(state, sizes, strides, buffer, output_state_sizes, tuple(feature_level))
        work = buffer if buffer.flags.c_contiguous else np.ascontiguousarray(buffer)
        self.device.input_state_after = None
        raw_state = self.device.execute(state, sizes, strides, work, output_state_sizes)
        if work is not buffer:
            buffer[...] = work
        after = getattr(self.device, "input_state_after", None)
        if after is not None and isinstance(caller_state, np.ndarray) and caller_state.flags.writeable \
                and after.nbytes == caller_state.nbytes and after.tobytes() != state.tobytes():
            # the device wrote into the InputStateTensor: the caller sees it (input-state-modified)
            np.copyto(caller_state, after.view(caller_state.dtype).reshape(caller_state.shape))
        if raw_state is None:
            return None
        return raw_state.view(state.dtype).reshape(-1).copy()

    def _check_expressible(self, state, sizes, strides, buffer, output_state_sizes, feature_level):
        if feature_level < FEATURE_LEVEL_3_0:
            _reject("feature-level", f"feature level {feature_level[0]}.{feature_level[1]}")
        for what, dtype in (("InputStateTensor", state.dtype), ("OutputTensor", buffer.dtype)):
            if dispatch.data_type_name(dtype) is None:
                _reject("data-type", f"{what} of {dtype} has no DML_TENSOR_DATA_TYPE")
        _check_uint(sizes, "OutputTensor sizes", "size-zero")
        if output_state_sizes is not None:
            _check_uint(output_state_sizes, "OutputStateTensor sizes", "size-zero")
        if strides is not None:
            if len(strides) != len(sizes):
                _reject("stride-count", f"{len(strides)} strides for {len(sizes)} dimensions "
                                        f"(one DimensionCount covers Sizes and Strides)")
            _check_uint(strides, "strides", "stride-negative")
        if FEATURE_LEVEL_3_0 <= feature_level < FEATURE_LEVEL_4_0 <= self.feature_level:
            tensors = {"InputStateTensor": tuple(state.shape), "OutputTensor": sizes}
            if output_state_sizes is not None:
                tensors["OutputStateTensor"] = output_state_sizes
            for what, shape in tensors.items():
                if len(shape) != 4:
                    _reject("rank", f"{what} has {len(shape)} dimensions at feature level 3.0")
            for what in ("InputStateTensor", "OutputStateTensor"):
                if what in tensors and tensors[what] != (1, 1, 1, 6):
                    _reject("state-sizes", f"{what} sizes {list(tensors[what])} at feature level 3.0")
