"""Durable file operations of the store: Parquet written under a temporary name and renamed,
one filesystem sync per commit, staging areas told in use by their marker lock."""

from __future__ import annotations

import ctypes
import fcntl
import functools
import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.errors import StoreError


def sync_filesystem(path: Path) -> None:
    """Flush every written file of the filesystem holding ``path`` to disk (Linux ``syncfs``).

    One call makes a whole batch of staged files durable, where one ``fsync`` per
    file would cost milliseconds each; elsewhere it falls back to ``os.sync()``.
    """
    syncfs = _libc_syncfs()
    if syncfs is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise StoreError(f"{path}: syncfs failed: {os.strerror(err)}")
    finally:
        os.close(fd)


@functools.cache
def _libc_syncfs() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        func = libc.syncfs
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int]
    func.restype = ctypes.c_int
    return func


def fsync_dir(path: Path) -> None:
    """Make a directory's entries (a rename into it) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def staging_in_use(directory: Path) -> bool:
    """Whether a transaction's staging directory belongs to one still running (it holds its marker lock)."""
    marker = directory / ".inuse"
    if not marker.exists():
        return False
    fd = os.open(marker, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def write_parquet(path: Path, table: pa.Table, name: str) -> None:
    """Write a Parquet file of table ``name`` under a temporary name, fsync it, and rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, **schemas.table(name).parquet_options())
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def conform(table: pa.Table, spec: schemas.TableSpec) -> pa.Table:
    """A table read from an older file, with the current schema's columns (missing ones null)."""
    columns = [
        table.column(f.name).cast(f.type)
        if f.name in table.column_names
        else pa.nulls(table.num_rows, f.type)
        for f in spec.schema
    ]
    return pa.Table.from_arrays(columns, schema=spec.schema)
