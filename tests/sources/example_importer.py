"""An example importer: a chat log in JSON lines becomes one world (what an importer looks like).

Each line is one record: the ``dataset`` header (id, version, the two speakers), a ``session``
(its messages and the facts it states), or a ``question`` asked after ``after`` sessions, with
its answer, the evidence sessions the dataset names and, for an update, the value it replaces.
Registered by the tests under the prefix ``example`` (``drift run example:PATH``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from drift_pipeline.sources import SourceError, TableSource

AUDIT = "imported: each probe's evidence sessions are the dataset's own evidence ids"


def open_example(path: str) -> TableSource:
    """The world in the JSON-lines file at ``path`` (one replicate, the short horizon)."""
    raw = Path(path).read_bytes()
    records = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    header = next((r for r in records if r["kind"] == "dataset"), None)
    if header is None:
        raise SourceError(f"{path}: no dataset line")
    user, assistant = header["user"], header["assistant"]
    sessions = sorted((r for r in records if r["kind"] == "session"), key=lambda r: r["index"])
    questions = [r for r in records if r["kind"] == "question"]
    facts = [dict(f, session=s["index"]) for s in sessions for f in s.get("facts", ())]
    closed = {f["replaces"]: f["session"] for f in facts if "replaces" in f}
    checkpoints = sorted({q["after"] for q in questions})
    tables: dict[str, list[dict[str, Any]]] = {
        "latent_profiles": [
            _profile(user, "human"),
            _profile(assistant, "assistant_agent"),
        ],
        "event_schedules": [
            {
                "session_index": s["index"],
                "sim_time": s["time"],
                "tier": "signal" if s.get("facts") else "noise",
                "participants": [user, assistant],
                "pattern": "dialogue",
            }
            for s in sessions
        ],
        "transcripts": [
            {
                "session_index": s["index"],
                "turn_index": turn,
                "speaker": speaker,
                "role": "user" if speaker == user else "assistant",
                "content": content,
                "label_kind": "event" if s.get("facts") else "noise",
            }
            for s in sessions
            for turn, (speaker, content) in enumerate(s["messages"])
        ],
        "ground_truth": [
            {
                "checkpoint": after,
                "fact_id": f["id"],
                "subject": user,
                "slot": f["slot"],
                "slot_kind": "functional",
                "value": f["value"],
                "valid_from": f["session"],
                "valid_to": closed.get(f["id"]) if closed.get(f["id"], after) < after else None,
                "current": closed.get(f["id"], after) >= after,
                "source_session": f["session"],
                "tier": "signal",
                "evidence_sessions": [f["session"]],
            }
            for after in checkpoints
            for f in facts
            if f["session"] < after
        ],
        "probes": [
            {
                "checkpoint": q["after"],
                "probe_id": q["id"],
                "probe_type": "revision" if "replaces" in q else "recall",
                "subtype": "fact_update" if "replaces" in q else "fact",
                "asker": assistant,
                "subject": user,
                "question": q["question"],
                "answer": q["answer"],
                "aliases": [q["answer"]],
                "deprecated": [q["replaces"]] if "replaces" in q else [],
                "evidence_sessions": q["evidence"],
                "polarity": "positive",
                "slot": q["slot"],
            }
            for q in questions
        ],
    }
    return TableSource(
        kind="example",
        source_id=header["id"],
        version=str(header["version"]),
        content_hash=hashlib.sha256(raw).hexdigest(),
        origin=path,
        audit=AUDIT,
        worlds={"short": tables},
    )


def _profile(entity_id: str, entity_type: str) -> dict[str, Any]:
    return {
        "entity_id": entity_id,
        "entity_type": entity_type,
        "name": entity_id,
        "stable_attributes": "{}",
        "initial_state": "{}",
    }
