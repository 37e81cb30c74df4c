"""Where reports wait until the platform acknowledges them (``spool.ts`` of the TypeScript SDK, same file format):
a durable append-only file (``spool_dir``) or memory only.

File format (``<spool_dir>/spool.jsonl``): one JSON object per line, ``{"e": <ingest event>}`` for a report and
``{"a": [<event id>, …]}`` for ids the platform acknowledged. Opening the spool replays it: every ``e`` without a
later ``a`` is pending again and is sent with its original id (ingest stores an id once, so a copy that had already
arrived is a duplicate, never a second record). A torn last line (the process died mid-write) is skipped silently; any
other line that does not parse makes the file corrupt: it is moved aside to ``spool.jsonl.corrupt-<ms>``
(quarantined, with a warning naming it and the lines that did not parse), the reports that did parse are sent.
The file is then rewritten with only the pending reports (temp file, fsync, rename), and again whenever
acknowledged lines dominate it.

Durability: ``append`` writes the line with one ``write(2)`` before ``act`` goes on, so a report survives a kill of
the agent; fsync runs at most every ``fsync_interval`` (0.1 s). Reports the platform refuses for good (a per-event
413/422) go to ``rejected.jsonl``. One process holds a spool (a ``LOCK`` file with its pid; a lock whose process is
gone is taken over). Source: docs/sdk.md §Spool; docs/sdk-python.md."""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._util import iso_time, now_ms

__all__ = ["MemorySpool", "FileSpool", "replay"]


class MemorySpool:
    """Memory only: reports not yet delivered are lost if the process dies. Counts ``256 + len(id)`` bytes a report."""

    durable = False

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._bytes = 0
        #: Reports the platform refused for good (the first 1000), with status and message.
        self.rejected: List[Dict[str, Any]] = []

    def recovered(self) -> List[Dict[str, Any]]:
        """Reports an earlier process left: none in memory."""
        return []

    def append(self, ev: Dict[str, Any]) -> None:
        """Keep one report until it is acknowledged."""
        self._bytes += 256 + len(ev["id"])

    def ack(self, ids: Sequence[str]) -> None:
        """Forget acknowledged reports."""
        self._bytes = max(0, self._bytes - sum(256 + len(i) for i in ids))

    def reject(self, items: Sequence[Tuple[Dict[str, Any], int, str]]) -> None:
        """Set aside ``(event, status, message)`` the platform refused for good."""
        for ev, status, message in items[: max(0, 1000 - len(self.rejected))]:
            self.rejected.append({"status": status, "message": message, "event": ev})
        self.ack([ev["id"] for ev, _, _ in items])

    def pending_bytes(self) -> int:
        """Bytes of pending reports."""
        return self._bytes

    def full(self) -> bool:
        """Whether the pending reports reached the bound."""
        return self._bytes >= self.max_bytes

    def sync(self) -> None:
        """Nothing to flush in memory."""

    def close(self) -> None:
        """Nothing to close in memory."""


def _parse(line: str) -> Optional[Dict[str, Any]]:
    try:
        v = json.loads(line)
    except ValueError:
        return None
    if isinstance(v, dict):
        if isinstance(v.get("e"), dict) and isinstance(v["e"].get("id"), str):
            return v
        if isinstance(v.get("a"), list):
            return v
    return None


def replay(text: str) -> Tuple[List[Dict[str, Any]], List[int]]:
    """The pending reports of a spool file's text, in order (every ``e`` without a later ``a``), and the 1-based
    numbers of lines that did not parse, a torn last line (no newline after it) left out."""
    events: Dict[str, Dict[str, Any]] = {}
    bad: List[int] = []
    lines = text.split("\n")
    for n, line in enumerate(lines, 1):
        if not line:
            continue
        v = _parse(line)
        if v is None:
            if n != len(lines):  # the last piece has no newline after it: a torn write
                bad.append(n)
            continue
        if "e" in v:
            events[v["e"]["id"]] = v["e"]
        else:
            for i in v["a"]:
                events.pop(i, None)
    return list(events.values()), bad


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except PermissionError:
        return True
    except OSError:
        return False


class FileSpool:
    """The durable spool: see the module docs. Not thread-safe by itself (the reporter holds its lock around every
    call but :meth:`sync`).

    :raises RuntimeError: when another live process holds ``directory``.
    """

    durable = True

    def __init__(self, directory: str, max_bytes: int, warn: Callable[[str], None]):
        self.dir = directory
        self.max_bytes = max_bytes
        os.makedirs(directory, exist_ok=True)
        self.file = os.path.join(directory, "spool.jsonl")
        self._lock_path = os.path.join(directory, "LOCK")
        self._take_lock()
        self._sizes: Dict[str, int] = {}
        self._live = 0
        self._file_bytes = 0
        self._dirty = False
        self._closed = False
        self.quarantined: Optional[str] = None
        pending: List[Dict[str, Any]] = []
        if os.path.exists(self.file):
            with open(self.file, "rb") as f:
                raw = f.read()
            text = raw.decode("utf-8", "replace")
            pending, bad = replay(text)
            if bad:
                self.quarantined = f"{self.file}.corrupt-{now_ms()}"
                os.replace(self.file, self.quarantined)
                warn(f"the spool file {self.file} is corrupt (lines {', '.join(map(str, bad[:10]))}{'…' if len(bad) > 10 else ''} do not parse); it was moved to {self.quarantined}; the {len(pending)} report(s) that parsed are sent")
        self._pending = pending
        self._fd = self._rewrite(pending)

    def _take_lock(self) -> None:
        try:
            with open(self._lock_path, "r", encoding="utf-8") as f:
                holder = int(f.read().strip() or "0")
        except (FileNotFoundError, ValueError):
            holder = 0
        if holder > 0 and holder != os.getpid() and _pid_alive(holder):
            raise RuntimeError(f"the spool {self.dir} is held by process {holder}; give each agent process its own spool_dir")
        with open(self._lock_path, "w", encoding="utf-8") as f:
            f.write(str(os.getpid()))

    def recovered(self) -> List[Dict[str, Any]]:
        """Reports an earlier process left unacknowledged, in order (handed out once)."""
        out, self._pending = self._pending, []
        return out

    def append(self, ev: Dict[str, Any]) -> None:
        """Write one report (one ``write(2)``) before the caller goes on."""
        line = (json.dumps({"e": ev}, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        os.write(self._fd, line)
        self._sizes[ev["id"]] = len(line)
        self._live += len(line)
        self._file_bytes += len(line)
        self._dirty = True

    def ack(self, ids: Sequence[str]) -> None:
        """Record acknowledged ids; rewrite the file once acknowledged lines dominate it (past 1 MiB)."""
        if not ids:
            return
        line = (json.dumps({"a": list(ids)}, separators=(",", ":")) + "\n").encode("utf-8")
        os.write(self._fd, line)
        self._file_bytes += len(line)
        self._dirty = True
        for i in ids:
            n = self._sizes.pop(i, None)
            if n is not None:
                self._live -= n
        if self._file_bytes > 1024 * 1024 and self._file_bytes > 4 * self._live:
            self._compact()

    def reject(self, items: Sequence[Tuple[Dict[str, Any], int, str]]) -> None:
        """Append ``(event, status, message)`` refused for good to ``rejected.jsonl`` (fsynced), then forget them."""
        if not items:
            return
        text = "".join(json.dumps({"at": iso_time(), "status": s, "message": m, "event": ev}, ensure_ascii=False) + "\n" for ev, s, m in items)
        with open(os.path.join(self.dir, "rejected.jsonl"), "a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        self.ack([ev["id"] for ev, _, _ in items])

    def pending_bytes(self) -> int:
        """Bytes of pending reports (their lines in the file)."""
        return self._live

    def full(self) -> bool:
        """Whether the pending reports reached the bound."""
        return self._live >= self.max_bytes

    def sync(self) -> None:
        """fsync if anything was written since the last one (called without the reporter's lock: an append during
        it sets ``dirty`` again, so the next sync covers it).

        :raises OSError: when the file was closed or replaced meanwhile.
        """
        if self._dirty and not self._closed:
            self._dirty = False
            os.fsync(self._fd)

    def close(self) -> None:
        """fsync, close the file, release the lock."""
        if self._closed:
            return
        self._closed = True
        try:
            os.fsync(self._fd)
        finally:
            os.close(self._fd)
            try:
                os.remove(self._lock_path)
            except FileNotFoundError:
                pass

    def _compact(self) -> None:
        live: List[Dict[str, Any]] = []
        with open(self.file, "r", encoding="utf-8", errors="replace") as f:
            for line in f:
                v = _parse(line.rstrip("\n"))
                if v is not None and "e" in v and v["e"]["id"] in self._sizes:
                    live.append(v["e"])
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = self._rewrite(live)

    def _rewrite(self, events: Sequence[Dict[str, Any]]) -> int:
        tmp = self.file + ".tmp"
        self._sizes.clear()
        self._live = 0
        chunks = []
        for ev in events:
            line = (json.dumps({"e": ev}, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
            self._sizes[ev["id"]] = len(line)
            self._live += len(line)
            chunks.append(line)
        with open(tmp, "wb") as f:
            f.write(b"".join(chunks))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.file)
        dfd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        self._file_bytes = self._live
        self._dirty = False
        return os.open(self.file, os.O_WRONLY | os.O_APPEND)
