"""The exec protocol, version 1: the runner and an implementation in any language talk over
the child's stdin and stdout. The full description is docs/exec-protocol.md.

Every message is: a 4-byte ASCII tag, a u32 payload length, the payload. All integers are
little-endian. Child to runner: HELO (once, first), then DONE, RJCT or FAIL per CALL.
Runner to child: CALL, and QUIT at the end.
"""

from __future__ import annotations

import json
import struct

import numpy as np

from ..counter import as_state_words

PROTOCOL_VERSION = 1
HELLO, CALL, DONE, REJECT, FAIL, QUIT = b"HELO", b"CALL", b"DONE", b"RJCT", b"FAIL", b"QUIT"
TAGS = {HELLO, CALL, DONE, REJECT, FAIL, QUIT}
HEADER = struct.Struct("<4sI")
MAX_PAYLOAD = (1 << 32) - 1

# Data types, numbered as DirectML's DML_TENSOR_DATA_TYPE.
DTYPE_CODES = {"float32": 1, "float16": 2, "uint32": 3, "uint16": 4, "uint8": 5, "int32": 6, "int16": 7, "int8": 8}
CODE_DTYPES = {code: name for name, code in DTYPE_CODES.items()}

FLAG_OUTPUT_STATE = 1
FLAG_STRIDES = 2
CALL_FIXED = struct.Struct("<9I")  # major, minor, flags, rank, strides, state rank, out-state rank, 2 dtypes
STATE_NONE, STATE_WORDS, STATE_INVALID = 0, 1, 2


class ProtocolError(Exception):
    """The other side broke the protocol (noise on stdout, a wrong tag, a short message)."""


def frame(tag: bytes, payload: bytes = b"") -> bytes:
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(f"a {tag.decode()} message of {len(payload)} bytes is over the protocol's "
                            f"limit of {MAX_PAYLOAD} bytes (4 GiB)")
    return HEADER.pack(tag, len(payload)) + payload


def dtype_code(array: np.ndarray, what: str) -> int:
    """The DML_TENSOR_DATA_TYPE of a 32-bit array; other arrays cannot cross the protocol."""
    code = DTYPE_CODES.get(str(array.dtype))
    if code is None or array.dtype.itemsize != 4:
        raise ValueError(f"the {what} is {array.dtype}: the exec protocol carries 32-bit words only")
    return code


def hello_payload(name: str, validates: bool, describe: dict, error: str | None = None,
                  unavailable: bool = False) -> bytes:
    """A HELO payload: the backend's name, whether it validates, its describe(); or, for a child
    that cannot serve, its one-line ``error`` (``unavailable``: it cannot run on this machine, as
    opposed to a spec that names nothing loadable)."""
    body = {"protocol": PROTOCOL_VERSION, "name": name, "validates": validates, "describe": describe}
    if error:
        body = {"protocol": PROTOCOL_VERSION, "error": error}
        if unavailable:
            body["unavailable"] = True
    return json.dumps(body).encode()


def encode_call(state, sizes, strides, buffer, output_state, feature_level) -> bytes:
    """A CALL payload from the backend-contract arguments."""
    state = np.asarray(state)
    buffer = np.asarray(buffer)
    out_sizes = () if not output_state else (state.shape if output_state is True else tuple(output_state))
    flags = (FLAG_OUTPUT_STATE if output_state else 0) | (FLAG_STRIDES if strides is not None else 0)
    stride_count = 0 if strides is None else len(strides)
    parts = [CALL_FIXED.pack(int(feature_level[0]), int(feature_level[1]), flags, len(sizes), stride_count,
                             state.ndim,
                             len(out_sizes), dtype_code(state, "state"), dtype_code(buffer, "buffer"))]
    parts.append(np.asarray(list(sizes), dtype="<i8").tobytes())
    if strides is not None:
        parts.append(np.asarray(list(strides), dtype="<i8").tobytes())
    parts.append(np.asarray(state.shape, dtype="<i8").tobytes())
    parts.append(np.asarray(out_sizes, dtype="<i8").tobytes())
    parts.append(struct.pack("<I", state.size) + np.ascontiguousarray(state).view("<u4").tobytes())
    parts.append(struct.pack("<Q", buffer.size) + np.ascontiguousarray(buffer).view("<u4").tobytes())
    return b"".join(parts)


class Reader:
    def __init__(self, data: bytes):
        self.data = memoryview(data)
        self.at = 0

    def take(self, count: int) -> memoryview:
        if self.at + count > len(self.data):
            raise ProtocolError(f"message ends after {len(self.data)} bytes, {self.at + count} needed")
        piece = self.data[self.at:self.at + count]
        self.at += count
        return piece

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def i64s(self, count: int) -> tuple[int, ...]:
        return tuple(int(v) for v in np.frombuffer(self.take(8 * count), dtype="<i8"))

    def words(self, count: int) -> np.ndarray:
        return np.frombuffer(self.take(4 * count), dtype="<u4").copy()


def decode_call(payload: bytes) -> dict:
    """The backend-contract arguments of a CALL (the child's side)."""
    r = Reader(payload)
    (major, minor, flags, rank, stride_count, state_rank, out_rank, state_code,
     out_code) = CALL_FIXED.unpack(r.take(CALL_FIXED.size))
    sizes = r.i64s(rank)
    strides = r.i64s(stride_count) if flags & FLAG_STRIDES else None
    state_shape = r.i64s(state_rank)
    out_sizes = r.i64s(out_rank)
    state = r.words(r.u32())
    buffer = r.words(r.u64())
    state_dtype = CODE_DTYPES.get(state_code, "uint32")
    output_dtype = CODE_DTYPES.get(out_code, "uint32")
    output_state: bool | tuple = False
    if flags & FLAG_OUTPUT_STATE:
        output_state = True if out_sizes == state_shape else out_sizes
    try:
        state = state.view(state_dtype).reshape(state_shape)
    except ValueError:
        state = state.view(state_dtype)
    return {"state": state, "sizes": sizes, "strides": strides, "buffer": buffer.view(output_dtype)
            if np.dtype(output_dtype).itemsize == 4 else buffer,
            "output_state": output_state, "feature_level": (major, minor)}


INVALID_TEXT_LIMIT = 4096  # bytes of the text that describes an invalid state


def encode_done(returned, buffer, input_state=None) -> bytes:
    """A DONE payload: the returned state (or why it is not one), the whole buffer and, when given,
    the input state as the child holds it after the call (the runner sees a backend that wrote into it)."""
    words = as_state_words(returned)
    if returned is None:
        head = struct.pack("<I", STATE_NONE)
    else:
        if words is not None:
            head = struct.pack("<I", STATE_WORDS) + words.astype("<u4").tobytes()
        else:
            text = describe_garbage(returned).encode()[:INVALID_TEXT_LIMIT]
            head = struct.pack("<II", STATE_INVALID, len(text)) + text
    buffer = np.ascontiguousarray(buffer)
    done = head + struct.pack("<Q", buffer.size) + buffer.view("<u4").tobytes()
    if input_state is not None:
        after = np.ascontiguousarray(input_state).reshape(-1).view("<u4")
        done += struct.pack("<I", after.size) + after.tobytes()
    return done


def done_limit(state_words: int, buffer_words: int) -> int:
    """The largest DONE payload a CALL with this state and buffer can be answered with."""
    return (4 + max(4 * 6, 4 + INVALID_TEXT_LIMIT) + 8 + 4 * buffer_words) + (4 + 4 * state_words)


def describe_garbage(value) -> str:
    try:
        array = np.asarray(value)
        if array.dtype != object:
            return f"{array.dtype}{list(array.shape)} {array.reshape(-1)[:8].tolist()}"
    except Exception:
        pass
    return f"{type(value).__name__} {str(value)[:60]!r}"


def decode_done(payload: bytes):
    """(returned state or InvalidState, buffer words, input state after the call or None) from a DONE
    payload (the runner's side)."""
    r = Reader(payload)
    kind = r.u32()
    if kind == STATE_NONE:
        returned = None
    elif kind == STATE_WORDS:
        returned = r.words(6).astype(np.uint32)
    elif kind == STATE_INVALID:
        returned = InvalidState(bytes(r.take(r.u32())).decode(errors="replace"))
    else:
        raise ProtocolError(f"DONE with state kind {kind}")
    buffer = r.words(r.u64())
    input_after = r.words(r.u32()) if r.at < len(r.data) else None
    if r.at != len(r.data):
        raise ProtocolError(f"DONE has {len(r.data) - r.at} bytes too many")
    return returned, buffer, input_after


class InvalidState(str):
    """What a backend returned instead of a state, as text (the verdict fails it as a contract break)."""
