"""DirectML backend: the real DML_RANDOM_GENERATOR operator through ctypes, on Windows, WSL2 and
Linux (Microsoft's Linux DirectML builds on vkd3d and any Vulkan device, lavapipe without a GPU).

Modules: ``structs`` (C structures and enumerations), ``interfaces`` (COM vtable slot tables),
``com`` (the vtable caller and HRESULT checking), ``exports`` (what a platform layer hands the
backend), ``loader`` (finding the libraries: Windows, WSL), ``vkd3d`` (the Linux platform layer
over rngcheck's bridge), ``bridge`` (the pinned Linux chain, its set-up and the C bridge),
``dispatch`` (the DirectML / D3D12 call sequence), ``backend`` (the rngcheck Backend).
The recording fake DirectML / D3D12 at the vtable level is test support code
(tests/directml_fake.py), not part of the package.
Importing the package loads no native library. See docs/directml.md.
"""
