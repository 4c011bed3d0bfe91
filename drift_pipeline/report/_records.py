"""Run records: a dated, signed copy of every leaderboard a run or a refresh produced.

A record is one JSON file under ``<run folder>/_records/leaderboards/``, named by its UTC time
and the digest of its content, so a rerun adds a record and never replaces one. It holds what
a published row needs to be checked against: the scenario hashes, the code commit, package
versions, the machine, the date, the reader and judge, and the rows themselves (pooled and per
horizon), each row with a digest of its own. The body is signed with Ed25519: the signing key
comes from ``DRIFT_SIGNING_KEY`` (64 hex digits, the 32-byte seed) or, without it, from a key
generated once in the user's configuration folder; the public key travels in the record.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

__all__ = [
    "RECORDS_FOLDER",
    "RECORD_TIME_ENV",
    "SIGNING_KEY_ENV",
    "TREND_COLUMNS",
    "RecordError",
    "build_record",
    "latest_record",
    "list_records",
    "load_record",
    "options_text",
    "record_problems",
    "record_time",
    "row_digest",
    "sign",
    "signing_key_path",
    "trend_rows",
    "write_record",
]

RECORDS_FOLDER: Final = "_records/leaderboards"
"""Where a run folder keeps its leaderboard records."""
RECORD_TIME_ENV: Final = "DRIFT_RECORD_TIME"
"""The time a record is dated (ISO 8601, e.g. ``2026-03-02T09:00:00Z``) instead of now: for
backfilling a nightly series, for reproducible records, and for tests of a series of runs."""
SIGNING_KEY_ENV: Final = "DRIFT_SIGNING_KEY"
"""The signing key's seed (64 hex digits); without it, the key in the configuration folder."""
RECORD_FORMAT: Final = 1
PACKAGES: Final = ("drift-pipeline", "dagster", "duckdb", "pyarrow", "numpy", "pydantic", "pynacl")
"""Packages whose versions a record names (with every backend's, from the run manifest)."""
_TIME_FORMAT: Final = "%Y%m%dT%H%M%SZ"


class RecordError(ValueError):
    """A record that cannot be read, or a signing key that cannot be used (one line)."""


def record_time() -> datetime:
    """When a record made now is dated: ``$DRIFT_RECORD_TIME`` if set, else the current time.

    Raises:
        RecordError: The variable is not an ISO 8601 time.
    """
    text = os.environ.get(RECORD_TIME_ENV, "").strip()
    if not text:
        return datetime.now(UTC)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise RecordError(
            f"{RECORD_TIME_ENV}={text!r}: not an ISO 8601 time (e.g. 2026-03-02T09:00:00Z)"
        ) from None
    # A time without a zone is taken as UTC, the zone every record is written in.
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def signing_key_path() -> Path:
    """The generated key's file: ``$XDG_CONFIG_HOME/drift/signing_key`` (else ``~/.config``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "drift" / "signing_key"


def _signing_key() -> Any:
    from nacl.signing import SigningKey

    seed_hex = os.environ.get(SIGNING_KEY_ENV)
    if seed_hex is None:
        path = signing_key_path()
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            seed = os.urandom(32)
            # Created private to the user: the key signs every record this account writes.
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(seed.hex() + "\n")
        seed_hex = path.read_text(encoding="utf-8").strip()
    try:
        seed = bytes.fromhex(seed_hex.strip())
    except ValueError:
        seed = b""
    if len(seed) != 32:
        raise RecordError(f"{SIGNING_KEY_ENV}: expected 64 hex digits (a 32-byte Ed25519 seed)")
    return SigningKey(seed)


def canonical(value: object) -> bytes:
    """The bytes a digest or signature is taken over: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def row_digest(row: Mapping[str, Any]) -> str:
    """The sha256 of one leaderboard row (without its own ``row_sha256``)."""
    body = {k: v for k, v in row.items() if k != "row_sha256"}
    return hashlib.sha256(canonical(body)).hexdigest()


@functools.cache
def code_commit() -> str:
    """The git commit of the installed code, or ``unknown`` outside a git checkout.

    Asked once per process: a run writes several records and each names the commit.
    """
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else "unknown"


def _versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def _with_digests(
    rows: Sequence[Mapping[str, Any]], options: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``rows`` with their arm's options (where the manifest names them) and their digests.

    The options are part of what a row's digest covers: two configurations of one backend
    are two different rows.
    """
    out = []
    for row in rows:
        arm = str(row.get("arm"))
        shown = {**row, "options": options[arm]} if arm in options else dict(row)
        out.append({**shown, "row_sha256": row_digest(shown)})
    return out


def build_record(
    summary: Mapping[str, Any], manifest: Mapping[str, Any], created: datetime | None = None
) -> dict[str, Any]:
    """A record's body (unsigned) from a run's JSON summary and its manifest.

    Args:
        summary: The JSON summary (:func:`~._leaderboard.summary_json`): its ``arms``, per
            horizon rows and ``scoring``.
        manifest: The run manifest: scenarios with their hashes, backends and each arm's
            options, machine, reader, judge, isolation.
        created: The record's time (default: :func:`record_time`, now unless
            ``$DRIFT_RECORD_TIME`` says otherwise).

    Raises:
        RecordError: ``$DRIFT_RECORD_TIME`` is not a time.
    """
    when = (created or record_time()).astimezone(UTC).replace(microsecond=0)
    options = dict(manifest.get("arm_options", {}))
    return {
        "format": RECORD_FORMAT,
        "created": when.isoformat().replace("+00:00", "Z"),
        "code": {"commit": code_commit(), "drift_pipeline": _versions()["drift-pipeline"]},
        "packages": {
            **_versions(),
            **{f"backend:{k}": v for k, v in manifest.get("backends", {}).items()},
        },
        "machine": manifest.get("machine", {"python": platform.python_version()}),
        "scenarios": list(manifest.get("scenarios", [])),
        "reader": manifest.get("reader"),
        "judge": manifest.get("judge"),
        "isolation": manifest.get("isolation", []),
        "scoring": list(summary.get("scoring", [])),
        # Each arm's --backend-config options, secrets masked (also on each of its rows).
        "arm_options": options,
        "leaderboard": _with_digests(summary.get("arms", []), options),
        "horizons": {
            horizon: _with_digests(rows, options)
            for horizon, rows in summary.get("horizons", {}).items()
        },
    }


def sign(body: Mapping[str, Any]) -> dict[str, Any]:
    """The record: ``body`` with its sha256 and an Ed25519 signature over that digest."""
    key = _signing_key()
    digest = hashlib.sha256(canonical(body)).hexdigest()
    signature = key.sign(digest.encode()).signature
    return {
        **body,
        "signature": {
            "algorithm": "ed25519",
            "public_key": key.verify_key.encode().hex(),
            "body_sha256": digest,
            "value": signature.hex(),
        },
    }


def write_record(folder: Path, record: Mapping[str, Any]) -> Path:
    """Write a signed record into ``folder``'s records, never over an earlier one.

    Returns:
        The record's path: ``<folder>/_records/leaderboards/<UTC time>-<digest>.json``.
    """
    created = datetime.fromisoformat(str(record["created"]).replace("Z", "+00:00"))
    digest = record["signature"]["body_sha256"][:12]
    target = folder / RECORDS_FOLDER
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{created.strftime(_TIME_FORMAT)}-{digest}.json"
    text = json.dumps(record, indent=2, sort_keys=True) + "\n"
    # Exclusive creation: an identical record at the same second is the same record.
    try:
        with path.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        pass
    return path


def list_records(folder: Path) -> list[Path]:
    """A run folder's records, oldest first (their names start with their UTC time)."""
    return sorted((folder / RECORDS_FOLDER).glob("*.json"))


def latest_record(folder: Path) -> Path:
    """The newest record of a run folder.

    Raises:
        RecordError: The folder holds no record.
    """
    records = list_records(folder)
    if not records:
        raise RecordError(
            f"{folder}: no leaderboard record under {RECORDS_FOLDER}/ (drift run writes one)"
        )
    return records[-1]


def load_record(path: Path) -> dict[str, Any]:
    """A record read back.

    Raises:
        RecordError: Not readable, not JSON, or not a record.
    """
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RecordError(f"{path}: not a readable record ({error})") from error
    if not isinstance(value, dict) or "signature" not in value or "leaderboard" not in value:
        raise RecordError(f"{path}: not a leaderboard record (no signature or leaderboard)")
    return value


@dataclass(frozen=True)
class _Row:
    where: str
    row: Mapping[str, Any]


def _rows(record: Mapping[str, Any]) -> list[_Row]:
    rows = [_Row(f"leaderboard row {r.get('arm')}", r) for r in record.get("leaderboard", [])]
    for horizon, horizon_rows in record.get("horizons", {}).items():
        rows += [_Row(f"{horizon} row {r.get('arm')}", r) for r in horizon_rows]
    return rows


def record_problems(record: Mapping[str, Any]) -> list[str]:
    """What does not match in a record: row digests, the body digest, the signature.

    Returns:
        One line per problem, in that order; empty when the record is as it was signed.
    """
    from nacl.exceptions import BadSignatureError
    from nacl.signing import VerifyKey

    problems = [
        f"{row.where}: its figures differ from what was recorded (row sha256 mismatch)"
        for row in _rows(record)
        if row.row.get("row_sha256") != row_digest(row.row)
    ]
    signature = record.get("signature", {})
    body = {k: v for k, v in record.items() if k != "signature"}
    digest = hashlib.sha256(canonical(body)).hexdigest()
    if digest != signature.get("body_sha256"):
        problems.append("the record's content differs from what was signed (body sha256 mismatch)")
    try:
        VerifyKey(bytes.fromhex(signature["public_key"])).verify(
            str(signature["body_sha256"]).encode(), bytes.fromhex(signature["value"])
        )
    except (KeyError, ValueError, TypeError, BadSignatureError):
        problems.append("the signature does not match the signed digest and public key")
    return problems


TREND_COLUMNS: Final = (
    "record",
    "created",
    "commit",
    "horizon",
    "arm",
    "options",
    "rank",
    "valid",
    "status",
    "drift_c",
    "drift_c_low",
    "drift_c_high",
)
"""The columns of the trend view (``leaderboard_trend``): one row per record, horizon and arm."""


def options_text(options: Mapping[str, Any] | None) -> str:
    """An arm's recorded options as one line (``top_k=8, model="m"``); empty when none."""
    if not options:
        return ""
    return ", ".join(
        f"{name}={json.dumps(value, sort_keys=True, ensure_ascii=False)}"
        for name, value in sorted(options.items())
    )


def trend_rows(folder: Path) -> list[dict[str, Any]]:
    """Every record's rows of a run folder, oldest first: the trend of each arm's DRIFT-C.

    ``horizon`` is ``all`` for the composite rows, else the horizon of a per-horizon row;
    ``options`` is the arm's recorded options as a line (empty when it was given none). A
    record that cannot be read is left out (``drift verify`` names what is wrong with it).
    """
    out: list[dict[str, Any]] = []
    for path in list_records(folder):
        try:
            record = load_record(path)
        except RecordError:
            continue
        groups = {"all": record["leaderboard"], **record.get("horizons", {})}
        for horizon, rows in groups.items():
            for row in rows:
                figure = row.get("drift_c") or {}
                out.append(
                    {
                        "record": path.name,
                        "created": record.get("created"),
                        "commit": record.get("code", {}).get("commit"),
                        "horizon": horizon,
                        "arm": row.get("arm"),
                        "options": options_text(row.get("options")),
                        "rank": row.get("rank"),
                        "valid": row.get("valid", True),
                        "status": (row.get("verification") or {}).get("status"),
                        "drift_c": figure.get("value"),
                        "drift_c_low": figure.get("ci_low"),
                        "drift_c_high": figure.get("ci_high"),
                    }
                )
    return out
