"""Host a Python backend in its own process: ``python -m rngcheck.backends.worker SPEC``.

It speaks the exec protocol on the stdout it was started with; anything the backend itself
prints goes to stderr, so it cannot corrupt the protocol. Every request is answered the same way,
by its entry of the protocol's table (exec_protocol.MESSAGES): ``serve`` looks the tag up there,
and ``answer`` decodes it and has the entry serve it with the backend.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

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
    """Answer each request of the protocol's table (exec_protocol.MESSAGES, by its tag) with the
    backend, until QUIT or end of input; any other message ends the worker (status 3)."""
    while True:
        message = channel.receive()
        if message is None or message[0] == P.QUIT:
            return 0
        tag, payload = message
        kind = P.MESSAGES.find(tag.decode(errors="replace"))
        if kind is None:
            print(f"worker: unexpected message {tag!r}", file=sys.stderr)
            return 3
        # The answer is made in a function of its own: a shared buffer's mapping (rngcheck.sharedmem)
        # ends with it, before the runner hears the answer, whatever the answer is.
        channel.send(*answer(backend, kind, payload))


def answer(backend, kind: P.Message, payload: bytes) -> tuple[bytes, bytes]:
    """(tag, payload) answering one request of ``kind``: its answer, or the RJCT / FAIL that its
    undecodable payload or the backend's exception is (exec_protocol's rule 4)."""
    from ..errors import NotApplicable, Rejected

    try:
        arguments = kind.decode(payload)
    except Exception as error:
        return P.FAIL, json.dumps({"error": f"worker cannot decode the {kind.name}: {one_line(error)}"}).encode()
    try:
        return kind.answer, kind.serve(backend, *arguments)
    except Rejected as error:
        return P.REJECT, json.dumps({"message": str(error), "rule": getattr(error, "rule", None)}).encode()
    except NotApplicable as error:
        return P.FAIL, json.dumps({"error": str(error), "not_applicable": True}).encode()
    except Exception as error:
        traceback.print_exc(file=sys.stderr)
        return P.FAIL, json.dumps({"error": one_line(error)}).encode()


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
        name, validates = str(getattr(backend, "name", argv[0])), bool(getattr(backend, "validates", False))
        described = {str(k): str(v) for k, v in dict(backend.describe() or {}).items()}
        # what it serves of the optional kinds, by their HELO lists (conventions, generators, operators)
        served: dict[str, Any] = {message.advertised: tuple(getattr(backend, message.advertised, ()) or ())
                                  for message in P.MESSAGES.values() if message.advertised}
        hello = P.hello_payload(name, validates, described, **served)
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
