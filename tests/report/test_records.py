"""Run records: signed, dated, never overwritten, and any changed figure is found."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.report import (
    RecordError,
    build_record,
    latest_record,
    list_records,
    load_record,
    record_problems,
    sign,
    trend_rows,
    write_record,
)

SUMMARY = {
    "arms": [
        {"arm": "fact_store@hard", "valid": True, "rank": 1, "drift_c": {"value": 0.61}},
        {"arm": "amnesiac@hard", "valid": True, "rank": 2, "drift_c": {"value": 0.12}},
    ],
    "horizons": {"short": [{"arm": "fact_store@hard", "drift_c": {"value": 0.5}}]},
    "scoring": [{"reader": "careful@5", "judge": "context@2"}],
}
MANIFEST = {
    "scenarios": [{"id": "made-up-001", "sha256": "ab" * 32}],
    "backends": {"fact_store": "3"},
    "machine": {"python": "3.11", "cpus": 2},
    "reader": {"name": "careful"},
    "judge": {"name": "context"},
}
DAY_ONE = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def _record(created: datetime = DAY_ONE) -> dict[str, object]:
    return sign(build_record(SUMMARY, MANIFEST, created))


def test_a_record_names_what_produced_it_and_verifies_as_written():
    record = _record()
    assert record["created"] == "2026-03-01T09:30:00Z"
    assert record["scenarios"] == MANIFEST["scenarios"]
    assert record["packages"]["backend:fact_store"] == "3"
    assert record["packages"]["drift-pipeline"] != "not installed"
    code = record["code"]
    assert isinstance(code, dict) and (len(code["commit"]) == 40 or code["commit"] == "unknown")
    assert record["machine"] == MANIFEST["machine"]
    assert record["signature"]["algorithm"] == "ed25519"
    assert record_problems(record) == []


def test_a_changed_figure_or_signature_is_named():
    record = json.loads(json.dumps(_record()))
    record["leaderboard"][1]["drift_c"]["value"] = 0.9
    problems = record_problems(record)
    assert problems[0].startswith("leaderboard row amnesiac@hard: its figures differ")
    assert any("body sha256" in line for line in problems)
    # Re-digesting the row hides nothing: the body no longer matches what was signed.
    from drift_pipeline.report._records import row_digest

    record["leaderboard"][1]["row_sha256"] = row_digest(record["leaderboard"][1])
    assert record_problems(record) == [
        "the record's content differs from what was signed (body sha256 mismatch)"
    ]
    forged = json.loads(json.dumps(_record()))
    forged["signature"]["value"] = "00" * 64
    assert record_problems(forged) == [
        "the signature does not match the signed digest and public key"
    ]


def test_records_are_dated_and_a_later_one_never_replaces_an_earlier(tmp_path: Path):
    first = write_record(tmp_path, _record())
    again = write_record(tmp_path, _record())  # the very same record: the same file
    later = write_record(tmp_path, _record(datetime(2026, 3, 2, 9, 30, tzinfo=UTC)))
    assert first == again and first.name.startswith("20260301T093000Z-")
    assert list_records(tmp_path) == [first, later] and latest_record(tmp_path) == later
    assert load_record(first) == json.loads(json.dumps(_record()))
    trend = [(r["created"], r["horizon"], r["arm"], r["drift_c"]) for r in trend_rows(tmp_path)]
    assert trend[:3] == [
        ("2026-03-01T09:30:00Z", "all", "fact_store@hard", 0.61),
        ("2026-03-01T09:30:00Z", "all", "amnesiac@hard", 0.12),
        ("2026-03-01T09:30:00Z", "short", "fact_store@hard", 0.5),
    ]
    assert len(trend) == 6 and trend[3][0] == "2026-03-02T09:30:00Z"


def test_two_configurations_of_one_backend_are_two_rows_of_their_records(tmp_path: Path) -> None:
    def configured(top_k: int, created: datetime) -> dict[str, Any]:
        options = {"fact_store@hard": {"top_k": top_k, "api_key": "[redacted]"}}
        return sign(build_record(SUMMARY, {**MANIFEST, "arm_options": options}, created))

    five, eight = configured(5, DAY_ONE), configured(8, datetime(2026, 3, 2, tzinfo=UTC))
    assert eight["arm_options"] == {"fact_store@hard": {"top_k": 8, "api_key": "[redacted]"}}
    rows = {row["arm"]: row for row in eight["leaderboard"]}
    assert rows["fact_store@hard"]["options"] == {"top_k": 8, "api_key": "[redacted]"}
    assert "options" not in rows["amnesiac@hard"]  # an arm the manifest does not configure
    # Same figures, other options: the row's digest, which a published row is checked by, differs.
    assert five["leaderboard"][0]["row_sha256"] != eight["leaderboard"][0]["row_sha256"]
    assert record_problems(eight) == []
    for record in (five, eight):
        write_record(tmp_path, record)
    trend = [
        (r["created"], r["options"])
        for r in trend_rows(tmp_path)
        if r["arm"] == "fact_store@hard" and r["horizon"] == "all"
    ]
    assert trend == [
        ("2026-03-01T09:30:00Z", 'api_key="[redacted]", top_k=5'),
        ("2026-03-02T00:00:00Z", 'api_key="[redacted]", top_k=8'),
    ]


def test_a_folder_without_records_or_a_file_that_is_not_one_says_so(tmp_path: Path):
    with pytest.raises(RecordError, match="no leaderboard record"):
        latest_record(tmp_path)
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(RecordError, match="not a leaderboard record"):
        load_record(tmp_path / "other.json")


def test_the_signing_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    first = _record()["signature"]["public_key"]
    monkeypatch.setenv("DRIFT_SIGNING_KEY", "33" * 32)
    assert _record()["signature"]["public_key"] != first
    monkeypatch.setenv("DRIFT_SIGNING_KEY", "not hex")
    with pytest.raises(RecordError, match="DRIFT_SIGNING_KEY: expected 64 hex digits"):
        _record()


def test_without_a_key_one_is_generated_once_in_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("DRIFT_SIGNING_KEY")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    first = _record()["signature"]["public_key"]
    key = tmp_path / "drift" / "signing_key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert _record()["signature"]["public_key"] == first
