"""Host a Python backend in its own process: ``python -m rngcheck.backends.worker SPEC``.

It speaks the exec protocol on the stdout it was started with; anything the backend itself
prints goes to stderr, so it cannot corrupt the protocol.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

from ..errors import one_line
from . import exec_protocol as P


class Channel:
    def __init__(self, read_fd: int, write_fd: int):
        self.reader = os.fdopen(read_fd, "rb", buffering=1 << 20)
        self.writer = os.fdopen(write_fd, "wb", buffering=1 << 20)

    def send(self, tag: bytes, payload: bytes = b"") -> None:
        self.writer.write(P.frame(tag, payload))
        self.writer.flush()

    def receive(self) -> tuple[bytes, bytes] | None:
        header = self.reader.read(P.HEADER.size)
        if len(header) < P.HEADER.size:
            return None
        tag, length = P.HEADER.unpack(header)
        return tag, self.reader.read(length)


def serve(backend, channel: Channel) -> int:
    """Answer CALLs, DRAWs, GENBs and OPERs with the backend until QUIT or end of input."""
    while True:
        message = channel.receive()
        if message is None or message[0] == P.QUIT:
            return 0
        tag, payload = message
        if tag == P.DRAW:
            draw(backend, channel, payload)
            continue
        if tag == P.GENERATE:
            generate(backend, channel, payload)
            continue
        if tag == P.OPERATE:
            operate(backend, channel, payload)
            continue
        if tag != P.CALL:
            print(f"worker: unexpected message {tag!r}", file=sys.stderr)
            return 3
        # The answer is made in a function of its own: a shared buffer's mapping (rngcheck.sharedmem)
        # ends with it, before the runner hears the answer, whatever the answer is.
        channel.send(*answer_call(backend, payload))


def answer_call(backend, payload: bytes) -> tuple[bytes, bytes]:
    """(tag, payload) answering one CALL: DONE, RJCT or FAIL."""
    from ..errors import NotApplicable, Rejected

    try:
        call = P.decode_call(payload)
    except Exception as error:
        return P.FAIL, json.dumps({"error": f"worker cannot decode the CALL: {one_line(error)}"}).encode()
    buffer = call.pop("buffer")
    shared = call.pop("shared", False)
    state = call["state"]
    try:
        returned = backend.random_generator(call["state"], call["sizes"], call["strides"], buffer,
                                            output_state=call["output_state"],
                                            feature_level=call["feature_level"])
    except Rejected as error:
        return P.REJECT, json.dumps({"message": str(error), "rule": getattr(error, "rule", None)}).encode()
    except NotApplicable as error:
        return P.FAIL, json.dumps({"error": str(error), "not_applicable": True}).encode()
    except Exception as error:
        traceback.print_exc(file=sys.stderr)
        return P.FAIL, json.dumps({"error": one_line(error)}).encode()
    # The input state as the backend left it: the runner compares it with what it sent
    # (input-state-modified), as it does for an in-process backend.
    return P.DONE, P.encode_done(returned, buffer, state, shared=shared)


def draw(backend, channel: Channel, payload: bytes) -> None:
    """Answer one DRAW: NUMS with the backend's numbers, or RJCT / FAIL as for a CALL."""
    try:
        request, state = P.decode_draw(payload)
    except Exception as error:
        channel.send(P.FAIL, json.dumps({"error": f"worker cannot decode the DRAW: {one_line(error)}"}).encode())
        return
    random_numbers = getattr(backend, "random_numbers", None)
    if not callable(random_numbers):
        channel.send(P.FAIL, json.dumps({"error": "the backend draws no numbers", "not_applicable": True}).encode())
        return
    answer(channel, P.NUMBERS, lambda: P.encode_numbers(random_numbers(request, state), request.get("dtype")))


def generate(backend, channel: Channel, payload: bytes) -> None:
    """Answer one GENB: BLKS with the backend's generator blocks, or FAIL."""
    try:
        generator, rounds, counters, key = P.decode_generate(payload)
    except Exception as error:
        channel.send(P.FAIL, json.dumps({"error": f"worker cannot decode the GENB: {one_line(error)}"}).encode())
        return
    generator_blocks = getattr(backend, "generator_blocks", None)
    if not callable(generator_blocks):
        channel.send(P.FAIL, json.dumps({"error": "the backend computes no generator blocks",
                                         "not_applicable": True}).encode())
        return
    answer(channel, P.BLOCKS, lambda: P.encode_blocks(generator_blocks(generator, rounds, counters, key)))


def answer(channel: Channel, tag: bytes, compute) -> None:
    """Send ``tag`` with ``compute()``'s payload, or the RJCT / FAIL that its exception is."""
    from ..errors import NotApplicable, Rejected

    try:
        payload = compute()
    except Rejected as error:
        channel.send(P.REJECT, json.dumps({"message": str(error), "rule": getattr(error, "rule", None)}).encode())
    except NotApplicable as error:
        channel.send(P.FAIL, json.dumps({"error": str(error), "not_applicable": True}).encode())
    except Exception as error:
        traceback.print_exc(file=sys.stderr)
        channel.send(P.FAIL, json.dumps({"error": one_line(error)}).encode())
    else:
        channel.send(tag, payload)


def operate(backend, channel: Channel, payload: bytes) -> None:
    """Answer one OPER: BITS with the operator's new state and output, or RJCT / FAIL as for a CALL."""
    try:
        operator, arguments, state = P.decode_operate(payload)
    except Exception as error:
        channel.send(P.FAIL, json.dumps({"error": f"worker cannot decode the OPER: {one_line(error)}"}).encode())
        return
    method = getattr(backend, operator_method(operator), None)
    if operator not in tuple(getattr(backend, "operators", ()) or ()) or not callable(method):
        channel.send(P.FAIL, json.dumps({"error": f"the backend runs no {operator} operator",
                                         "not_applicable": True}).encode())
        return
    def bits() -> bytes:
        new_state, output = method(state=state, **arguments)
        return P.encode_bits(new_state, output)

    answer(channel, P.BITS, bits)


def operator_method(operator: str) -> str:
    """The contract method of an operator (rngcheck.backends.contract.OPERATOR_METHODS)."""
    from .contract import OPERATOR_METHODS

    return OPERATOR_METHODS.get(operator, "")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Keep the protocol on a private copy of stdout; the backend's prints go to stderr.
    protocol_out = os.dup(1)
    protocol_in = os.dup(0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # a backend that reads stdin must not eat protocol bytes
    os.close(devnull)
    sys.stdout = sys.stderr
    channel = Channel(protocol_in, protocol_out)
    if len(argv) != 1:
        channel.send(P.HELLO, P.hello_payload("", False, {}, error="usage: python -m rngcheck.backends.worker SPEC"))
        return 2
    from ..errors import BackendUnavailable, RngcheckError
    from . import load

    try:
        backend = load(argv[0])
        hello = P.hello_payload(str(getattr(backend, "name", argv[0])), bool(getattr(backend, "validates", False)),
                                {str(k): str(v) for k, v in dict(backend.describe() or {}).items()},
                                conventions=tuple(getattr(backend, "conventions", ()) or ()),
                                generators=tuple(getattr(backend, "generators", ()) or ()),
                                operators=tuple(getattr(backend, "operators", ()) or ()))
        hello = P.with_shared_buffers(hello)
    except BackendUnavailable as error:
        channel.send(P.HELLO, P.hello_payload("", False, {}, error=str(error), unavailable=True))
        return 2
    except RngcheckError as error:
        channel.send(P.HELLO, P.hello_payload("", False, {}, error=str(error)))
        return 2
    except Exception as error:
        channel.send(P.HELLO, P.hello_payload("", False, {}, error=f"{argv[0]}: {one_line(error)}"))
        return 2
    channel.send(P.HELLO, hello)
    try:
        return serve(backend, channel)
    finally:
        try:
            backend.close()
        except Exception:
            pass


if __name__ == "__main__":
    sys.exit(main())
