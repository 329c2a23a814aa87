#!/usr/bin/env python3
"""A man in the middle between a controller (the NAS) and an agent, for tests. It holds no
key: it relays length-prefixed frames and tampers with one of them.

  agent_mitm.py LISTEN_PORT AGENT_PORT ACTION [LOG]
    pass             relay everything unchanged (the control: the job must run)
    flip-c2a:N       flip one bit in the middle of the Nth frame controller -> agent
    replay-c2a:N     relay the Nth frame controller -> agent, then send it again
    flip-a2c:N       flip one bit in the middle of the Nth frame agent -> controller
    replay-a2c:N     relay the Nth frame agent -> controller, then send it again
    old-c2a:N        relays connections one after another; from the second on, the Nth
                     frame controller -> agent is replaced by the Nth frame of the first
                     connection (a frame recorded earlier, replayed into a new session)
Frames are counted from 0 in each direction: controller -> agent 0 is auth, 1 facts, 2 the
first job; agent -> controller 0 is hello, 1 auth_ok, 2 facts, then progress and result.
Each tampering is written to LOG (default stderr) as "mitm: ..." so tests can see it happened.
Serves connections until killed, each to 127.0.0.1:AGENT_PORT."""
import socket, struct, sys, threading

listen_port, agent_port, action = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
log = open(sys.argv[4], "a", buffering=1) if len(sys.argv) > 4 else sys.stderr
kind, _, n = action.partition(":")
n = int(n) if n else -1
recorded = {}   # (direction, index) -> frame bytes of the first connection
conn_no = 0


def read_exact(s, k):
    b = b""
    while len(b) < k:
        c = s.recv(k - len(b))
        if not c:
            return None
        b += c
    return b


def pump(src, dst, direction, conn):
    i = 0
    try:
        while True:
            hdr = read_exact(src, 4)
            if hdr is None:
                break
            body = read_exact(src, struct.unpack(">I", hdr)[0])
            if body is None:
                break
            frame = hdr + body
            if conn == 0:
                recorded[(direction, i)] = frame
            if i == n and kind == "flip-" + direction:
                b = bytearray(frame)
                b[4 + len(body) // 2] ^= 0x01
                frame = bytes(b)
                log.write("mitm: flipped a bit of %s frame %d\n" % (direction, i))
            if i == n and kind == "old-" + direction and conn > 0 and (direction, i) in recorded:
                frame = recorded[(direction, i)]
                log.write("mitm: replaced %s frame %d with the first connection's\n" % (direction, i))
            dst.sendall(frame)
            if i == n and kind == "replay-" + direction:
                dst.sendall(frame)
                log.write("mitm: replayed %s frame %d\n" % (direction, i))
            i += 1
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", listen_port))
ls.listen(8)
log.write("mitm: listening\n")
while True:
    c, _ = ls.accept()
    a = socket.create_connection(("127.0.0.1", agent_port))
    t1 = threading.Thread(target=pump, args=(c, a, "c2a", conn_no), daemon=True)
    t2 = threading.Thread(target=pump, args=(a, c, "a2c", conn_no), daemon=True)
    t1.start()
    t2.start()
    if kind == "old-c2a":
        # One connection at a time, so "the first" is well defined.
        t1.join()
        t2.join()
    conn_no += 1
