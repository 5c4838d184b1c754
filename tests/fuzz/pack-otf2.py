#!/usr/bin/env python3
"""pack-otf2.py: packs an OTF2 archive (the directory holding traces.otf2) into one seed file of
fuzz-otf2's input form: per file, u8 name length, name relative to the archive, u32 little-endian
length, the bytes.

Usage: pack-otf2.py ARCHIVE_DIR OUT"""
import os
import struct
import sys


def main():
    top, out = sys.argv[1], sys.argv[2]
    parts = []
    for base, _dirs, files in sorted(os.walk(top)):
        for f in sorted(files):
            path = os.path.join(base, f)
            name = os.path.relpath(path, top).encode()
            if len(name) > 255:
                continue
            data = open(path, "rb").read()
            parts.append(bytes([len(name)]) + name + struct.pack("<I", len(data)) + data)
    # The anchor first, so that a cut input still has it.
    parts.sort(key=lambda p: not p[1:].startswith(b"traces.otf2"))
    with open(out, "wb") as f:
        f.write(b"".join(parts))


if __name__ == "__main__":
    main()
