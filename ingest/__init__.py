"""Stage 1: turn Hadoop's traces into typed rows of the store's tables.

One reader per source format (``ingest/<format>.py``, each with a
``read_<format>(path, ctx)`` generator); :mod:`ingest.formats` detects a
file's format from its content; :mod:`ingest.pipeline` walks paths, runs the
readers and commits their rows to the store, one file atomically at a time.
"""
