"""The exec protocol's kinds of request are one table (rngcheck.backends.exec_protocol.MESSAGES).

The runner (ExecBackend) and the worker each have one path for every entry: every contract method
of the backend goes through the table's entry for it, the worker answers exactly the table's
requests, and a kind added to the table crosses both ways with nothing else changed. The table
changes no byte on the wire: each request is its documented encoder's bytes.
"""

import inspect
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import rngcheck
from rngcheck import counter, numbers
from rngcheck.backends import Backend, worker
from rngcheck.backends import exec_protocol as P
from rngcheck.backends.contract import OPERATOR_METHODS
from rngcheck.backends.exec_backend import ExecBackend, isolated
from rngcheck.backends.reference import NumpyBackend
from rngcheck.errors import NotApplicable
from rngcheck.registry import Registry

TESTS = Path(__file__).parent
ROOT = Path(rngcheck.__file__).parents[1]
STATE = counter.make_state(5, 0x0123456789ABCDEF)

# Backend's methods that are not calls of the implementation under test: every other one is (rule 1).
NOT_CALLS = {"describe", "close", "from_options", "generator_request", "numbers_request"}
# One call of each contract method (its arguments as the suite passes them).
CALLS = {
    "random_generator": lambda: (STATE.copy(), (8,), None, np.zeros(8, dtype=np.uint32)),
    "random_numbers": lambda: (numbers.Request("tensorflow", numbers.NORMAL, "float32", 4).to_dict(), STATE),
    "generator_blocks": lambda: ("philox4x32", 10, np.arange(8, dtype=np.uint32).reshape(2, 4), (1, 2)),
    "rng_bit_generator": lambda: ("PHILOX", np.array([1, 2, 3], dtype=np.uint64), (2, 3), "uint32"),
}


def test_the_table_is_every_request_and_its_answer():
    entries = P.MESSAGES.values()
    assert [m.name for m in entries] == list(P.MESSAGES.names()) == ["CALL", "DRAW", "GENB", "OPER"]
    requests, answers = [m.tag for m in entries], [m.answer for m in entries]
    assert len(set(requests + answers)) == 2 * len(entries)
    assert P.TAGS == {P.HELLO, P.REJECT, P.FAIL, P.QUIT} | set(requests) | set(answers)
    assert {m.advertised for m in entries} == {"", "conventions", "generators", "operators"}


def test_every_contract_call_is_one_entry_of_the_table():
    calls = {name for name, member in inspect.getmembers(Backend, inspect.isfunction)
             if not name.startswith("_") and name not in NOT_CALLS}
    carried = [method for message in P.MESSAGES.values() for method in message.methods]
    assert sorted(carried) == sorted(calls) == sorted(CALLS)
    assert P.OTHER_OPERATOR.methods == tuple(OPERATOR_METHODS.values())


def test_every_contract_method_of_the_exec_backend_goes_through_the_one_exchange(monkeypatch):
    backend = isolated("numpy")
    asked = []
    monkeypatch.setattr(backend, "_ask", lambda message, *arguments: asked.append(message) or "answer")
    try:
        for message in P.MESSAGES.values():
            for method in message.methods:
                asked.clear()
                assert getattr(backend, method)(*CALLS[method]()) == "answer"
                assert asked == [message], method
            if message.advertised:   # the capability property is the HELO list the entry names
                assert isinstance(inspect.getattr_static(ExecBackend, message.advertised), property)
                assert getattr(backend, message.advertised) == tuple(backend.child.hello[message.advertised])
    finally:
        backend.close()


def test_the_exec_backend_keeps_to_twenty_methods():
    methods = [name for name, member in vars(ExecBackend).items()
               if inspect.isfunction(member) or isinstance(member, (property, classmethod, staticmethod))]
    assert len(methods) <= 20, methods


def test_each_request_crosses_as_its_documented_bytes():
    """What ExecBackend sends for each call is exactly its encoder's payload (docs/exec-protocol.md)."""
    backend = isolated("numpy")
    sent = []
    send = backend.child.send
    backend.child.send = lambda data, deadline: (sent.append(bytes(data)), send(data, deadline))[1]
    expected = {
        "random_generator": lambda state, sizes, strides, buffer: P.frame(
            P.CALL, P.encode_call(state, sizes, strides, buffer, True, (4, 0))),
        "random_numbers": lambda request, state: P.frame(P.DRAW, P.encode_draw(request, state)),
        "generator_blocks": lambda *arguments: P.frame(P.GENERATE, P.encode_generate(*arguments)),
        "rng_bit_generator": lambda algorithm, state, shape, dtype: P.frame(P.OPERATE, P.encode_operate(
            "stablehlo", {"algorithm": algorithm, "shape": list(shape), "dtype": dtype}, state)),
    }
    try:
        for method, arguments in CALLS.items():
            sent.clear()
            call = arguments()
            want = expected[method](*arguments())
            getattr(backend, method)(*call)
            assert sent == [want], method
    finally:
        backend.close()


def test_a_helo_with_lists_is_the_documented_bytes():
    assert P.hello_payload("x", True, {"version": "1"}, operators=("stablehlo",), conventions=("tensorflow",)) == (
        b'{"protocol": 1, "name": "x", "validates": true, "describe": {"version": "1"}, '
        b'"conventions": ["tensorflow"], "operators": ["stablehlo"]}')
    with pytest.raises(TypeError, match="no HELO list colours"):
        P.hello_payload("x", True, {}, colours=("red",))


def test_the_worker_answers_exactly_the_tables_requests():
    """Each table request reaches its entry (an undecodable one is FAIL naming it); anything else, an
    answer's tag included, ends the worker."""
    to_worker, from_worker = os.pipe(), os.pipe()
    for message in P.MESSAGES.values():
        os.write(to_worker[1], P.frame(message.tag, b"\xff"))
    os.write(to_worker[1], P.frame(P.DONE, b""))
    os.close(to_worker[1])
    status = worker.serve(Backend(), worker.Channel(to_worker[0], from_worker[1]))
    assert status == 3
    reader = os.fdopen(from_worker[0], "rb")
    for message in P.MESSAGES.values():
        tag, length = P.HEADER.unpack(reader.read(P.HEADER.size))
        body = json.loads(reader.read(length))
        assert tag == P.FAIL and body["error"].startswith(f"worker cannot decode the {message.name}: "), body
    reader.close()


# -- a new kind of request: one entry, nothing else ------------------------------------------------
ECHO = P.Message(b"ECHO", b"OHCE", ("echo",),
                 ask=lambda hello, text: P.Exchange(text.encode(), 4 * len(text), lambda answer: answer.decode()),
                 decode=lambda payload: (bytes(payload).decode(),),
                 serve=lambda backend, text: backend.echo(text).encode(),
                 advertised="echoes", subject=lambda text: text.split()[0], unserved="echoes no {!r}")


class Echoes(NumpyBackend):
    """The reference, and a backend of the new kind: it echoes what starts with a word it advertises."""

    name = "echoes"
    echoes = ("hello",)

    def echo(self, text: str) -> str:
        return text.upper()


def with_echo(registry: Registry) -> Registry:
    table: Registry[P.Message] = Registry("exec-protocol request", error=P.ProtocolError)
    for name, message in registry.items():
        table.add(name, message)
    table.add(ECHO.name, ECHO)
    return table


def echo_worker(spec: str) -> int:
    """The worker, in its own process, with ECHO in its table (this file run as the child)."""
    P.MESSAGES = with_echo(P.MESSAGES)
    return worker.main([spec])


def test_a_kind_added_to_the_table_crosses_both_ways(monkeypatch):
    monkeypatch.setattr(P, "MESSAGES", with_echo(P.MESSAGES))
    monkeypatch.setattr(P, "TAGS", P.TAGS | {ECHO.tag, ECHO.answer})
    code = (f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(TESTS)!r}]; import test_exec_messages as t; "
            f"sys.exit(t.echo_worker({str(TESTS / 'test_exec_messages.py') + ':Echoes'!r}))")
    backend = ExecBackend([sys.executable, "-c", code], timeout=60, label="echo-child")
    try:
        assert backend.child.hello["echoes"] == ["hello"]          # advertised by the worker's HELO, checked here
        assert backend._ask(ECHO, "hello there") == "HELLO THERE"
        with pytest.raises(NotApplicable, match=r"echo-child echoes no 'bye' \(its handshake advertises \['hello'\]\)"):
            backend._ask(ECHO, "bye now")
        buffer = np.zeros(4, dtype=np.uint32)
        assert backend.random_generator(STATE.copy(), (4,), None, buffer, output_state=False) is None
        assert np.array_equal(buffer, rngcheck.reference.words(STATE, 0, 4))   # the other kinds as before
    finally:
        backend.close()


if __name__ == "__main__":
    sys.exit(echo_worker(sys.argv[1]))
