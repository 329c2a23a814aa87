#!/usr/bin/env python3
"""A hostile or honest controller for tests: speaks the agent protocol (4-byte length + JSON,
mutual HMAC-SHA256 handshake, include/agent_proto.h) and sends what it is told.

  agent_peer.py [HOST:]PORT KEYFILE SCRIPT   where SCRIPT is one of:
    ok           handshake, ask for facts, print them
    bigframe     handshake, then a 2 MiB length prefix
    garbage      handshake, then a framed non-JSON body
    badjob       handshake, then a job with size 2^50 and one with an unknown workload
    unknown      handshake, then an unknown message type, then facts
    preauth      no handshake: a job right after hello
Prints one line per reply: the reply's type and error (if any)."""
import hashlib, hmac, json, os, socket, struct, sys

hostport, keyfile, script = sys.argv[1], sys.argv[2], sys.argv[3]
host, _, port = hostport.rpartition(":")
key = bytes.fromhex(open(keyfile).read().strip())
s = socket.create_connection((host or "127.0.0.1", int(port)), timeout=10)

def send(obj):
    obj["v"] = 1
    b = json.dumps(obj).encode()
    s.sendall(struct.pack(">I", len(b)) + b)

def recv():
    try:
        return _recv()
    except (ConnectionResetError, BrokenPipeError):
        return None

def _recv():
    hdr = b""
    while len(hdr) < 4:
        c = s.recv(4 - len(hdr))
        if not c:
            return None
        hdr += c
    n = struct.unpack(">I", hdr)[0]
    body = b""
    while len(body) < n:
        c = s.recv(n - len(body))
        if not c:
            return None
        body += c
    return json.loads(body)

def mac(label, a, b):
    return hmac.new(key, ("%s\n%s\n%s" % (label, a, b)).encode(), hashlib.sha256).hexdigest()

def show(m):
    print("reply:", "closed" if m is None else m["type"], "" if m is None else m.get("error", ""))
    sys.stdout.flush()

hello = recv()
assert hello and hello["type"] == "hello", hello
if script == "preauth":
    send({"type": "job", "workload": "seq-read", "protocol": "smb", "target": "smb://h/s"})
    show(recv())
    show(recv())
    sys.exit(0)
nc = os.urandom(32).hex()
send({"type": "auth", "nonce": nc, "mac": mac("nastune-agent-1 controller", hello["nonce"], nc)})
ok = recv()
show(ok)
if ok["type"] != "auth_ok" or not hmac.compare_digest(ok["mac"], mac("nastune-agent-1 agent", nc, hello["nonce"])):
    print("agent proof wrong")
    sys.exit(1)
if script == "ok":
    send({"type": "facts"})
    show(recv())
elif script == "bigframe":
    s.sendall(struct.pack(">I", 2 << 20) + b"x" * 1024)
    show(recv())
    show(recv())
elif script == "garbage":
    s.sendall(struct.pack(">I", 9) + b"{nonsense")
    show(recv())
    show(recv())
elif script == "badjob":
    send({"type": "job", "id": 1, "workload": "seq-read", "protocol": "smb", "target": "smb://h/s", "options": {"size": 1 << 50}})
    show(recv())
    send({"type": "job", "id": 2, "workload": "nope", "protocol": "smb", "target": "smb://h/s"})
    show(recv())
elif script == "unknown":
    send({"type": "shell", "cmd": "rm -rf /"})
    show(recv())
    send({"type": "facts"})
    show(recv())
