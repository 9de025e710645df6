"""A raw exec-protocol child with faults, for `exec:python tests/exec_child.py MODE`.

Modes: ok (correct), noise (writes junk to stdout on the trigger case), exit-mid (writes
half a DONE and exits on the trigger case), short-buffer (returns a buffer one word short),
deaf (closes its stdout on the trigger case and keeps running), grandchild (starts
`sleep 301` and hangs on the trigger case), bad-reject (answers the trigger case with a RJCT
that is not JSON), no-hello (never says HELO), bad-version (says protocol 99), hello-list
(a HELO that is JSON but not an object), setsid (on the trigger case starts a grandchild that
leaves the session with setsid() and keeps stdout, then exits), huge-done (announces a DONE of
4 GiB - 1 bytes on the trigger case and hangs). Every mode first writes one line to stderr
("exec-child MODE: started"), which a failure's stderr tail carries.
"""

import json
import os
import subprocess
import sys
import time

from rngcheck import Rejected, reference
from rngcheck.backends import exec_protocol as P

TRIGGER = (7,)


def main(mode: str) -> int:
    out = os.fdopen(1, "wb")
    inp = os.fdopen(0, "rb")
    print(f"exec-child {mode}: started", file=sys.stderr, flush=True)

    def send(tag, payload=b""):
        out.write(P.frame(tag, payload))
        out.flush()

    if mode == "no-hello":
        inp.read()
        return 0
    if mode == "hello-list":
        send(P.HELLO, b"[1]")
        inp.read()
        return 0
    version = 99 if mode == "bad-version" else P.PROTOCOL_VERSION
    send(P.HELLO, json.dumps({"protocol": version, "name": f"exec-child-{mode}", "validates": True,
                              "describe": {"mode": mode}}).encode())
    while True:
        header = inp.read(P.HEADER.size)
        if len(header) < P.HEADER.size:
            return 0
        tag, length = P.HEADER.unpack(header)
        payload = inp.read(length)
        if tag == P.QUIT:
            return 0
        call = P.decode_call(payload)
        buffer = call.pop("buffer")
        trigger = tuple(call["sizes"]) == TRIGGER
        if trigger and mode == "deaf":
            out.close()
            time.sleep(300)
        if trigger and mode == "grandchild":
            subprocess.Popen(["sleep", "301"])
            time.sleep(300)
        if trigger and mode == "setsid":
            if os.fork() == 0:
                os.setsid()
                os.execvp("sleep", ["sleep", "302"])  # keeps the protocol pipe open
            os._exit(0)
        if trigger and mode == "huge-done":
            out.write(P.HEADER.pack(P.DONE, P.MAX_PAYLOAD) + b"\0" * 64)
            out.flush()
            time.sleep(300)
        if trigger and mode == "bad-reject":
            send(P.REJECT, b"not json")
            continue
        try:
            state = reference.random_generator(call["state"], call["sizes"], call["strides"], buffer,
                                               output_state=call["output_state"],
                                               feature_level=call["feature_level"])
        except Rejected as error:
            send(P.REJECT, json.dumps({"message": str(error), "rule": error.rule}).encode())
            continue
        done = P.encode_done(state, buffer)
        if trigger and mode == "noise":
            out.write(b"hello from printf debugging\n")
            out.flush()
        if trigger and mode == "exit-mid":
            out.write(P.frame(P.DONE, done)[:len(done) // 2])
            out.flush()
            os._exit(0)
        if trigger and mode == "short-buffer":
            done = P.encode_done(state, buffer[:-1])
        send(P.DONE, done)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
