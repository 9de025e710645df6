"""Package data of the ``torch`` backend (rngcheck/backends/torch_backend.py): the C++ helper
``philox_helper.cpp`` that drives PyTorch's header-only at::Philox4_32. Importing this package
loads nothing (and never imports PyTorch)."""
