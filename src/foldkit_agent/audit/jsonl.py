"""The JSON Lines audit sink: one JSON object per line."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .encode import json_text
from .entry import FIELDS, AuditEntry, iso_time
from .forward import AuditSinkError

__all__ = ["LINE_BREAKS", "JsonlAuditSink"]

LINE_BREAKS: dict[int, str] = {
    ord(c): f"\\u{ord(c):04x}"
    for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines() splits on
}
"""Every character ``str.splitlines()`` ends a line at, as its JSON escape. ``json.dumps``
already escapes the ones below U+0020; U+0085, U+2028 and U+2029 it writes raw, so a reader
splitting with ``splitlines()`` (or a JavaScript ``eval``) would read a line there."""


class JsonlAuditSink:
    """Append entries to a file, one JSON object per line (:meth:`AuditEntry.to_json`).

    Each ``write`` appends its batch and flushes it to the operating system; with
    ``fsync=True`` it also waits for the disk. The file is opened when the sink is made. Every
    line is strict JSON: values JSON cannot hold (``NaN``, ``Infinity``, lone surrogates) are
    replaced as :mod:`foldkit_agent.audit.encode` documents, and every character that
    ``str.splitlines()`` ends a line at is written as its ``\\uXXXX`` escape
    (:data:`LINE_BREAKS`), so the file splits into the same lines by ``"\\n"`` and by
    ``splitlines()``.

    Args:
        path: the file; created (with parent directories) when missing, appended to otherwise.
        fsync: ``os.fsync`` after every batch (slower; survives power loss, not just a crash).
        durable: answer each call only after its line is written (see
            :meth:`AuditLog.committed`).

    Raises:
        OSError: the file cannot be opened for appending.

    Example:
        >>> audit = agent.audit_log(sink=JsonlAuditSink("audit.jsonl"))
    """

    def __init__(
        self, path: str | os.PathLike[str], *, fsync: bool = False, durable: bool = False
    ) -> None:
        self.path = Path(path)
        self.durable = durable
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
    """One line of strict JSON (see :mod:`foldkit_agent.audit.encode` for what is replaced)."""
    fields: dict[str, Any] = {name: getattr(entry, name) for name in FIELDS}
    fields["at"] = iso_time(entry.at)
    text = json_text(fields)
    if text is None or not text.startswith("{"):  # nested too deep to walk as one value
        for key in ("principal", "input"):
            encoded = json_text(fields[key])
            fields[key] = None if encoded is None else json.loads(encoded)
        text = json_text(fields)
    if text is not None and not text.isascii():
        text = text.translate(LINE_BREAKS)
    return f"{text}\n"
