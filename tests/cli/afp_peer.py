#!/usr/bin/env python3
"""A stand-in AFP server for CLI tests (afpd is not installed outside the lab): answers
DSIGetStatus (AFP3.4; login methods "No User Authent", "DHX2", "Cleartxt Passwrd") and
DSIOpenSession, then refuses every FPLogin with kFPUserNotAuth after writing the login
method and user name it was asked for as one line "UAM|USER" to LOGFILE.

  afp_peer.py LOGFILE     prints the port it listens on (127.0.0.1), serves until killed."""
import socket, struct, sys

log = sys.argv[1]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4)
print(srv.getsockname()[1], flush=True)


def pstr(s):
    return bytes([len(s)]) + s.encode()


def status():
    name = pstr("fake")
    machine = pstr("Fake")
    vers = bytes([1]) + pstr("AFP3.4")
    uams = bytes([3]) + pstr("No User Authent") + pstr("DHX2") + pstr("Cleartxt Passwrd")
    head = 10 + len(name)
    off_m = head
    off_v = off_m + len(machine)
    off_u = off_v + len(vers)
    return struct.pack(">HHHHH", off_m, off_v, off_u, 0, 0) + name + machine + vers + uams


def recv_all(c, n):
    b = b""
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            raise EOFError
        b += d
    return b


def serve(c):
    while True:
        h = recv_all(c, 16)
        _, cmd, rid, _, length, _ = struct.unpack(">BBHIII", h)
        body = recv_all(c, length)
        code, data = 0, b""
        if cmd == 3:                    # DSIGetStatus
            data = status()
        elif cmd == 4:                  # DSIOpenSession: server request quantum 1 MiB
            data = bytes([0, 4]) + struct.pack(">I", 1 << 20)
        elif cmd == 2 and body[:1] == bytes([18]):      # FPLogin
            p = 1
            p += 1 + body[p]            # AFP version
            uam = body[p + 1:p + 1 + body[p]].decode()
            p += 1 + body[p]
            user = body[p + 1:p + 1 + body[p]].decode() if p < len(body) else ""
            with open(log, "a") as f:
                f.write("%s|%s\n" % (uam, user))
            code = -5023
        elif cmd == 1:                  # DSICloseSession
            return
        else:
            code = -5019
        c.sendall(struct.pack(">BBHiII", 1, cmd, rid, code, len(data), 0) + data)


while True:
    c, _ = srv.accept()
    try:
        serve(c)
    except (EOFError, ConnectionError):
        pass
    c.close()
