#!/usr/bin/python3
"""smb_aapl.py - what a Mac's SMB client sees of a share, through impacket (an SMB client
nastune did not write): the AAPL create context a Mac sends on its first open, and the two
ways macOS copies a file inside a share (see Apple's smbfs, smb2fs_smb_copyfile):

  caps   SERVER USER PASS SHARE
         one JSON line: {"server_caps", "volume_caps", "model"} of the AAPL reply, or
         {"aapl": null} when the server answers without one (no vfs_fruit on the share).
  copy   SERVER USER PASS SHARE MIB RUNS
         a MIB MiB file with a 1 MiB resource fork and two small named streams, copied
         inside the share RUNS times each way, one JSON line per run:
           copychunk  FSCTL_SRV_COPYCHUNK, 16 MiB per request, then each stream the same
                      way: what macOS does when the server does not advertise copyfile;
           copyfile   after AAPL, one FSCTL_SRV_COPYCHUNK with no chunks: the server copies
                      the file and all its streams (Samba's fruit:copyfile; macOS's path
                      when the server advertises kAAPL_SUPPORTS_OSX_COPYFILE).
         Every copy is checked (size and the resource fork's bytes) before it counts.

Exit 0, or 1 with a message on stderr."""
import json
import struct
import sys
import time

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

AAPL_SERVER_QUERY = 1
AAPL_SERVER_CAPS, AAPL_VOLUME_CAPS, AAPL_MODEL_INFO = 1, 2, 4
AAPL_READ_DIR_ATTR, AAPL_OSX_COPYFILE, AAPL_UNIX_BASED, AAPL_NFS_ACE = 1, 2, 4, 8
# What macOS asks for (smb2_smb_add_create_contexts in Apple's smbfs).
MAC_CLIENT_CAPS = AAPL_READ_DIR_ATTR | AAPL_OSX_COPYFILE | AAPL_UNIX_BASED | AAPL_NFS_ACE
CHUNK = 1 << 20
CHUNKS_PER_REQ = 16
RW = s3.FILE_READ_DATA | s3.FILE_WRITE_DATA | s3.FILE_READ_ATTRIBUTES | s3.FILE_WRITE_ATTRIBUTES
SHARE_ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE


def aapl_context():
    ctx = s3.SMB2CreateContext()
    data = struct.pack("<IIQQ", AAPL_SERVER_QUERY, 0,
                       AAPL_SERVER_CAPS | AAPL_VOLUME_CAPS | AAPL_MODEL_INFO, MAC_CLIENT_CAPS)
    ctx["Next"] = 0
    ctx["NameOffset"] = 16
    ctx["NameLength"] = 4
    ctx["DataOffset"] = 24
    ctx["DataLength"] = len(data)
    ctx["Buffer"] = b"AAPL" + b"\0" * 4 + data
    return ctx


class Session:
    def __init__(self, server, user, password, share):
        self.conn = SMBConnection(server, server, timeout=120)
        self.conn.login(user, password)
        self.smb = self.conn.getSMBServer()
        self.tid = self.conn.connectTree(share)
        self.last = None
        recv = self.smb.recvSMB

        def keep(packet_id=None):
            self.last = recv(packet_id)
            return self.last
        self.smb.recvSMB = keep

    def open(self, name, create=False, contexts=None, directory=False):
        disp = s3.FILE_OVERWRITE_IF if create else s3.FILE_OPEN
        opts = s3.FILE_DIRECTORY_FILE if directory else s3.FILE_NON_DIRECTORY_FILE
        access = (s3.FILE_READ_ATTRIBUTES | s3.FILE_LIST_DIRECTORY) if directory else RW
        return self.smb.create(self.tid, name, access, SHARE_ALL, opts, disp, 0,
                               createContexts=contexts)

    def close(self, fid):
        self.smb.close(self.tid, fid)

    def aapl(self):
        """Opens the share's root with an AAPL context, as a Mac's first open does."""
        fid = self.open("", contexts=[aapl_context()], directory=True)
        raw = self.last.getData()
        resp = s3.SMB2Create_Response(self.last["Data"])
        self.close(fid)
        off, length = resp["CreateContextsOffset"], resp["CreateContextsLength"]
        blob = raw[off:off + length]
        while blob:
            nxt, noff, nlen, _, doff, dlen = struct.unpack_from("<IHHHHI", blob)
            if blob[noff:noff + nlen] == b"AAPL":
                d = blob[doff:doff + dlen]
                _, _, bitmap, scaps, vcaps = struct.unpack_from("<IIQQQ", d)
                model = None
                if bitmap & AAPL_MODEL_INFO:
                    mlen = struct.unpack_from("<I", d, 36)[0]
                    model = d[40:40 + mlen].decode("utf-16-le")
                return {"server_caps": scaps, "volume_caps": vcaps, "model": model}
            if not nxt:
                break
            blob = blob[nxt:]
        return {"aapl": None}

    def write(self, name, data):
        fid = self.open(name, create=True)
        for off in range(0, len(data), CHUNK):
            self.smb.write(self.tid, fid, data[off:off + CHUNK], off, len(data[off:off + CHUNK]))
        self.close(fid)

    def read(self, name, size):
        fid = self.open(name)
        out = b"".join(self.smb.read(self.tid, fid, off, min(CHUNK, size - off))
                       for off in range(0, size, CHUNK))
        self.close(fid)
        return out

    def size(self, name):
        fid = self.open(name)
        info = self.smb.queryInfo(self.tid, fid)	# FileStandardInformation
        self.close(fid)
        return struct.unpack_from("<q", info, 8)[0]	# after AllocationSize: EndOfFile

    def copychunk(self, src, dst, size, whole_file=False):
        """FSCTL_SRV_COPYCHUNK from src to dst; no chunks at all when whole_file."""
        sfid = self.open(src)
        dfid = self.open(dst, create=True)
        try:
            key = self.smb.ioctl(self.tid, sfid, s3.FSCTL_SRV_REQUEST_RESUME_KEY,
                                 s3.SMB2_0_IOCTL_IS_FSCTL, b"", maxOutputResponse=32)[:24]
            ranges = [[]] if whole_file else [
                [(o, min(CHUNK, size - o)) for o in range(base, min(size, base + CHUNK * CHUNKS_PER_REQ), CHUNK)]
                for base in range(0, size, CHUNK * CHUNKS_PER_REQ)]
            for chunks in ranges:
                req = key + struct.pack("<II", len(chunks), 0) + b"".join(
                    struct.pack("<QQII", o, o, n, 0) for o, n in chunks)
                self.smb.ioctl(self.tid, dfid, s3.FSCTL_SRV_COPYCHUNK, s3.SMB2_0_IOCTL_IS_FSCTL,
                               req, maxOutputResponse=12)
        finally:
            self.close(sfid)
            self.close(dfid)


def fail(msg):
    print("smb_aapl: " + msg, file=sys.stderr)
    sys.exit(1)


STREAMS = {":AFP_Resource": 1 << 20, ":meta1": 512, ":meta2": 512}	# xattrs: ext4 keeps ~4 KiB


def cmd_copy(server, user, password, share, mib, runs):
    size = int(mib) << 20
    s = Session(server, user, password, share)
    caps = s.aapl()
    copyfile = bool(caps.get("server_caps", 0) & AAPL_OSX_COPYFILE)
    data = bytes(range(256)) * (size // 256)
    s.write("aapl-src", data)
    for st, n in STREAMS.items():
        s.write("aapl-src" + st, bytes([len(st)]) * n)
    ways = ["copychunk"] + (["copyfile"] if copyfile else [])
    for r in range(int(runs)):
        for way in ways:
            dst = "aapl-dst-%s-%d" % (way, r)
            t0 = time.monotonic()
            if way == "copyfile":
                s.copychunk("aapl-src", dst, size, whole_file=True)
            else:
                s.copychunk("aapl-src", dst, size)
                for st, n in STREAMS.items():
                    s.copychunk("aapl-src" + st, dst + st, n)
            secs = time.monotonic() - t0
            rfork = s.read(dst + ":AFP_Resource", STREAMS[":AFP_Resource"])
            if s.size(dst) != size or rfork != bytes([len(":AFP_Resource")]) * (1 << 20):
                fail("%s: the copy %s differs from its source" % (way, dst))
            print(json.dumps({"way": way, "run": r, "mib": int(mib), "seconds": round(secs, 4),
                              "mb_per_s": round(size / secs / 1e6, 1)}), flush=True)
            s.conn.deleteFile(share, dst)
    s.conn.deleteFile(share, "aapl-src")
    if not copyfile:
        print(json.dumps({"way": "copyfile", "skipped": "the server does not advertise "
                          "kAAPL_SUPPORTS_OSX_COPYFILE", "server_caps": caps.get("server_caps")}))


def main(argv):
    if len(argv) == 5 and argv[0] == "caps":
        print(json.dumps(Session(*argv[1:5]).aapl()))
    elif len(argv) == 7 and argv[0] == "copy":
        cmd_copy(*argv[1:7])
    else:
        fail("usage: smb_aapl.py caps SERVER USER PASS SHARE | "
             "copy SERVER USER PASS SHARE MIB RUNS")


if __name__ == "__main__":
    main(sys.argv[1:])
