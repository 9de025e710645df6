"""A minimal COM caller over ctypes: call method N of an interface pointer, check HRESULTs.

A COM object is a pointer to a pointer to its vtable, an array of function pointers in
declaration order (rngcheck.backends.directml.interfaces). A method is called with the
object pointer (``this``) first. On x64 there is one C calling convention per platform
(Microsoft x64 on Windows, System V AMD64 on Linux/WSL), so CFUNCTYPE serves both.

Structures returned by value need the C++ ABI's rules, which differ between the two:
  * msvc (Windows): a member function returns every user-defined type through a hidden
    pointer passed right after ``this``; the function returns that pointer.
  * sysv (Itanium C++ ABI, libd3d12.so / libdirectml.so on WSL): a trivially copyable
    structure of at most 8 bytes of integers comes back in RAX; one larger than 16 bytes
    goes through a hidden pointer passed *before* ``this``. (9-16 bytes are not needed here.)
``lower`` turns a signature into the plain C prototype actually called; the tests' fake
layer (tests/directml_fake.py) implements its vtables from the same lowered prototypes.

HRESULTs: S_OK and other success codes pass; E_INVALIDARG raises :class:`InvalidArgument`
(an :class:`rngcheck.Rejected`); anything else raises :class:`HResultError`, whose message
names the method and the HRESULT (e.g. ``DXGI_ERROR_DEVICE_REMOVED (0x887A0005)``).
"""

from __future__ import annotations

import ctypes
import sys
from ctypes import c_uint64, c_void_p
from typing import Any

from ...errors import Rejected
from . import interfaces

# winerror.h (and dxgi/d3d12 return codes documented with it)
HRESULT_NAMES = {
    0x00000000: "S_OK",
    0x00000001: "S_FALSE",
    0x80004001: "E_NOTIMPL",
    0x80004002: "E_NOINTERFACE",
    0x80004003: "E_POINTER",
    0x80004004: "E_ABORT",
    0x80004005: "E_FAIL",
    0x8000FFFF: "E_UNEXPECTED",
    0x80070005: "E_ACCESSDENIED",
    0x80070006: "E_HANDLE",
    0x8007000E: "E_OUTOFMEMORY",
    0x80070057: "E_INVALIDARG",
    0x887A0001: "DXGI_ERROR_INVALID_CALL",
    0x887A0002: "DXGI_ERROR_NOT_FOUND",
    0x887A0004: "DXGI_ERROR_UNSUPPORTED",
    0x887A0005: "DXGI_ERROR_DEVICE_REMOVED",
    0x887A0006: "DXGI_ERROR_DEVICE_HUNG",
    0x887A0007: "DXGI_ERROR_DEVICE_RESET",
    0x887A0020: "DXGI_ERROR_DRIVER_INTERNAL_ERROR",
    0x887E0001: "D3D12_ERROR_ADAPTER_NOT_FOUND",
    0x887E0002: "D3D12_ERROR_DRIVER_VERSION_MISMATCH",
}
NAMED = {name: value for value, name in HRESULT_NAMES.items()}
S_OK = 0
E_INVALIDARG = NAMED["E_INVALIDARG"]


def as_signed(hresult: int) -> int:
    """An HRESULT as the signed 32-bit value a C function returns."""
    hresult &= 0xFFFFFFFF
    return hresult - (1 << 32) if hresult & 0x80000000 else hresult


def hresult_name(hresult: int) -> str:
    value = hresult & 0xFFFFFFFF
    name = HRESULT_NAMES.get(value)
    return f"{name} (0x{value:08X})" if name else f"HRESULT 0x{value:08X}"


class HResultError(RuntimeError):
    """A DirectML / D3D12 / DXGI call failed with an HRESULT other than E_INVALIDARG."""

    def __init__(self, what: str, hresult: int, note: str = ""):
        self.what = what
        self.hresult = hresult & 0xFFFFFFFF
        self.name = HRESULT_NAMES.get(self.hresult, f"0x{self.hresult:08X}")
        super().__init__(f"{what} failed: {hresult_name(hresult)}" + (f"; {note}" if note else ""))


class InvalidArgument(HResultError, Rejected):
    """E_INVALIDARG: the callee refused its arguments (DirectML: an invalid description)."""

    def __init__(self, what: str, hresult: int = E_INVALIDARG, note: str = ""):
        HResultError.__init__(self, what, hresult, note)
        self.rule = None


def check(hresult: int, what: str) -> int:
    """Raise for a failed HRESULT; return it (a success code) otherwise."""
    if hresult is None:
        hresult = 0
    if hresult < 0 or hresult >= 0x80000000:
        if hresult & 0xFFFFFFFF == E_INVALIDARG:
            raise InvalidArgument(what)
        raise HResultError(what, hresult)
    return hresult


ABIS = ("msvc", "sysv")  # how a COM method returns a structure: MSVC x64 or System V (Wine, WSL)


def default_abi() -> str:
    return "msvc" if sys.platform == "win32" else "sysv"


def lower(restype, argtypes, abi: str):
    """(C return type, C argument types including ``this``, how the struct comes back).

    ``how``: None (not a structure), "after-this" / "before-this" (hidden pointer),
    "register" (in RAX, reinterpreted).
    """
    if not (isinstance(restype, type) and issubclass(restype, ctypes.Structure)):
        return restype, (c_void_p, *argtypes), None
    size = ctypes.sizeof(restype)
    if abi == "msvc":
        return c_void_p, (c_void_p, c_void_p, *argtypes), "after-this"
    if abi == "sysv":
        if size <= 8:
            return c_uint64, (c_void_p, *argtypes), "register"
        if size > 16:
            return c_void_p, (c_void_p, c_void_p, *argtypes), "before-this"
        raise NotImplementedError(f"returning {restype.__name__} ({size} bytes) by value on sysv")
    raise ValueError(f"unknown ABI {abi!r}")


class Com:
    """Calls COM methods and DLL exports through raw function pointers."""

    def __init__(self, exports, abi: str | None = None):
        if ctypes.sizeof(c_void_p) != 8:
            raise RuntimeError("the DirectML backend needs a 64-bit Python")
        self.exports = exports
        self.abi = abi or default_abi()
        self._prototypes: dict[tuple[Any, tuple[Any, ...]], Any] = {}   # ctypes function types
        self._guids: dict[str, Any] = {}                               # GUID structures

    def prototype(self, restype, argtypes):
        key = (restype, tuple(argtypes))
        if key not in self._prototypes:
            self._prototypes[key] = ctypes.CFUNCTYPE(restype, *argtypes)
        return self._prototypes[key]

    def guid(self, interface: str):
        """A GUID structure (kept alive here) holding ``interface``'s IID; returns its address."""
        from .structs import GUID
        if interface not in self._guids:
            self._guids[interface] = GUID.parse(interfaces.iid(interface))
        return ctypes.addressof(self._guids[interface])

    def method_address(self, this: int, interface: str, method: str) -> int:
        if not this:
            raise ValueError(f"{interface}::{method} called on a null pointer")
        vtable = c_void_p.from_address(this).value
        if not vtable:
            raise ValueError(f"{interface}::{method} called on an object without a vtable")
        address = c_void_p.from_address(vtable + interfaces.slot(interface, method) * ctypes.sizeof(c_void_p)).value
        if not address:
            raise ValueError(f"{interface}::{method}: a null method in the vtable")
        return address

    def call(self, this: int, interface: str, method: str, *args):
        """``this->method(args)``; returns the raw result (a structure for by-value returns)."""
        restype, argtypes = interfaces.signature(interface, method)
        c_restype, c_argtypes, how = lower(restype, argtypes, self.abi)
        function = self.prototype(c_restype, c_argtypes)(self.method_address(this, interface, method))
        if how is None:
            return function(this, *args)
        if how == "register":
            raw = c_uint64(function(this, *args) or 0)
            result = restype()
            ctypes.memmove(ctypes.addressof(result), ctypes.addressof(raw), ctypes.sizeof(restype))
            return result
        result = restype()
        if how == "after-this":
            function(this, ctypes.addressof(result), *args)
        else:
            function(ctypes.addressof(result), this, *args)
        return result

    def hr(self, this: int, interface: str, method: str, *args) -> int:
        """Call a method that returns an HRESULT and check it."""
        return check(self.call(this, interface, method, *args), f"{interface}::{method}")

    def create(self, this: int, interface: str, method: str, *args, riid: str) -> int:
        """Call a creation method whose last two arguments are (REFIID, void**); return the object."""
        out = c_void_p()
        self.hr(this, interface, method, *args, self.guid(riid), ctypes.addressof(out))
        if not out.value:
            raise HResultError(f"{interface}::{method}", 0x80004003, "returned S_OK and a null object")
        return out.value

    def export(self, library: str, symbol: str, *args) -> int:
        restype, argtypes = interfaces.EXPORTS[(library, symbol)]
        function = self.prototype(restype, argtypes)(self.exports.address(library, symbol))
        return function(*args)

    def release(self, this: int | None) -> None:
        if this:
            self.call(this, "IUnknown", "Release")
