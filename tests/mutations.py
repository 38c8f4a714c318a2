"""Mutations of real trace bytes for the hardening tests (issue: no data lost under faults).

Each mutation is a pure function ``(data, rng) -> bytes``; :func:`mutate`
picks one by a seeded RNG so every failing case can be replayed from its seed.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable

Mutation = Callable[[bytes, random.Random], bytes]


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(0, max(1, len(data)))]


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 16)):
        if buf:
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def drop_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    for _ in range(rng.randint(1, 5)):
        if len(lines) > 1:
            del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def duplicate_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    for _ in range(rng.randint(1, 5)):
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    return b"\n".join(lines)


def shuffle_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    if len(lines) > 2:
        i = rng.randrange(1, len(lines))
        j = min(len(lines), i + rng.randint(2, 50))
        window = lines[i:j]
        rng.shuffle(window)
        lines[i:j] = window
    return b"\n".join(lines)


def invalid_utf8(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(0, len(data) + 1)
    return data[:i] + rng.choice([b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x80" * 7]) + data[i:]


def huge_value(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    big = rng.choice([b"9" * 400, b"1e999", b"-" + b"9" * 40, b"A" * 200_000])
    lines[i] = lines[i].replace(b'"', b'"' + big, 1) if b'"' in lines[i] else lines[i] + big
    return b"\n".join(lines)


def deeply_nested(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice([500, 5_000, 50_000])
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines.insert(i, b"[" * depth + b"]" * depth)
    return b"\n".join(lines)


def unknown_event(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    event = {"type": "MYSTERY_EVENT", "event": {"org.apache.hadoop.mapreduce.jobhistory.Mystery": {"x": 1}}}
    lines.insert(i, json.dumps(event).encode())
    return b"\n".join(lines)


def append_garbage(data: bytes, rng: random.Random) -> bytes:
    return data + rng.randbytes(rng.randint(1, 512))


MUTATIONS: tuple[Mutation, ...] = (
    truncate,
    flip_bytes,
    drop_lines,
    duplicate_lines,
    shuffle_lines,
    invalid_utf8,
    huge_value,
    deeply_nested,
    unknown_event,
    append_garbage,
)


def plain(data: bytes) -> tuple[bytes, bool]:
    """Decompress gzip fixtures so mutations hit the content; returns (bytes, was_gzip)."""
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data), True
        except (OSError, EOFError):
            return data, False
    return data, False


def mutate(data: bytes, seed: int) -> tuple[bytes, str]:
    """One seeded mutation of ``data`` (re-gzipped when the input was gzip); returns (bytes, name)."""
    rng = random.Random(seed)
    content, was_gzip = plain(data)
    op = rng.choice(MUTATIONS)
    out = op(content, rng)
    if was_gzip and rng.random() < 0.7:
        out = gzip.compress(out, mtime=0)
    return out, op.__name__
