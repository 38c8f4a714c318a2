"""The frame ``yarn logs -applicationId`` prints around each log file of a container (Hadoop 3's
``LogToolUtils``), written for logs read from the NodeManagers' uploaded files
(:mod:`ingest.yarn_tfile`, :mod:`ingest.yarn_ifile`); :mod:`ingest.yarn_log_sections` reads it.
"""

from __future__ import annotations

from datetime import UTC, datetime


def frame_head(container: str, node: str, log_type: str, modified: str, length: int) -> bytes:
    """The lines ``yarn logs`` prints above one file of a container (Hadoop 3's ``LogToolUtils``)."""
    header = f"Container: {container} on {node}"
    return (f"{header}\nLogAggregationType: AGGREGATED\n{'=' * len(header)}\nLogType:{log_type}\n"
            f"LogLastModifiedTime:{modified}\nLogLength:{length}\nLogContents:\n").encode()  # fmt: skip


def frame_end(log_type: str) -> bytes:
    """The lines ``yarn logs`` prints below one file of a container."""
    end = f"End of LogType:{log_type}"
    return f"\n{end}\n{'*' * (len(end) + 50)}\n\n".encode()


def log_time(epoch_ms: int) -> str:
    """A modification time as ``yarn logs`` prints it (``Times.format``, here in UTC)."""
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%a %b %d %H:%M:%S +0000 %Y")
