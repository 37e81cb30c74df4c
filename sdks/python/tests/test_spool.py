"""The durable report spool on its own (no platform): the file format it shares with the TypeScript SDK, replay after
a restart, the torn last line, a corrupt file quarantined, and the one-process lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from agp.spool import FileSpool, replay


def ev(i: int) -> dict:
    return {"id": f"r.n.{i}.a", "type": "action.record", "timestamp": "2026-01-01T00:00:00.000Z", "body": {"n": i}}


def test_replay_keeps_reports_without_a_later_ack_and_skips_a_torn_last_line() -> None:
    text = "\n".join(json.dumps(x) for x in [{"e": ev(1)}, {"e": ev(2)}, {"a": ["r.n.1.a"]}, {"e": ev(3)}]) + '\n{"e": {"id": "r.n.4'
    pending, bad = replay(text)
    assert [e["id"] for e in pending] == ["r.n.2.a", "r.n.3.a"]
    assert bad == []


def test_a_restart_recovers_exactly_the_unacknowledged_reports(tmp_path: Path) -> None:
    warnings: List[str] = []
    s = FileSpool(str(tmp_path), 1 << 20, warnings.append)
    for i in range(1, 5):
        s.append(ev(i))
    s.ack(["r.n.1.a", "r.n.3.a"])
    assert s.pending_bytes() > 0
    s.close()
    again = FileSpool(str(tmp_path), 1 << 20, warnings.append)
    assert [e["id"] for e in again.recovered()] == ["r.n.2.a", "r.n.4.a"]
    assert again.recovered() == []  # handed out once
    # Rewritten with the pending reports only.
    lines = (tmp_path / "spool.jsonl").read_text().splitlines()
    assert [json.loads(x)["e"]["id"] for x in lines] == ["r.n.2.a", "r.n.4.a"]
    again.close()
    assert warnings == []


def test_a_corrupt_file_is_quarantined_with_a_warning_and_what_parses_is_kept(tmp_path: Path) -> None:
    (tmp_path / "spool.jsonl").write_text(json.dumps({"e": ev(1)}) + "\n\x00\x01 not json\n" + json.dumps({"e": ev(2)}) + "\n")
    warnings: List[str] = []
    s = FileSpool(str(tmp_path), 1 << 20, warnings.append)
    assert [e["id"] for e in s.recovered()] == ["r.n.1.a", "r.n.2.a"]
    [w] = warnings
    assert "corrupt" in w and "lines 2" in w and s.quarantined and s.quarantined in w
    assert Path(s.quarantined).read_bytes().count(b"not json") == 1
    s.close()


def test_rejected_reports_are_set_aside_not_dropped(tmp_path: Path) -> None:
    s = FileSpool(str(tmp_path), 1 << 20, lambda m: None)
    s.append(ev(1))
    s.reject([(ev(1), 422, "body.run_id: required")])
    assert s.pending_bytes() == 0
    [line] = (tmp_path / "rejected.jsonl").read_text().splitlines()
    assert json.loads(line)["status"] == 422 and json.loads(line)["event"]["id"] == "r.n.1.a"
    s.close()


def test_one_live_process_holds_a_spool(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (tmp_path / "LOCK").write_text(str(other.pid))
        with pytest.raises(RuntimeError, match=f"held by process {other.pid}"):
            FileSpool(str(tmp_path), 1 << 20, lambda m: None)
    finally:
        other.kill()
        other.wait()
    # Its process is gone: the lock is taken over.
    s = FileSpool(str(tmp_path), 1 << 20, lambda m: None)
    assert (tmp_path / "LOCK").read_text() == str(os.getpid())
    s.close()
    assert not (tmp_path / "LOCK").exists()
