#!/usr/bin/python3
"""mdns_zeroconf.py - Bonjour as a client's own mDNS stack sees it, through python-zeroconf
(an mDNS/DNS-SD implementation that shares nothing with avahi or nastune): browses the
service types given on the command line for SECONDS, resolves every instance found
(SRV, TXT and A records, asked on the wire), and prints one JSON line per instance:
  {"type": "_adisk._tcp", "name": "atlas", "host": "atlas.local.", "port": 9,
   "addresses": ["198.18.0.1"], "txt": ["dk0=adVN=...", "sys=waMa=0,adVF=0x100"]}
with the TXT strings as sent, sorted. An instance that does not resolve is printed with
"port": null, so a missing SRV or TXT shows instead of vanishing.

usage: mdns_zeroconf.py SECONDS TYPE...   (TYPE like _smb._tcp)"""
import json
import sys
import time

from zeroconf import IPVersion, ServiceBrowser, Zeroconf


class Seen:
    def __init__(self):
        self.names = set()

    def add_service(self, zc, type_, name):
        self.names.add((type_, name))

    def update_service(self, zc, type_, name):
        self.names.add((type_, name))

    def remove_service(self, zc, type_, name):
        self.names.discard((type_, name))


def txt_strings(info):
    """The TXT record's strings as sent: key=value, or a bare key."""
    out = []
    raw = info.text or b""
    i = 0
    while i < len(raw):
        n = raw[i]
        out.append(raw[i + 1:i + 1 + n].decode("utf-8", "replace"))
        i += 1 + n
    return sorted(s for s in out if s)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    secs = float(argv[0])
    types = [t if t.endswith(".local.") else t + ".local." for t in argv[1:]]
    zc = Zeroconf(ip_version=IPVersion.V4Only)
    seen = Seen()
    try:
        ServiceBrowser(zc, types, seen)
        time.sleep(secs)
        for type_, name in sorted(seen.names):
            info = zc.get_service_info(type_, name, timeout=3000)
            inst = name[:-len(type_) - 1] if name.endswith("." + type_) else name
            rec = {"type": type_[:-len(".local.")], "name": inst, "host": None, "port": None,
                   "addresses": [], "txt": []}
            if info:
                rec.update(host=info.server, port=info.port,
                           addresses=sorted(info.parsed_addresses()), txt=txt_strings(info))
            print(json.dumps(rec), flush=True)
    finally:
        zc.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
