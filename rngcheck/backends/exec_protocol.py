"""The exec protocol, version 1: the runner and an implementation in any language talk over
the child's stdin and stdout. The full description is docs/exec-protocol.md.

Every message is: a 4-byte ASCII tag, a u32 payload length, the payload. All integers are
little-endian. Child to runner: HELO (once, first), then one answer per request: its answer tag
(DONE for a CALL, NUMS for a DRAW, BLKS for a GENB, BITS for an OPER), RJCT or FAIL. Runner to
child: the requests (CALL to every child; DRAW, GENB and OPER only for what the child's HELO
advertised), and QUIT at the end.

The kinds of request are one table, MESSAGES (at the end of this module), of :class:`Message`:

1. A kind of request is one entry: its tag and its answer's, the contract methods whose calls it
   carries, how the runner asks (``ask``: the payload, the largest answer, how the answer's payload
   becomes what the method returns), how the child reads it (``decode``) and answers it with its
   backend (``serve``), and, for an optional kind, the HELO list that says what a child serves.
2. Both sides have one code path for every entry: the runner's exchange (ExecBackend._ask in
   exec_backend; each contract method there is one call of it) and the worker's dispatch by tag
   (worker.serve). A new kind is a new entry (and the contract method's one line that asks it);
   the HELO list it names is read, checked and advertised with the others.
3. An optional kind is not sent, and the call is not applicable, when the child's HELO list lacks
   the call's subject (a convention, a generator, an operator). ``ask`` may refuse a call too
   (NotApplicable, saying why, not naming the child: the runner puts its name before it).
4. A ``serve`` that raises is the child's answer too: Rejected is RJCT; NotApplicable is FAIL with
   ``not_applicable``; anything else is FAIL with the error's one line.
5. The table only arranges the encoders below, which docs/exec-protocol.md describes byte by byte:
   no byte on the wire depends on it.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .. import counter, stablehlo
from ..counter import as_state_words
from ..errors import NotApplicable, RemoteError
from ..numbers import Request
from ..registry import Registry
from .contract import OPERATOR_METHODS

PROTOCOL_VERSION = 1
HELLO, CALL, DONE, REJECT, FAIL, QUIT = b"HELO", b"CALL", b"DONE", b"RJCT", b"FAIL", b"QUIT"
DRAW, NUMBERS = b"DRAW", b"NUMS"  # the numbers layer (optional: a child advertises conventions in its HELO)
GENERATE, BLOCKS = b"GENB", b"BLKS"  # the generators (optional: a child advertises generators in its HELO)
OPERATE, BITS = b"OPER", b"BITS"  # another operator (optional: a child advertises operators in its HELO)
HEADER = struct.Struct("<4sI")
MAX_PAYLOAD = (1 << 32) - 1

# Data types, numbered as DirectML's DML_TENSOR_DATA_TYPE.
DTYPE_CODES = {"float32": 1, "float16": 2, "uint32": 3, "uint16": 4, "uint8": 5, "int32": 6, "int16": 7, "int8": 8}
CODE_DTYPES = {code: name for name, code in DTYPE_CODES.items()}

FLAG_OUTPUT_STATE = 1
FLAG_STRIDES = 2
# Shared buffers (issue 29): a child whose HELO says "shared_buffer": true may be sent a CALL with this
# flag. Its buffer part is then u64 word count, u32 path length, the path (UTF-8) of a shared-memory file
# it maps (rngcheck.sharedmem.attach), u64 byte offset, instead of the words; the child writes the
# buffer in place and answers a DONE whose buffer count is SHARED_DONE with no words. Nothing else changes.
FLAG_SHARED_BUFFER = 4
SHARED_DONE = (1 << 64) - 1
CALL_FIXED = struct.Struct("<9I")  # major, minor, flags, rank, strides, state rank, out-state rank, 2 dtypes
STATE_NONE, STATE_WORDS, STATE_INVALID = 0, 1, 2


class ProtocolError(Exception):
    """The other side broke the protocol (noise on stdout, a wrong tag, a short message)."""


class Exchange(NamedTuple):
    """One request as the runner sends it (rule 1): what ``Message.ask`` makes of a call."""

    payload: bytes                 # the request's payload
    limit: int                     # the largest answer payload it can get (a longer one is refused from its header)
    read: Callable[[bytes], Any]   # the answer's payload as the contract method returns it (ProtocolError: broken)


def _every_child(*arguments) -> None:
    return None


@dataclass(frozen=True)
class Message:
    """One kind of request and its answer: an entry of MESSAGES (rules 1-4 of this module)."""

    tag: bytes                         # the request's tag, runner to child
    answer: bytes                      # its answer's tag, child to runner (or RJCT / FAIL)
    methods: tuple[str, ...]           # the backend-contract methods whose calls it carries
    ask: Callable[..., Exchange]       # runner: (the child's HELO, the call's arguments) -> Exchange (rule 3)
    decode: Callable[[bytes], tuple]   # child: the request's payload -> serve's arguments (after the backend)
    serve: Callable[..., bytes]        # child: (backend, *arguments) -> the answer's payload (rule 4)
    advertised: str = ""               # an optional kind's HELO list of what the child serves; "": every child
    subject: Callable[..., object] = _every_child   # runner: what of the call's arguments that list must name
    unserved: str = ""                 # runner: "{label} " + this, formatted with the subject, for a call not sent

    @property
    def name(self) -> str:
        """The request's tag as text: its name in MESSAGES."""
        return self.tag.decode()


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
                  unavailable: bool = False, **served: Any) -> bytes:
    """A HELO payload: the backend's name, whether it validates, its describe() and what it serves of
    the optional kinds (``served``, by the HELO lists of MESSAGES: ``conventions`` when it draws
    numbers, ``generators`` when it computes generator blocks, ``operators`` when it runs other
    operators; an empty one is left out); or, for a child that cannot serve, its one-line ``error``
    (``unavailable``: it cannot run on this machine, as opposed to a spec that names nothing loadable)."""
    lists = [message.advertised for message in MESSAGES.values() if message.advertised]
    unknown = sorted(set(served) - set(lists))
    if unknown:
        raise TypeError(f"hello_payload: no HELO list {', '.join(unknown)} (the lists: {', '.join(lists)})")
    body = {"protocol": PROTOCOL_VERSION, "name": name, "validates": validates, "describe": describe}
    for listed in lists:   # in the table's order: the JSON's keys keep theirs
        if served.get(listed):
            body[listed] = [str(item) for item in served[listed]]
    if error:
        body = {"protocol": PROTOCOL_VERSION, "error": error}
        if unavailable:
            body["unavailable"] = True
    return json.dumps(body).encode()


def with_shared_buffers(hello: bytes) -> bytes:
    """A HELO payload that also says the child maps shared buffers (FLAG_SHARED_BUFFER), where it can."""
    from ..sharedmem import available

    body = json.loads(hello)
    if available() and not body.get("error"):
        body["shared_buffer"] = True
    return json.dumps(body).encode()


def call_payload_bytes(state, sizes, strides, buffer) -> int:
    """The bytes of a CALL payload that carries the buffer's words (checked against MAX_PAYLOAD)."""
    rank = len(sizes) + (0 if strides is None else len(strides))
    return CALL_FIXED.size + 8 * (rank + 2 * np.asarray(state).ndim) + 4 + 4 * np.asarray(state).size \
        + 8 + 4 * np.asarray(buffer).size


def encode_call(state, sizes, strides, buffer, output_state, feature_level, shared=None) -> bytes:
    """A CALL payload from the backend-contract arguments. ``shared``: (path, byte offset) of the
    buffer in a shared-memory file (FLAG_SHARED_BUFFER): the words themselves are not sent."""
    state = np.asarray(state)
    buffer = np.asarray(buffer)
    out_sizes = () if not output_state else (state.shape if output_state is True else tuple(output_state))
    flags = (FLAG_OUTPUT_STATE if output_state else 0) | (FLAG_STRIDES if strides is not None else 0)
    flags |= FLAG_SHARED_BUFFER if shared is not None else 0
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
    if shared is not None:
        path = str(shared[0]).encode()
        parts.append(struct.pack("<QI", buffer.size, len(path)) + path + struct.pack("<Q", int(shared[1])))
        return b"".join(parts)
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
    if flags & FLAG_SHARED_BUFFER:
        from ..sharedmem import attach

        count = r.u64()
        path = bytes(r.take(r.u32())).decode()
        buffer = attach(path, r.u64(), count)
    else:
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
            "output_state": output_state, "feature_level": (major, minor),
            "shared": bool(flags & FLAG_SHARED_BUFFER)}


INVALID_TEXT_LIMIT = 4096  # bytes of the text that describes an invalid state


def encode_done(returned, buffer, input_state=None, shared=False) -> bytes:
    """A DONE payload: the returned state (or why it is not one), the whole buffer (``shared``: only
    SHARED_DONE, the buffer was written in place) and, when given, the input state as the child holds
    it after the call (the runner sees a backend that wrote into it)."""
    words = as_state_words(returned)
    if returned is None:
        head = struct.pack("<I", STATE_NONE)
    else:
        if words is not None:
            head = struct.pack("<I", STATE_WORDS) + words.astype("<u4").tobytes()
        else:
            text = describe_garbage(returned).encode()[:INVALID_TEXT_LIMIT]
            head = struct.pack("<II", STATE_INVALID, len(text)) + text
    if shared:
        done = head + struct.pack("<Q", SHARED_DONE)
    else:
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
    returned: np.ndarray | InvalidState | None
    if kind == STATE_NONE:
        returned = None
    elif kind == STATE_WORDS:
        returned = r.words(6).astype(np.uint32)
    elif kind == STATE_INVALID:
        returned = InvalidState(bytes(r.take(r.u32())).decode(errors="replace"))
    else:
        raise ProtocolError(f"DONE with state kind {kind}")
    count = r.u64()
    buffer = None if count == SHARED_DONE else r.words(count)   # None: written in place (shared)
    input_after = r.words(r.u32()) if r.at < len(r.data) else None
    if r.at != len(r.data):
        raise ProtocolError(f"DONE has {len(r.data) - r.at} bytes too many")
    return returned, buffer, input_after


class InvalidState(str):
    """What a backend returned instead of a state, as text (the verdict fails it as a contract break)."""


# ---------------------------------------------------------------------------------- the numbers layer
# NUMS data types: the numbers layer's (rngcheck.numbers), each with its width; bfloat16 travels as
# its 16 bits (rngcheck.numbers.floats rule 1).
NUMBER_DTYPES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
                 "int32": 4, "int64": 8, "uint32": 4, "uint64": 8}
NUMBER_STORAGE = {"bfloat16": "<u2"}       # how a NUMS dtype is held in numpy (the rest: itself)
DTYPE_NAME_LIMIT = 16
STATE_WORD_COUNT = counter.STATE_WORDS   # a DRAW carries the 6-word state (rngcheck.counter)


def encode_draw(request: dict, state) -> bytes:
    """A DRAW payload: the request as JSON (u32 length, UTF-8), then the 6 state words (u32 each)."""
    text = json.dumps(request, sort_keys=True).encode()
    words = np.zeros(STATE_WORD_COUNT, dtype="<u4") if state is None else \
        np.ascontiguousarray(np.asarray(state, dtype=np.uint32).reshape(-1)).astype("<u4")
    if words.size != STATE_WORD_COUNT:
        raise ValueError(f"a DRAW carries {STATE_WORD_COUNT} state words, got {words.size}")
    return struct.pack("<I", len(text)) + text + words.tobytes()


def decode_draw(payload: bytes) -> tuple[dict, np.ndarray]:
    """(request, state) from a DRAW payload (the child's side)."""
    r = Reader(payload)
    try:
        request = json.loads(bytes(r.take(r.u32())))
    except ValueError:
        raise ProtocolError("the DRAW request is not JSON") from None
    if not isinstance(request, dict):
        raise ProtocolError("the DRAW request is not a JSON object")
    state = r.words(STATE_WORD_COUNT).astype(np.uint32)
    if r.at != len(r.data):
        raise ProtocolError(f"DRAW has {len(r.data) - r.at} bytes too many")
    return request, state


def number_dtype_name(array: np.ndarray, request_dtype: str | None = None) -> str:
    """The NUMS dtype of what a backend returned: its own dtype, or bfloat16 for bfloat16's bits (uint16
    for a bfloat16 request, or ml_dtypes' bfloat16). ValueError for anything NUMS cannot carry."""
    name = array.dtype.name  # without the byte order: a big-endian array crosses as its values
    if name == "uint16" and request_dtype == "bfloat16":
        name = "bfloat16"
    if name not in NUMBER_DTYPES or array.dtype.itemsize != NUMBER_DTYPES[name] or array.dtype.kind == "O":
        raise ValueError(f"the numbers are {array.dtype}: the exec protocol carries "
                         f"{', '.join(NUMBER_DTYPES)} (bfloat16 as its bits in uint16)")
    return name


def encode_numbers(numbers, request_dtype: str | None = None) -> bytes:
    """A NUMS payload: the dtype's name (u32 length, ASCII), the count (u64), then count elements
    of the dtype's width, little-endian."""
    array = np.ascontiguousarray(np.asarray(numbers).reshape(-1))
    name = number_dtype_name(array, request_dtype)
    little = array.view(f"<u{NUMBER_DTYPES[name]}") if name == "bfloat16" else \
        array.astype(array.dtype.newbyteorder("<"), copy=False)
    return _typed_elements(name, little)


def numbers_limit(count: int) -> int:
    """The largest NUMS payload a DRAW of ``count`` numbers can be answered with (the widest dtype)."""
    return 4 + DTYPE_NAME_LIMIT + 8 + max(NUMBER_DTYPES.values()) * max(0, int(count))


def decode_numbers(payload: bytes) -> np.ndarray:
    """The numbers of a NUMS payload (the runner's side): numpy float16/float32/float64, the integer
    dtypes, bfloat16 as its bits in uint16. ProtocolError for an unknown dtype, or a count that
    disagrees with the bytes that follow it."""
    return _read_elements(Reader(payload), "NUMS", NUMBER_DTYPES, NUMBER_STORAGE)


def _typed_elements(name: str, array: np.ndarray) -> bytes:
    """The elements part of a NUMS or BITS payload: the dtype's name (u32 length, ASCII), the count
    (u64), then the elements (``array``, already little-endian)."""
    return struct.pack("<I", len(name)) + name.encode() + struct.pack("<Q", array.size) + array.tobytes()


def _read_elements(r: Reader, tag: str, widths: dict[str, int], storage: dict[str, str] | None = None) -> np.ndarray:
    """The elements part of a ``tag`` payload (the runner's side), of a dtype in ``widths`` (bytes by
    name; ``storage``: how a dtype numpy lacks is held); ProtocolError for an unknown dtype, or a count
    that disagrees with the bytes that follow it (they must end the payload)."""
    length = r.u32()
    if length > DTYPE_NAME_LIMIT:
        raise ProtocolError(f"{tag} names a dtype of {length} bytes")
    name = bytes(r.take(length)).decode(errors="replace")
    width = widths.get(name)
    if width is None:
        raise ProtocolError(f"{tag} with unknown dtype {name!r} (known: {', '.join(widths)})")
    count = r.u64()
    left = len(r.data) - r.at
    if left != count * width:
        raise ProtocolError(f"{tag} of {count} {name} carries {left} bytes, not {count * width}")
    held = (storage or {}).get(name) or np.dtype(name).newbyteorder("<")
    array = np.frombuffer(r.take(left), dtype=held)
    return array.astype(array.dtype.newbyteorder("="))


# ---------------------------------------------------------------------------------- the generators
# GENB: the request as JSON (u32 length, UTF-8): {"generator", "rounds", "word_bits", "lanes", "blocks",
# "key": [hex strings]}, then blocks * lanes counter words of word_bits bits, little-endian, block-major.
# BLKS: u32 word_bits, u32 lanes, u64 blocks, then the blocks' words the same way.
BLOCKS_HEAD = struct.Struct("<IIQ")
GENERATE_LIMIT = 1 << 16   # bytes of a GENB request's JSON


def _block_words(array, what: str) -> tuple[np.ndarray, int]:
    array = np.asarray(array)
    if array.ndim != 2 or array.dtype not in (np.dtype(np.uint32), np.dtype(np.uint64)):
        raise ValueError(f"the {what} are {array.dtype}{list(array.shape)}: the exec protocol carries "
                         f"(blocks, lanes) uint32 or uint64")
    return np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False), array.dtype.itemsize * 8


def encode_generate(generator: str, rounds: int, counters, key) -> bytes:
    """A GENB payload from the generator_blocks arguments."""
    words, bits = _block_words(counters, "counters")
    request = {"generator": str(generator), "rounds": int(rounds), "word_bits": bits, "lanes": int(words.shape[1]),
               "blocks": int(words.shape[0]), "key": [f"0x{int(k):0{bits // 4}x}" for k in key]}
    text = json.dumps(request, sort_keys=True).encode()
    return struct.pack("<I", len(text)) + text + words.tobytes()


def decode_generate(payload: bytes) -> tuple[str, int, np.ndarray, tuple[int, ...]]:
    """(generator, rounds, counters, key) from a GENB payload (the child's side)."""
    r = Reader(payload)
    length = r.u32()
    if length > GENERATE_LIMIT:
        raise ProtocolError(f"GENB request of {length} bytes")
    try:
        request = json.loads(bytes(r.take(length)))
        generator, rounds, bits = str(request["generator"]), int(request["rounds"]), int(request["word_bits"])
        lanes, blocks = int(request["lanes"]), int(request["blocks"])
        key = tuple(int(k, 16) for k in request["key"])
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ProtocolError("the GENB request is not a JSON object with generator, rounds, word_bits, lanes, "
                            "blocks and key (hex strings)") from None
    if bits not in (32, 64) or lanes < 1 or blocks < 0:
        raise ProtocolError(f"GENB with word_bits {bits}, lanes {lanes}, blocks {blocks}")
    counters = np.frombuffer(r.take(blocks * lanes * bits // 8), dtype=f"<u{bits // 8}")
    if r.at != len(r.data):
        raise ProtocolError(f"GENB has {len(r.data) - r.at} bytes too many")
    return generator, rounds, counters.astype(f"=u{bits // 8}").reshape(blocks, lanes), key


def encode_blocks(blocks) -> bytes:
    """A BLKS payload: the blocks a backend computed."""
    words, bits = _block_words(blocks, "blocks")
    return BLOCKS_HEAD.pack(bits, words.shape[1], words.shape[0]) + words.tobytes()


def blocks_limit(blocks: int, lanes: int) -> int:
    """The largest BLKS payload a GENB of ``blocks`` blocks of ``lanes`` lanes can be answered with."""
    return BLOCKS_HEAD.size + 8 * max(0, int(blocks)) * max(0, int(lanes))


def decode_blocks(payload: bytes) -> np.ndarray:
    """The blocks of a BLKS payload (the runner's side): (blocks, lanes) uint32 or uint64."""
    r = Reader(payload)
    bits, lanes, blocks = BLOCKS_HEAD.unpack(r.take(BLOCKS_HEAD.size))
    if bits not in (32, 64):
        raise ProtocolError(f"BLKS with word_bits {bits}")
    left = len(r.data) - r.at
    if left != blocks * lanes * bits // 8:
        raise ProtocolError(f"BLKS of {blocks} x {lanes} {bits}-bit words carries {left} bytes")
    words = np.frombuffer(r.take(left), dtype=f"<u{bits // 8}")
    return words.astype(f"=u{bits // 8}").reshape(blocks, lanes)


# ---------------------------------------------------------------------------------- other operators
# OPER carries one call of another operator's contract method (rngcheck.conformance.axes; today
# StableHLO's rng_bit_generator): the operator's name and its arguments as JSON (u32 length, UTF-8),
# then a u64 state (u32 word count, then the words). BITS answers it: the new state the same way,
# then the output (a NUMS-style dtype name, u64 count, little-endian elements).
OPERATOR_DTYPES = {name: bits // 8 for name, bits in stablehlo.ELEMENT_TYPES.items()}   # bytes, by numpy name
STATE_LIMIT = 64   # u64 words of an operator's state


def _u64_words(state) -> bytes:
    words = np.ascontiguousarray(np.asarray(state, dtype=np.uint64).reshape(-1)).astype("<u8")
    if words.size > STATE_LIMIT:
        raise ValueError(f"a state of {words.size} u64 words is over the protocol's {STATE_LIMIT}")
    return struct.pack("<I", words.size) + words.tobytes()


def _read_u64_words(r: Reader) -> np.ndarray:
    count = r.u32()
    if count > STATE_LIMIT:
        raise ProtocolError(f"a state of {count} u64 words")
    return np.frombuffer(r.take(8 * count), dtype="<u8").astype(np.uint64)


def encode_operate(operator: str, arguments: dict, state) -> bytes:
    text = json.dumps({"operator": operator, "arguments": arguments}, sort_keys=True).encode()
    return struct.pack("<I", len(text)) + text + _u64_words(state)


def decode_operate(payload: bytes) -> tuple[str, dict, np.ndarray]:
    r = Reader(payload)
    try:
        body = json.loads(bytes(r.take(r.u32())))
    except ValueError:
        raise ProtocolError("the OPER request is not JSON") from None
    if not isinstance(body, dict) or not isinstance(body.get("arguments"), dict):
        raise ProtocolError("the OPER request is not {operator, arguments}")
    state = _read_u64_words(r)
    if r.at != len(r.data):
        raise ProtocolError(f"OPER has {len(r.data) - r.at} bytes too many")
    return str(body.get("operator")), body["arguments"], state


def encode_bits(state, output) -> bytes:
    array = np.ascontiguousarray(np.asarray(output).reshape(-1))
    name = array.dtype.name
    if name not in OPERATOR_DTYPES or array.dtype.itemsize != OPERATOR_DTYPES[name]:
        raise ValueError(f"the output is {array.dtype}: BITS carries {', '.join(OPERATOR_DTYPES)}")
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return _u64_words(state) + _typed_elements(name, little)


def bits_limit(count: int) -> int:
    return 4 + 8 * STATE_LIMIT + 4 + DTYPE_NAME_LIMIT + 8 + 8 * max(0, int(count))


def decode_bits(payload: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(new state uint64, output elements 1-D) of a BITS payload (the runner's side)."""
    r = Reader(payload)
    state = _read_u64_words(r)
    return state, _read_elements(r, "BITS", OPERATOR_DTYPES)


# ---------------------------------------------------------------------------------- the message kinds
# Each kind's ask (the runner's side), then its serve (the child's), then its entry (rule 1).

def _ask_call(hello: dict, state, sizes, strides, buffer, output_state, feature_level) -> Exchange:
    """A CALL of random_generator. A buffer in shared memory (rngcheck.sharedmem) goes to a child that
    maps shared buffers by its file's name alone; any other goes as its words, within MAX_PAYLOAD."""
    from .. import sharedmem

    shared = sharedmem.segment_of(np.asarray(buffer)) if hello.get("shared_buffer") is True else None
    if shared is None and call_payload_bytes(state, sizes, strides, buffer) > MAX_PAYLOAD:
        raise NotApplicable(f"a buffer of {np.asarray(buffer).nbytes} bytes is over the exec protocol's 4 GiB "
                            f"message limit, and this child maps no shared buffers")
    payload = encode_call(state, sizes, strides, buffer, output_state, feature_level, shared=shared)
    buffer_words = 0 if shared is not None else np.asarray(buffer).view("<u4").size
    return Exchange(payload, done_limit(int(np.asarray(state).size), buffer_words),
                    lambda done: _read_done(done, state, buffer, shared is not None))


def _read_done(payload: bytes, state, buffer, shared: bool):
    """A DONE read into the call's own arrays, as an in-process backend leaves them: the buffer's words
    written into ``buffer`` (a shared one the child wrote in place), the input state as the child
    holds it after the call written into ``state``; returns the returned state."""
    returned, words, input_after = decode_done(payload)
    target = np.asarray(buffer).view("<u4")
    if (words is None) != shared:
        raise ProtocolError(f"answered a CALL {'with' if shared else 'without'} a shared buffer "
                            f"{'with its words' if shared else 'as if it were shared'}")
    if words is not None and words.size != target.size:
        raise RemoteError(f"returned a buffer of {words.size} words for one of {target.size}")
    if words is not None:
        target[:] = words
    if input_after is not None:
        # What the child holds as the input state after the call: a backend that wrote into it is
        # seen by the caller as if it had run here (the check names it input-state-modified).
        mine = np.asarray(state)
        if input_after.size == mine.size and mine.dtype.itemsize == 4 and mine.flags.writeable:
            np.copyto(mine, input_after.view(mine.dtype).reshape(mine.shape))
    return returned


def _serve_call(backend, call: dict) -> bytes:
    """DONE's payload: the buffer, the returned state, and the input state as the backend left it (the
    runner compares it with what it sent, input-state-modified, as for an in-process backend)."""
    returned = backend.random_generator(call["state"], call["sizes"], call["strides"], call["buffer"],
                                        output_state=call["output_state"], feature_level=call["feature_level"])
    return encode_done(returned, call["buffer"], call["state"], shared=call["shared"])


def _ask_draw(hello: dict, request: dict, state) -> Exchange:
    payload = encode_draw(request, state)
    return Exchange(payload, numbers_limit(Request.from_dict(request).count), decode_numbers)


def _serve_draw(backend, request: dict, state) -> bytes:
    random_numbers = getattr(backend, "random_numbers", None)
    if not callable(random_numbers):
        raise NotApplicable("the backend draws no numbers")
    return encode_numbers(random_numbers(request, state), request.get("dtype"))


def _ask_generate(hello: dict, generator: str, rounds: int, counters, key) -> Exchange:
    payload = encode_generate(generator, rounds, counters, key)
    return Exchange(payload, blocks_limit(*np.shape(counters)), decode_blocks)


def _serve_generate(backend, generator: str, rounds: int, counters, key) -> bytes:
    generator_blocks = getattr(backend, "generator_blocks", None)
    if not callable(generator_blocks):
        raise NotApplicable("the backend computes no generator blocks")
    return encode_blocks(generator_blocks(generator, rounds, counters, key))


def _ask_operate(hello: dict, operator: str, arguments: dict, state, count: int) -> Exchange:
    """An OPER: ``arguments`` are the operator's contract method's but the state; ``count``, its output's size."""
    return Exchange(encode_operate(operator, arguments, state), bits_limit(count), decode_bits)


def _serve_operate(backend, operator: str, arguments: dict, state) -> bytes:
    method = getattr(backend, OPERATOR_METHODS.get(operator, ""), None)
    if operator not in tuple(getattr(backend, "operators", ()) or ()) or not callable(method):
        raise NotApplicable(f"the backend runs no {operator} operator")
    new_state, output = method(state=state, **arguments)
    return encode_bits(new_state, output)


MESSAGES: Registry[Message] = Registry("exec-protocol request", error=ProtocolError)


def _entry(message: Message) -> Message:
    """``message`` in MESSAGES, by its request's tag (rule 1: a tag is one entry, once)."""
    return MESSAGES.add(message.name, message)


RANDOM_GENERATOR = _entry(Message(
    CALL, DONE, ("random_generator",), _ask_call, lambda payload: (decode_call(payload),), _serve_call))
RANDOM_NUMBERS = _entry(Message(
    DRAW, NUMBERS, ("random_numbers",), _ask_draw, decode_draw, _serve_draw, advertised="conventions",
    subject=lambda request, state: request.get("convention") if isinstance(request, dict) else None,
    unserved="draws no numbers under the {!r} convention"))
GENERATOR_BLOCKS = _entry(Message(
    GENERATE, BLOCKS, ("generator_blocks",), _ask_generate, decode_generate, _serve_generate,
    advertised="generators", subject=lambda generator, rounds, counters, key: generator,
    unserved="computes no {} blocks"))
OTHER_OPERATOR = _entry(Message(
    OPERATE, BITS, tuple(OPERATOR_METHODS.values()), _ask_operate, decode_operate, _serve_operate,
    advertised="operators", subject=lambda operator, arguments, state, count: operator,
    unserved="runs no {} operator"))

# Every tag a message may start with: the handshake, the answers every request may get, QUIT, and the table's.
TAGS = {HELLO, REJECT, FAIL, QUIT} | {m.tag for m in MESSAGES.values()} | {m.answer for m in MESSAGES.values()}
