"""Reader and writer of sidecar weights files (docs/weights-format.md),
written from the format document, independent of paddle-compile's writer
and the runtime's reader. Tests use them to check files and to craft bad
ones; `python weights_format.py DIR` writes the fuzzer's seed corpus.
"""

import struct
import sys
import zlib
from pathlib import Path

MAGIC = b"PDWEIGHT"
HEADER = struct.Struct("<8sIIQQQQQQ")  # 64 bytes
ENTRY = struct.Struct("<QIIQQ")  # 32 bytes


def align64(n):
    return (n + 63) // 64 * 64


def reseal(data):
    """`data` with its trailing CRC-32 recomputed (after an edit)."""
    data = bytes(data)
    return data[:-4] + struct.pack("<I", zlib.crc32(data[:-4]))


def write_weights(entries, fingerprint, version=1):
    """`entries`: list of (name, bytes) in file order."""
    names_offset = HEADER.size + ENTRY.size * len(entries)
    names = b"".join(n.encode() for n, _ in entries)
    payload_offset = align64(names_offset + len(names))
    offsets, at = [], payload_offset
    for i, (_, data) in enumerate(entries):
        at = align64(at) if i else at
        offsets.append(at)
        at += len(data)
    out = bytearray(at + 4)
    HEADER.pack_into(out, 0, MAGIC, version, len(entries), fingerprint, len(out),
                     names_offset, len(names), payload_offset, at - payload_offset)
    name_at = 0
    for i, (name, data) in enumerate(entries):
        ENTRY.pack_into(out, HEADER.size + ENTRY.size * i, name_at, len(name), 0,
                        offsets[i], len(data))
        out[names_offset + name_at:names_offset + name_at + len(name)] = name.encode()
        name_at += len(name)
        out[offsets[i]:offsets[i] + len(data)] = data
    return reseal(out)


def read_weights(data):
    """Parses a well-formed file: {'version', 'fingerprint', 'entries':
    [(name, bytes, entry_offset_in_file)]}; asserts on anything else."""
    (magic, version, count, fingerprint, file_size, names_offset, names_size,
     payload_offset, payload_size) = HEADER.unpack_from(data, 0)
    assert magic == MAGIC and file_size == len(data)
    assert struct.unpack_from("<I", data, len(data) - 4)[0] == zlib.crc32(data[:-4])
    assert names_offset == HEADER.size + ENTRY.size * count
    assert payload_offset == align64(names_offset + names_size)
    assert payload_offset + payload_size + 4 == file_size
    entries = []
    for i in range(count):
        at = HEADER.size + ENTRY.size * i
        name_offset, name_size, reserved, offset, size = ENTRY.unpack_from(data, at)
        assert reserved == 0 and offset % 64 == 0
        name = data[names_offset + name_offset:names_offset + name_offset + name_size]
        entries.append((name.decode(), data[offset:offset + size], at))
    return {"version": version, "fingerprint": fingerprint, "entries": entries}


def write_seed_corpus(folder):
    """Valid files for the fuzzer's model (3 weights of 300, 64, 40 bytes),
    an empty one, and truncations."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model = [("__constant_75xf32", bytes(range(256)) + bytes(44)),
             ("__constant_16xf32", bytes(range(64))),
             ("__constant_10xf32", bytes(range(100, 140)))]
    good = write_weights(model, 0x5EED)
    seeds = {"valid": good, "empty": write_weights([], 0),
             "one": write_weights(model[:1], 1),
             "truncated_header": good[:40], "truncated_table": good[:100],
             "truncated_payload": good[:len(good) - 50]}
    for name, data in seeds.items():
        (folder / f"{name}.weights").write_bytes(data)


if __name__ == "__main__":
    write_seed_corpus(sys.argv[1])
