"""The JSON Lines audit sink: one JSON object per line."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .log import AuditEntry, AuditSinkError, json_text

__all__ = ["JsonlAuditSink"]


class JsonlAuditSink:
    """Append entries to a file, one JSON object per line (:meth:`AuditEntry.to_json`).

    Each ``write`` appends its batch and flushes it to the operating system; with
    ``fsync=True`` it also waits for the disk. The file is opened when the sink is made.

    Args:
        path: the file; created (with parent directories) when missing, appended to otherwise.
        fsync: ``os.fsync`` after every batch (slower; survives power loss, not just a crash).

    Raises:
        OSError: the file cannot be opened for appending.

    Example:
        >>> audit = agent.audit_log(sink=JsonlAuditSink("audit.jsonl"))
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fsync = fsync
        self._lock = threading.Lock()
        self._file = self.path.open("a", encoding="utf-8")

    def write(self, entries: list[AuditEntry], /) -> None:
        """Append ``entries`` (one line each) and flush.

        Raises:
            AuditSinkError: the sink was closed.
            OSError: the write failed.
        """
        lines = "".join(_jsonl_line(e) for e in entries)
        with self._lock:
            if self._file.closed:
                raise AuditSinkError(f"the audit file {self.path} is closed")
            self._file.write(lines)
            self._file.flush()
            if self._fsync:
                os.fsync(self._file.fileno())

    def close(self) -> None:
        """Flush and close the file; closing twice is harmless."""
        with self._lock:
            if not self._file.closed:
                self._file.flush()
                self._file.close()

    def read(self) -> Iterator[AuditEntry]:
        """The entries in the file, oldest first; a torn last line (after a crash) is skipped."""
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.endswith("\n"):
                    return
                try:
                    yield AuditEntry.from_json(json.loads(line))
                except ValueError:
                    continue


def _jsonl_line(entry: AuditEntry) -> str:
    try:
        text = json.dumps(entry.to_json(), sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        data = entry.to_json()
        data["principal"] = _safe_json(data["principal"])
        data["input"] = _safe_json(data["input"])
        text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return text + "\n"


def _safe_json(value: Any) -> Any:
    text = json_text(value)
    return None if text is None else json.loads(text)
