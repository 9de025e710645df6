"""Fault-injection backends: they crash, hang, and return garbage on chosen cases.

The trigger is the tensor's sizes, so each fault hits a known case: sizes (7,) is
mapping/elements-7 and sizes (9,) is mapping/elements-9.
"""

from __future__ import annotations

import ctypes
import os
import time

import numpy as np

from rngcheck import reference
from rngcheck.backends import Backend

TRIGGER = (7,)


class Correct(Backend):
    name = "correct"
    validates = True

    def random_generator(self, state, sizes, strides, buffer, **kw):
        return reference.random_generator(state, sizes, strides, buffer, **kw)


class Segfaults(Correct):
    name = "segfaults"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if tuple(sizes) == TRIGGER:
            ctypes.string_at(0)  # a real SIGSEGV
        return super().random_generator(state, sizes, strides, buffer, **kw)


class Aborts(Correct):
    name = "aborts"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if tuple(sizes) == TRIGGER:
            os.abort()
        return super().random_generator(state, sizes, strides, buffer, **kw)


class Exits(Correct):
    name = "exits"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if tuple(sizes) == TRIGGER:
            os._exit(7)
        return super().random_generator(state, sizes, strides, buffer, **kw)


class SleepsForever(Correct):
    name = "sleeps-forever"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if tuple(sizes) == TRIGGER:
            time.sleep(3600)
        return super().random_generator(state, sizes, strides, buffer, **kw)


class Slow(Correct):
    """Correct but slow: keeps a run going long enough to be interrupted."""

    name = "slow"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        time.sleep(0.05)
        return super().random_generator(state, sizes, strides, buffer, **kw)


GARBAGE = {
    "float-state": lambda state: np.zeros(6, dtype=np.float32),
    "short-state": lambda state: np.zeros(5, dtype=np.uint32),
    "none-state": lambda state: None,
    "text-state": lambda state: "not a state",
    "negative-state": lambda state: np.full(6, -1, dtype=np.int64),
}


class ReturnsGarbage(Correct):
    """Returns one kind of garbage instead of the state on the trigger case."""

    def __init__(self, kind: str = "float-state"):
        self.kind = kind
        self.name = f"garbage-{kind}"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        result = super().random_generator(state, sizes, strides, buffer, **kw)
        if tuple(sizes) == TRIGGER:
            return GARBAGE[self.kind](state)
        return result


class RaisesArbitrary(Correct):
    name = "raises"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if tuple(sizes) == TRIGGER:
            raise KeyError("cache miss in the driver")
        return super().random_generator(state, sizes, strides, buffer, **kw)


class LowCounterOnly(Correct):
    """A library that can only express counters below 2^64 (as cuRAND can only express some):
    the others are not applicable, the rest computed right."""
    name = "low-counter-only"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        from rngcheck.errors import NotApplicable
        words = np.asarray(state).reshape(-1)
        if words[2] or words[3]:
            raise NotApplicable(f"counter words 2, 3 = {int(words[2])}, {int(words[3])}: only 64-bit counters")
        return super().random_generator(state, sizes, strides, buffer, **kw)


class PrintsNoise(Correct):
    """Prints to stdout on every call: isolated, this must not disturb the protocol."""

    name = "prints"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        print("driver: hello from the backend")
        return super().random_generator(state, sizes, strides, buffer, **kw)


class HangsEveryCall(Correct):
    """Every call of every worker hangs: without a restart cap, one full time limit per case."""

    name = "hangs-every-call"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        time.sleep(3600)


class HangsWhenRestarted(Correct):
    """The first worker answers until the trigger case, where it dies; every later worker hangs
    before its handshake (a driver that wedges after a crash). The marker file is named by
    RNGCHECK_FAULT_MARKER."""

    name = "hangs-when-restarted"

    def __init__(self):
        marker = os.environ["RNGCHECK_FAULT_MARKER"]
        if os.path.exists(marker):
            time.sleep(3600)

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if tuple(sizes) == TRIGGER:
            open(os.environ["RNGCHECK_FAULT_MARKER"], "w").close()
            os._exit(9)
        return super().random_generator(state, sizes, strides, buffer, **kw)


class HangsBeforeHandshake(Correct):
    """Never finishes loading (a kernel build that never ends)."""

    name = "hangs-before-handshake"

    def __init__(self):
        time.sleep(3600)


class WritesInputState(Correct):
    """An in-place kernel that binds one buffer for both state tensors: the advanced state ends up
    in the input state."""

    name = "writes-input-state"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        returned = super().random_generator(state, sizes, strides, buffer, **kw)
        if returned is not None:
            np.asarray(state).reshape(-1)[:6] = np.asarray(returned).reshape(-1)[:6]
        return returned


class FloodsStderr(Correct):
    """Writes 64 MiB to stderr on the trigger case, then answers correctly."""

    name = "floods-stderr"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if tuple(sizes) == TRIGGER:
            line = b"driver: debug " * 73 + b"\n"
            for _ in range((64 << 20) // len(line)):
                os.write(2, line)
            os.write(2, b"the last line of the flood\n")
        return super().random_generator(state, sizes, strides, buffer, **kw)


class ExitsAfterCalls(Correct):
    """Answers its first CALLS calls, then exits: a backend that dies in the middle of a stream."""
    name = "exits-after-calls"
    CALLS = 3

    def __init__(self):
        self.calls = 0

    def random_generator(self, state, sizes, strides, buffer, **kw):
        self.calls += 1
        if self.calls > self.CALLS:
            os._exit(9)
        return super().random_generator(state, sizes, strides, buffer, **kw)


class ExitsAtOnce(ExitsAfterCalls):
    name = "exits-at-once"
    CALLS = 0


# ---- the numbers layer (DRAW / NUMS): the trigger is a request for DRAW_TRIGGER numbers ----------
DRAW_TRIGGER = 7


class DrawsNumbers(Correct):
    """Draws every convention's numbers as the reference does (advertised in its HELO)."""

    name = "draws-numbers"
    conventions = ("tensorflow",)

    def random_numbers(self, request, state):
        from rngcheck import numbers
        return numbers.draw(numbers.Request.from_dict(request), state)


class DrawSegfaults(DrawsNumbers):
    name = "draw-segfaults"

    def random_numbers(self, request, state):
        if request["count"] == DRAW_TRIGGER:
            ctypes.string_at(0)  # a real SIGSEGV
        return super().random_numbers(request, state)


class DrawSleepsForever(DrawsNumbers):
    name = "draw-sleeps-forever"

    def random_numbers(self, request, state):
        if request["count"] == DRAW_TRIGGER:
            time.sleep(3600)
        return super().random_numbers(request, state)


class DrawNotApplicable(DrawsNumbers):
    """Cannot draw the trigger request (a count its library does not do in one call)."""

    name = "draw-not-applicable"

    def random_numbers(self, request, state):
        from rngcheck.errors import NotApplicable
        if request["count"] == DRAW_TRIGGER:
            raise NotApplicable(f"{DRAW_TRIGGER} numbers: not in one call")
        return super().random_numbers(request, state)


class DrawReturnsObjects(DrawsNumbers):
    """Returns Python objects on the trigger request: nothing NUMS can carry."""

    name = "draw-returns-objects"

    def random_numbers(self, request, state):
        if request["count"] == DRAW_TRIGGER:
            return np.array([object()] * DRAW_TRIGGER)
        return super().random_numbers(request, state)


def draw_child(mode: str) -> int:
    """A raw exec-protocol child that advertises the tensorflow convention and answers every DRAW
    with the reference's numbers, except on the trigger request (count DRAW_TRIGGER), where it:
    ``short-nums`` sends a NUMS one element's bytes short of its count; ``unknown-dtype`` names a
    dtype NUMS does not have; ``noise`` writes text to stdout; ``huge-nums`` announces a NUMS of
    4 GiB - 1 bytes and hangs; ``bad-conventions`` says HELO with conventions that are not a list
(and nothing else). It answers any CALL with FAIL, and writes every tag it receives to
    stderr ("draw-child got DRAW")."""
    import json
    import sys

    from rngcheck import numbers
    from rngcheck.backends import exec_protocol as P

    out, inp = os.fdopen(1, "wb"), os.fdopen(0, "rb")

    def send(data: bytes) -> None:
        out.write(data)
        out.flush()

    if mode == "bad-conventions":  # conventions as one string, not a list of names
        send(P.frame(P.HELLO, json.dumps({"protocol": P.PROTOCOL_VERSION, "name": "draw-child", "validates": True,
                                          "describe": {}, "conventions": "tensorflow"}).encode()))
        inp.read()
        return 0
    send(P.frame(P.HELLO, P.hello_payload(f"draw-child-{mode}", True, {"mode": mode}, conventions=("tensorflow",))))
    while True:
        header = inp.read(P.HEADER.size)
        if len(header) < P.HEADER.size:
            return 0
        tag, length = P.HEADER.unpack(header)
        payload = inp.read(length)
        print(f"draw-child got {tag.decode()}", file=sys.stderr, flush=True)
        if tag == P.QUIT:
            return 0
        if tag != P.DRAW:
            send(P.frame(P.FAIL, json.dumps({"error": f"draw-child answers DRAW only, not {tag!r}"}).encode()))
            continue
        request, state = P.decode_draw(payload)
        answer = P.encode_numbers(numbers.draw(numbers.Request.from_dict(request), state), request["dtype"])
        if request["count"] == DRAW_TRIGGER:
            if mode == "short-nums":
                width = P.NUMBER_DTYPES[request["dtype"]]
                answer = answer[:-width]
            elif mode == "unknown-dtype":
                name = request["dtype"].encode()
                answer = answer.replace(name, b"q" * len(name), 1)
            elif mode == "noise":
                send(b"driver: hello from the backend\n")
            elif mode == "huge-nums":
                send(P.HEADER.pack(P.NUMBERS, P.MAX_PAYLOAD))
                time.sleep(300)
        send(P.frame(P.NUMBERS, answer))


class FlipsBitOfElement5(Correct):
    """Right but for bit 0 of logical element 5 (when there is one): one fault, many failing cases."""

    name = "flips-bit-0-of-element-5"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        from rngcheck import layout

        returned = super().random_generator(state, sizes, strides, buffer, **kw)
        if layout.element_count(sizes) > 5:
            buffer[int(layout.physical_offsets(sizes, strides, 5, 1)[0])] ^= np.uint32(1)
        return returned


class NothingApplies(Correct):
    """Answers NotApplicable to every call: a backend on which nothing runs."""

    name = "nothing-applies"

    def random_generator(self, state, sizes, strides, buffer, **kw):
        from rngcheck.errors import NotApplicable

        raise NotApplicable("this backend implements nothing rngcheck asks")
