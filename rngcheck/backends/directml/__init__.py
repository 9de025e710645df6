"""DirectML backend: the real DML_RANDOM_GENERATOR operator on Windows (and WSL2), through ctypes.

Modules: ``structs`` (C structures and enumerations), ``interfaces`` (COM vtable slot tables),
``com`` (the vtable caller and HRESULT checking), ``loader`` (finding the libraries),
``dispatch`` (the DirectML / D3D12 call sequence), ``backend`` (the rngcheck Backend),
``fake`` (a recording fake DirectML / D3D12 at the vtable level, for tests).
Importing the package loads no native library. See docs/directml.md.
"""
