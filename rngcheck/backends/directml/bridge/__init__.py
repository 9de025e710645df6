"""Real DirectML on Linux without a GPU: the pinned pieces (``chain``), their set-up
(``build``, ``python -m rngcheck.backends.directml.bridge.build``) and the C bridge between
Microsoft's WSL build of DirectML and vkd3d (``d3d12_bridge.c``, ``dxcore_bridge.c``).
Importing this package loads and runs nothing."""
