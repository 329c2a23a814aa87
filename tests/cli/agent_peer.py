#!/usr/bin/env python3
"""A hostile or honest peer for tests, speaking the agent protocol (include/agent_proto.h,
version 2) with its own implementation of it: 4-byte length + JSON for the handshake, the
mutual HMAC-SHA256 handshake, then frames of seq(8) || JSON || HMAC-SHA256 under session keys
from HKDF-SHA256 (written here from RFC 5869 with hmac, independently of OpenSSL).

As a controller (connects to an agent):
  agent_peer.py [--source ADDR[,ADDR...]] [HOST:]PORT KEYFILE SCRIPT   where SCRIPT is one of:
    ok           handshake, ask for facts, print them
    bigframe     handshake, then a 2 MiB length prefix
    garbage      handshake, then an authenticated frame whose body is not JSON
    badmac       handshake, then a facts frame with a wrong MAC
    replay       handshake, facts, then the same facts frame again
    badjob       handshake, then a job with size 2^50 and one with an unknown workload
    force        handshake, then a job on the NAS with "force": true
    elsewhere    handshake, then a job against another host than this controller
    fileout      handshake, then a file:// job outside the agent's --mount list (KEYFILE's dir)
    unknown      handshake, then an unknown message type, then facts
    preauth      no handshake: a job right after hello
    wrongnas     handshake naming another address than the one it connects from
    authidle:N:SECS  N authenticated sessions (the key holder's), idle for SECS seconds;
                 prints how many were still open at the end
    hold:N:SECS  no handshake: keeps N connections open (reopening those the agent closes)
                 for SECS seconds; prints how many got a hello, how many of those were
                 open at once, and how long the longest one lived
As a fake agent (the NAS connects to it):
  agent_peer.py --fake-agent [HOST:]PORT KEYFILE MODE   where MODE is one of:
    badproof     answers auth with auth_ok and a MAC over the wrong nonce order
    reflect      answers with the controller's own MAC
    noproof      answers auth with facts, skipping auth_ok
    good         a correct proof (then prints what the NAS sends, and closes)
    evil         a correct proof, then facts and a result whose host name and target hold
                 escape sequences and a newline (a forged "generation 42 installed" line)
    errpre       answers auth with an unauthenticated error holding the same
    busy         a correct proof, then "busy: ..." (authenticated) in answer to facts
    stream       a correct proof, facts, then progress frames for any job, every 0.1 s,
                 never a result (until the NAS hangs up, or 120 s)
  Serves one connection, then prints "nas sent: TYPE" for each message after its answer
  ("nas sent: closed" at the end).
Prints one line per reply: the reply's type and error (if any)."""
import hashlib, hmac, json, os, socket, struct, sys, time

args = sys.argv[1:]
source = None
fake = False
while args and args[0].startswith("--"):
    if args[0] == "--source":
        source = args[1]
        args = args[2:]
    elif args[0] == "--fake-agent":
        fake = True
        args = args[1:]
hostport, keyfile, script = args
host, _, port = hostport.rpartition(":")
host = host.strip("[]") or "127.0.0.1"
key = bytes.fromhex(open(keyfile).read().strip())
FORGED = "evil\x1b[2J\x1b[31m\ngeneration 42 installed"
L_CTRL, L_AGENT = "nastune-agent-2 controller", "nastune-agent-2 agent"


def hkdf(ikm, salt, info):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()


def mac(label, a, b):
    return hmac.new(key, ("%s\n%s\n%s" % (label, a, b)).encode(), hashlib.sha256).hexdigest()


class Conn:
    def __init__(self, s):
        self.s = s
        self.ksend = self.krecv = None
        self.seq_send = self.seq_recv = 0

    def session(self, na, nc, controller):
        salt = bytes.fromhex(na) + bytes.fromhex(nc)
        to_agent = hkdf(key, salt, b"nastune-agent-2 controller to agent")
        to_ctrl = hkdf(key, salt, b"nastune-agent-2 agent to controller")
        self.ksend, self.krecv = (to_agent, to_ctrl) if controller else (to_ctrl, to_agent)

    def frame(self, obj, seq=None):
        obj["v"] = 2
        j = json.dumps(obj).encode()
        return self.seal(j, seq)

    def seal(self, body, seq=None):
        if seq is None:
            seq = self.seq_send
            self.seq_send += 1
        b = struct.pack(">Q", seq) + body
        b += hmac.new(self.ksend, b, hashlib.sha256).digest()
        return struct.pack(">I", len(b)) + b

    def send(self, obj):
        if self.ksend:
            self.s.sendall(self.frame(obj))
        else:
            obj["v"] = 2
            b = json.dumps(obj).encode()
            self.s.sendall(struct.pack(">I", len(b)) + b)

    def raw(self):
        hdr = self._read(4)
        if hdr is None:
            return None
        return self._read(struct.unpack(">I", hdr)[0])

    def _read(self, n):
        b = b""
        while len(b) < n:
            try:
                c = self.s.recv(n - len(b))
            except (ConnectionResetError, BrokenPipeError, socket.timeout):
                return None
            if not c:
                return None
            b += c
        return b

    def recv(self):
        b = self.raw()
        if b is None:
            return None
        if not self.krecv:
            return json.loads(b)
        seq, body, tag = struct.unpack(">Q", b[:8])[0], b[8:-32], b[-32:]
        want = hmac.new(self.krecv, b[:-32], hashlib.sha256).digest()
        if not hmac.compare_digest(tag, want) or seq != self.seq_recv:
            return {"type": "FORGED", "error": "frame failed its check (seq %d)" % seq}
        self.seq_recv += 1
        return json.loads(body)


def show(m):
    print("reply:", "closed" if m is None else m["type"], "" if m is None else m.get("error", ""))
    sys.stdout.flush()


_next_source = [0]


def connect():
    v6 = ":" in host
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_STREAM)
    if source:
        # A comma-separated list: one address after the other, round robin.
        srcs = source.split(",")
        s.bind((srcs[_next_source[0] % len(srcs)], 0))
        _next_source[0] += 1
    s.settimeout(10)
    s.connect((host, int(port)))
    return s


def hold(n, secs):
    """Idle unauthenticated connections: never answers hello."""
    import selectors
    sel = selectors.DefaultSelector()
    opened = {}
    hellos = 0
    most = 0        # connections in the handshake (answered with hello) at one time
    longest = 0.0
    end = time.time() + secs

    def open_one():
        try:
            s = connect()
        except OSError:
            return
        s.setblocking(False)
        opened[s] = [time.time(), False]
        sel.register(s, selectors.EVENT_READ)

    for _ in range(n):
        open_one()
    while time.time() < end:
        # Read everything ready first, then count: the agent closes a connection at its
        # deadline before it greets the next one, and both can be ready in one batch, so
        # closes are taken before hellos (or a batch could count both at once).
        ready = []
        for k, _ in sel.select(timeout=0.2):
            s = k.fileobj
            try:
                data = s.recv(4096)
            except (ConnectionResetError, BlockingIOError):
                data = b""
            ready.append((s, data))
        for s, data in ready:
            if data:
                continue
            if opened[s][1]:
                longest = max(longest, time.time() - opened[s][0])
            sel.unregister(s)
            s.close()
            del opened[s]
        for s, data in ready:
            if data and s in opened and not opened[s][1]:
                opened[s][1] = True
                hellos += 1
        most = max(most, sum(1 for v in opened.values() if v[1]))
        for s, data in ready:
            if not data:
                open_one()
        while len(opened) < n and time.time() < end:
            before = len(opened)
            open_one()
            if len(opened) == before:
                break
    print("held %d connections; %d got a hello, at most %d at once; the longest lived %.1f s"
          % (n, hellos, most, longest))


def authenticate():
    c = Conn(connect())
    hello = c.recv()
    me = c.s.getsockname()[0]
    nc = os.urandom(32).hex()
    c.send({"type": "auth", "nonce": nc, "nas": me,
            "mac": mac(L_CTRL, hello["nonce"], nc + "\n" + me)})
    ok = c.recv()
    assert ok and ok["type"] == "auth_ok", ok
    c.session(hello["nonce"], nc, True)
    return c


def authidle(n, secs):
    conns = [authenticate() for _ in range(n)]
    print("authenticated %d sessions" % len(conns))
    sys.stdout.flush()
    time.sleep(secs)
    alive = 0
    for c in conns:
        c.s.setblocking(False)
        try:
            alive += c.s.recv(1) != b""
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    print("%d of %d sessions still open" % (alive, n))


def controller():
    if script.startswith("hold:"):
        _, n, secs = script.split(":")
        hold(int(n), float(secs))
        return
    if script.startswith("authidle:"):
        _, n, secs = script.split(":")
        authidle(int(n), float(secs))
        return
    c = Conn(connect())
    hello = c.recv()
    assert hello and hello["type"] == "hello", hello
    if script == "preauth":
        c.send({"type": "job", "workload": "seq-read", "protocol": "smb", "target": "smb://h/s"})
        show(c.recv())
        show(c.recv())
        return
    me = c.s.getsockname()[0]
    nas = "198.51.100.7" if script == "wrongnas" else me
    nc = os.urandom(32).hex()
    c.send({"type": "auth", "nonce": nc, "nas": nas,
            "mac": mac(L_CTRL, hello["nonce"], nc + "\n" + nas)})
    ok = c.recv()
    show(ok)
    if ok is None or ok["type"] != "auth_ok" or not hmac.compare_digest(ok["mac"], mac(L_AGENT, nc, hello["nonce"])):
        print("agent proof wrong or refused")
        return
    c.session(hello["nonce"], nc, True)
    job = {"type": "job", "id": 1, "workload": "seq-write", "protocol": "smb",
           "target": "smb://%s/Data" % me, "options": {"size": 1 << 20, "repeats": 1, "warmup": 0}}
    if script == "ok":
        c.send({"type": "facts"})
        show(c.recv())
    elif script == "bigframe":
        c.s.sendall(struct.pack(">I", 2 << 20) + b"x" * 1024)
        show(c.recv())
        show(c.recv())
    elif script == "garbage":
        c.s.sendall(c.seal(b"{nonsense"))
        show(c.recv())
        show(c.recv())
    elif script == "badmac":
        f = bytearray(c.frame({"type": "facts"}))
        f[-1] ^= 1
        c.s.sendall(bytes(f))
        show(c.recv())
        show(c.recv())
    elif script == "replay":
        f = c.frame({"type": "facts"})
        c.s.sendall(f)
        show(c.recv())
        c.s.sendall(f)
        show(c.recv())
        show(c.recv())
    elif script == "badjob":
        c.send({"type": "job", "id": 1, "workload": "seq-read", "protocol": "smb", "target": "smb://h/s", "options": {"size": 1 << 50}})
        show(c.recv())
        c.send({"type": "job", "id": 2, "workload": "nope", "protocol": "smb", "target": "smb://h/s"})
        show(c.recv())
    elif script == "force":
        job["options"]["force"] = True
        c.send(job)
        show(c.recv())
    elif script == "elsewhere":
        job["target"] = "smb://198.51.100.9/Data"
        c.send(job)
        show(c.recv())
        job["target"] = "smb://localhost/Data"
        job["id"] = 2
        c.send(job)
        show(c.recv())
    elif script == "fileout":
        job["target"] = "file://" + os.path.dirname(os.path.abspath(keyfile))
        c.send(job)
        show(c.recv())
        job["target"] = "file:///etc"
        job["protocol"] = "posix"
        job["id"] = 2
        c.send(job)
        show(c.recv())
    elif script == "unknown":
        c.send({"type": "shell", "cmd": "rm -rf /"})
        show(c.recv())
        c.send({"type": "facts"})
        show(c.recv())


def fake_agent():
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, int(port)))
    ls.listen(1)
    print("fake agent listening")
    sys.stdout.flush()
    ls.settimeout(60)
    s, _ = ls.accept()
    s.settimeout(10)
    c = Conn(s)
    na = os.urandom(32).hex()
    c.send({"type": "hello", "nonce": na, "key_id": hashlib.sha256(key).hexdigest()[:16], "version": "fake"})
    auth = c.recv()
    nc = auth["nonce"]
    if script == "badproof":
        c.send({"type": "auth_ok", "mac": mac(L_AGENT, na, nc)})
    elif script == "reflect":
        c.send({"type": "auth_ok", "mac": auth["mac"]})
    elif script == "noproof":
        c.send({"type": "facts", "hostname": "fake"})
    elif script == "errpre":
        c.send({"type": "error", "error": FORGED})
    else:
        c.send({"type": "auth_ok", "mac": mac(L_AGENT, nc, na)})
        c.session(na, nc, False)
    if script == "busy":
        m = c.recv()
        print("nas sent:", "closed" if m is None else m["type"])
        c.send({"type": "error", "error": "busy: every session of this agent is running a job"})
        m = c.recv()
        print("nas sent:", "closed" if m is None else m["type"])
        return
    if script in ("evil", "stream"):
        c.s.settimeout(130)
    while True:
        m = c.recv()
        print("nas sent:", "closed" if m is None else m["type"])
        sys.stdout.flush()
        if m is None or script == "good":
            break
        if script not in ("evil", "stream"):
            continue
        if m["type"] == "facts":
            c.send({"type": "facts", "hostname": FORGED if script == "evil" else "streamer",
                    "os": "Linux", "os_version": "6.1", "agent_version": "fake",
                    "nic": {"name": "lo", "mtu": 65536, "speed_mbps": 0}})
        elif m["type"] == "job" and script == "evil":
            r = {"target": m["target"] + "/" + FORGED, "protocol": "smb", "workload": m["workload"],
                 "metric": "write", "unit": "MB/s", "runs": [100.0, 101.0], "client": FORGED,
                 "cache": "hot", "median": 100.5, "ci95_low": 100.0, "ci95_high": 101.0}
            c.send({"type": "result", "id": m["id"], "results": [r]})
        elif m["type"] == "job":
            end = time.time() + 120
            try:
                while time.time() < end:
                    c.send({"type": "progress", "id": m["id"], "workload": m["workload"],
                            "run": 1, "runs": 2, "warmup": False})
                    time.sleep(0.1)
            except OSError:
                pass
            print("nas sent: closed")
            return


if fake:
    fake_agent()
else:
    controller()
