#!/usr/bin/python3
"""afp.py - a tiny AFP-over-DSI client for the lab's tests (stdlib only).

No working netatalk client tool exists (afp_speedtest and afp_lantest do not complete a
run), so the lab speaks
the protocol itself: DSIGetStatus without a session, then DSIOpenSession, FPLogin with
"No User Authent" (guest), "DHX2" (Diffie-Hellman + CAST128, what Macs use; needs
python3-cryptography) or "Cleartxt Passwrd" (--uam clrtxt; 8-byte password field), and
the file calls below. `quantum` opens a DSI session and prints the server request quantum
afpd offers in its reply (its running "server quantum").

usage: afp.py HOST status | quantum
       afp.py HOST [-u USER -p PASS [--uam dhx2|clrtxt]] volumes | ls VOL | put VOL NAME LOCAL |
                   get VOL NAME LOCAL | rm VOL NAME
Exit: 0 ok; 1 AFP error (printed with its code); 2 usage or network failure.
"""
import argparse
import hashlib
import os
import socket
import struct
import sys
import warnings

DSI_CLOSE, DSI_COMMAND, DSI_STATUS, DSI_OPEN, DSI_TICKLE, DSI_WRITE, DSI_ATTN = 1, 2, 3, 4, 5, 6, 8
FP_CLOSEVOL, FP_CLOSEFORK, FP_CREATEFILE, FP_DELETE = 2, 4, 7, 8
FP_FLUSHFORK, FP_GETSRVRPARMS, FP_LOGIN, FP_LOGINCONT, FP_LOGOUT = 11, 16, 18, 19, 20
FP_OPENVOL, FP_OPENFORK, FP_READEXT, FP_WRITEEXT, FP_ENUMERATEEXT2 = 24, 26, 60, 61, 68
ROOT_DIR = 2
PATH_LONG = 2
AFPERR_AUTHCONT, AFPERR_EOF, AFPERR_NOOBJ = -5001, -5009, -5018
AFP_ERRORS = {
    -5000: "access denied", -5001: "auth continue", -5002: "bad UAM", -5003: "bad version",
    -5004: "bitmap error", -5006: "deny conflict", -5008: "disk full", -5009: "EOF",
    -5010: "file busy", -5014: "misc error", -5017: "object exists",
    -5018: "object not found", -5019: "parameter error", -5023: "user not authorized",
    -5024: "call not supported", -5025: "object type error", -5031: "volume locked",
    -5032: "object locked",
}


class AFPError(Exception):
    def __init__(self, what, code):
        super().__init__("%s: AFP error %d (%s)" % (what, code, AFP_ERRORS.get(code, "?")))
        self.code = code


def pstr(s):
    b = s.encode("utf-8")
    return bytes([len(b)]) + b


class DSI:
    def __init__(self, host, port=548, timeout=10):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.reqid = 0

    def close(self):
        self.sock.close()

    def _recv(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("server closed the connection")
            buf += chunk
        return buf

    def request(self, cmd, payload=b"", write_offset=0, what="DSI"):
        """Sends one DSI request; returns (error code, reply payload)."""
        self.reqid = (self.reqid + 1) & 0xFFFF
        hdr = struct.pack(">BBHiII", 0, cmd, self.reqid, write_offset, len(payload), 0)
        self.sock.sendall(hdr + payload)
        while True:
            flags, rcmd, rid, err, length, _ = struct.unpack(">BBHiII", self._recv(16))
            data = self._recv(length) if length else b""
            if flags == 0:	# a request from the server: answer tickles, ignore attention
                if rcmd == DSI_TICKLE:
                    self.sock.sendall(struct.pack(">BBHiII", 0, DSI_TICKLE, rid, 0, 0, 0))
                continue
            if rid == self.reqid and rcmd == cmd:
                return err, data

    def afp(self, payload, what, write_data=None, ok=(0,)):
        if write_data is None:
            err, data = self.request(DSI_COMMAND, payload)
        else:
            err, data = self.request(DSI_WRITE, payload + write_data, write_offset=len(payload))
        if err not in ok:
            raise AFPError(what, err)
        return data


def cast128_cbc(key, iv, data, encrypt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")	# CAST5 is deprecated in cryptography; AFP needs it
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        c = Cipher(algorithms.CAST5(key), modes.CBC(iv))
    op = c.encryptor() if encrypt else c.decryptor()
    return op.update(data) + op.finalize()


def dhx2_login(dsi, ver, user, password):
    """DHX2 as netatalk's uams_dhx2 implements it: FPLogin, then two FPLoginCont."""
    body = bytes([FP_LOGIN]) + ver + pstr("DHX2") + pstr(user)
    if len(body) % 2:
        body += b"\0"
    data = dsi.afp(body, "FPLogin DHX2 (%s)" % user, ok=(AFPERR_AUTHCONT,))
    sid, g = struct.unpack(">HI", data[0:6])
    plen = struct.unpack(">H", data[6:8])[0]
    p = int.from_bytes(data[8:8 + plen], "big")
    ma = int.from_bytes(data[8 + plen:8 + 2 * plen], "big")
    rb = int.from_bytes(os.urandom(plen), "big") % (p - 2) + 1
    mb = pow(g, rb, p)
    key = hashlib.md5(pow(ma, rb, p).to_bytes(plen, "big")).digest()
    c2s, s2c = b"LWallace", b"CJalbert"
    cnonce = int.from_bytes(os.urandom(16), "big")
    req = struct.pack(">BBH", FP_LOGINCONT, 0, sid) + mb.to_bytes(plen, "big") + \
        cast128_cbc(key, c2s, cnonce.to_bytes(16, "big"), True)
    data = dsi.afp(req, "FPLoginCont 1 (%s)" % user, ok=(AFPERR_AUTHCONT,))
    plain = cast128_cbc(key, s2c, data[2:34], False)
    if int.from_bytes(plain[0:16], "big") != (cnonce + 1) % (1 << 128):
        raise AFPError("DHX2: the server did not prove the key", -5023)
    snonce = (int.from_bytes(plain[16:32], "big") + 1) % (1 << 128)
    pw = password.encode("utf-8")[:255].ljust(256, b"\0")
    req = struct.pack(">BBH", FP_LOGINCONT, 0, sid + 1) + \
        cast128_cbc(key, c2s, snonce.to_bytes(16, "big") + pw, True)
    dsi.afp(req, "FPLoginCont 2 (%s)" % user)


def parse_status(data):
    """FPGetSrvrInfo block: server name, AFP versions, UAMs."""
    off_mt, off_ver, off_uam = struct.unpack(">HHH", data[0:6])
    name = data[11:11 + data[10]].decode("utf-8", "replace")

    def plist(off):
        n, out, p = data[off], [], off + 1
        for _ in range(n):
            out.append(data[p + 1:p + 1 + data[p]].decode("ascii", "replace"))
            p += 1 + data[p]
        return out

    mt = data[off_mt + 1:off_mt + 1 + data[off_mt]].decode("ascii", "replace")
    return {"name": name, "machine": mt, "versions": plist(off_ver), "uams": plist(off_uam)}


class Session:
    def __init__(self, host, user=None, password=None, uam="dhx2"):
        self.dsi = DSI(host)
        # DSIOpenSession with the attention quantum option.
        err, _ = self.dsi.request(DSI_OPEN, struct.pack(">BBI", 1, 4, 1024))
        if err:
            raise AFPError("DSIOpenSession", err)
        ver = pstr("AFP3.3")
        if user is None:
            self.dsi.afp(bytes([FP_LOGIN]) + ver + pstr("No User Authent"), "FPLogin (guest)")
        elif uam == "dhx2":
            dhx2_login(self.dsi, ver, user, password)
        else:
            body = bytes([FP_LOGIN]) + ver + pstr("Cleartxt Passwrd") + pstr(user)
            if len(body) % 2:
                body += b"\0"
            pw = password.encode()[:8].ljust(8, b"\0")
            self.dsi.afp(body + pw, "FPLogin (%s)" % user)
        self.vols = {}

    def volumes(self):
        data = self.dsi.afp(bytes([FP_GETSRVRPARMS, 0]), "FPGetSrvrParms")
        n, p, out = data[4], 5, []
        for _ in range(n):
            p += 1	# flags
            out.append(data[p + 1:p + 1 + data[p]].decode("utf-8", "replace"))
            p += 1 + data[p]
        return out

    def openvol(self, name):
        if name not in self.vols:
            data = self.dsi.afp(struct.pack(">BBH", FP_OPENVOL, 0, 1 << 5) + pstr(name),
                                "FPOpenVol %s" % name)
            self.vols[name] = struct.unpack(">H", data[2:4])[0]
        return self.vols[name]

    def ls(self, vol):
        vid, out, start = self.openvol(vol), [], 1
        while True:
            req = struct.pack(">BBHIHHHIIB", FP_ENUMERATEEXT2, 0, vid, ROOT_DIR, 1 << 6, 1 << 6,
                              200, start, 65536, PATH_LONG) + pstr("")
            try:
                data = self.dsi.afp(req, "FPEnumerateExt2 %s" % vol)
            except AFPError as e:
                if e.code == AFPERR_NOOBJ:	# no more entries
                    return out
                raise
            count, p = struct.unpack(">H", data[4:6])[0], 6
            for _ in range(count):
                length, isdir = struct.unpack(">HB", data[p:p + 3])
                params = p + 4
                noff = struct.unpack(">H", data[params:params + 2])[0]
                q = params + noff
                name = data[q + 1:q + 1 + data[q]].decode("utf-8", "replace")
                out.append(name + ("/" if isdir & 0x80 else ""))
                p += length
            start += count
            if count == 0:
                return out

    def _fork(self, vid, name, access):
        req = struct.pack(">BBHIHHB", FP_OPENFORK, 0, vid, ROOT_DIR, 0, access, PATH_LONG)
        data = self.dsi.afp(req + pstr(name), "FPOpenFork %s" % name)
        return struct.unpack(">H", data[2:4])[0]

    def put(self, vol, name, content):
        vid = self.openvol(vol)
        self.dsi.afp(struct.pack(">BBHIB", FP_CREATEFILE, 0x80, vid, ROOT_DIR, PATH_LONG) +
                     pstr(name), "FPCreateFile %s" % name)
        fork = self._fork(vid, name, 0x02 | 0x20)	# write, deny write
        off, chunk = 0, 65536
        while off < len(content):
            part = content[off:off + chunk]
            hdr = struct.pack(">BBHqq", FP_WRITEEXT, 0, fork, off, len(part))
            self.dsi.afp(hdr, "FPWriteExt %s" % name, write_data=part)
            off += len(part)
        self.dsi.afp(struct.pack(">BBH", FP_FLUSHFORK, 0, fork), "FPFlushFork")
        self.dsi.afp(struct.pack(">BBH", FP_CLOSEFORK, 0, fork), "FPCloseFork")

    def get(self, vol, name):
        vid = self.openvol(vol)
        fork = self._fork(vid, name, 0x01)
        out, off = b"", 0
        while True:
            # netatalk answers the last read with AFPERR_EOF and the bytes it did read.
            err, data = self.dsi.request(DSI_COMMAND,
                                         struct.pack(">BBHqq", FP_READEXT, 0, fork, off, 65536))
            if err not in (0, AFPERR_EOF):
                raise AFPError("FPReadExt %s" % name, err)
            out += data
            off += len(data)
            if err == AFPERR_EOF or not data:
                break
        self.dsi.afp(struct.pack(">BBH", FP_CLOSEFORK, 0, fork), "FPCloseFork")
        return out

    def rm(self, vol, name):
        vid = self.openvol(vol)
        self.dsi.afp(struct.pack(">BBHIB", FP_DELETE, 0, vid, ROOT_DIR, PATH_LONG) + pstr(name),
                     "FPDelete %s" % name)

    def close(self):
        try:
            for vid in self.vols.values():
                self.dsi.afp(struct.pack(">BBH", FP_CLOSEVOL, 0, vid), "FPCloseVol")
            self.dsi.afp(bytes([FP_LOGOUT, 0]), "FPLogout")
            self.dsi.request(DSI_CLOSE)
        except (OSError, AFPError):
            pass
        self.dsi.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("host")
    ap.add_argument("-u", "--user")
    ap.add_argument("-p", "--password", default="")
    ap.add_argument("--uam", choices=["dhx2", "clrtxt"], default="dhx2")
    ap.add_argument("cmd", choices=["status", "quantum", "volumes", "ls", "put", "get", "rm"])
    ap.add_argument("args", nargs="*")
    a = ap.parse_args()
    nargs = {"status": 0, "quantum": 0, "volumes": 0, "ls": 1, "put": 3, "get": 3, "rm": 2}[a.cmd]
    if len(a.args) != nargs:
        ap.error("%s takes %d arguments" % (a.cmd, nargs))
    try:
        if a.cmd == "status":
            d = DSI(a.host)
            err, data = d.request(DSI_STATUS)
            d.close()
            if err:
                raise AFPError("DSIGetStatus", err)
            st = parse_status(data)
            print("server: %s" % st["name"])
            print("machine: %s" % st["machine"])
            print("versions: %s" % " ".join(st["versions"]))
            print("uams: %s" % ", ".join(st["uams"]))
            return 0
        if a.cmd == "quantum":
            # DSIOpenSession's reply options: type 0 is the server request quantum, what
            # afpd took from "server quantum" when it started.
            d = DSI(a.host)
            err, data = d.request(DSI_OPEN, struct.pack(">BBI", 1, 4, 1024))
            d.close()
            if err:
                raise AFPError("DSIOpenSession", err)
            i = 0
            while i + 2 <= len(data):
                t, n = data[i], data[i + 1]
                if t == 0 and n == 4:
                    print("server quantum: %d" % struct.unpack(">I", data[i + 2:i + 6])[0])
                    return 0
                i += 2 + n
            raise AFPError("DSIOpenSession: no server quantum option", 0)
        s = Session(a.host, a.user, a.password, a.uam)
        try:
            if a.cmd == "volumes":
                print("\n".join(s.volumes()))
            elif a.cmd == "ls":
                print("\n".join(s.ls(a.args[0])))
            elif a.cmd == "put":
                with open(a.args[2], "rb") as f:
                    s.put(a.args[0], a.args[1], f.read())
            elif a.cmd == "get":
                data = s.get(a.args[0], a.args[1])
                with open(a.args[2], "wb") as f:
                    f.write(data)
            elif a.cmd == "rm":
                s.rm(a.args[0], a.args[1])
        finally:
            s.close()
    except AFPError as e:
        print("afp.py: %s" % e, file=sys.stderr)
        return 1
    except (OSError, ConnectionError, struct.error, IndexError) as e:
        print("afp.py: %s: %s" % (a.host, e), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
