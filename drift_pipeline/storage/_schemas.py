"""Column definitions of every table: the one source of truth for writers, readers and tests."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

_KEY = [
    pa.field("scenario", pa.string(), nullable=False),
    pa.field("horizon", pa.string(), nullable=False),
    pa.field("replicate", pa.int32(), nullable=False),
]

_OPTION = pa.struct(
    [
        pa.field("text", pa.string()),
        pa.field("terms", pa.list_(pa.string())),
        pa.field("utility", pa.int8()),
    ]
)


@dataclass(frozen=True)
class TableDef:
    """A table: its name (also its Dagster asset's name), columns, and hive partition keys."""

    name: str
    schema: pa.Schema
    partition_by: tuple[str, ...]
    description: str


LATENT_PROFILES = TableDef(
    "latent_profiles",
    pa.schema(
        [
            *_KEY,
            pa.field("entity_id", pa.string(), nullable=False),
            pa.field("entity_type", pa.string(), nullable=False),
            pa.field("name", pa.string(), nullable=False),
            pa.field("stable_attributes", pa.string(), nullable=False),  # canonical JSON
            pa.field("initial_state", pa.string(), nullable=False),  # canonical JSON
        ]
    ),
    ("scenario", "horizon"),
    "One row per entity and replicate: stable attributes and latent initial state.",
)

EVENT_SCHEDULES = TableDef(
    "event_schedules",
    pa.schema(
        [
            *_KEY,
            pa.field("session_index", pa.int32(), nullable=False),
            pa.field("session_id", pa.string(), nullable=False),
            pa.field("sim_time", pa.timestamp("ms"), nullable=False),  # Parquet has no seconds unit
            pa.field("tier", pa.string(), nullable=False),
            pa.field("participants", pa.list_(pa.string()), nullable=False),
            pa.field("pattern", pa.string(), nullable=False),
            pa.field("n_turns", pa.int32(), nullable=False),
            pa.field("event_id", pa.string()),
            pa.field("event_type", pa.string()),
            pa.field("subject", pa.string()),
            pa.field("slot", pa.string()),
            pa.field("value", pa.string()),
            pa.field("previous_value", pa.string()),
            pa.field("op", pa.string()),
            pa.field("mention", pa.int32()),
            pa.field("enters_ground_truth", pa.bool_()),
        ]
    ),
    ("scenario", "horizon"),
    "One row per session: time, tier, participants, pattern and the event it carries.",
)

TRANSCRIPTS = TableDef(
    "transcripts",
    pa.schema(
        [
            *_KEY,
            pa.field("session_index", pa.int32(), nullable=False),
            pa.field("turn_index", pa.int32(), nullable=False),
            pa.field("speaker", pa.string(), nullable=False),
            pa.field("role", pa.string(), nullable=False),
            pa.field("content", pa.string(), nullable=False),
            pa.field("sim_time", pa.timestamp("ms"), nullable=False),  # Parquet has no seconds unit
            # Harness-private labels: never handed to a memory system.
            pa.field("label_event_id", pa.string()),
            pa.field("label_kind", pa.string(), nullable=False),
        ]
    ),
    ("scenario", "horizon"),
    "One row per turn. Label columns are harness-private and never reach a backend.",
)

GROUND_TRUTH = TableDef(
    "ground_truth",
    pa.schema(
        [
            *_KEY,
            pa.field("checkpoint", pa.int32(), nullable=False),
            pa.field("fact_id", pa.string(), nullable=False),
            pa.field("subject", pa.string(), nullable=False),
            pa.field("slot", pa.string(), nullable=False),
            pa.field("slot_kind", pa.string(), nullable=False),
            pa.field("value", pa.string(), nullable=False),
            pa.field("valid_from", pa.int32(), nullable=False),
            pa.field("valid_to", pa.int32()),
            pa.field("current", pa.bool_(), nullable=False),
            pa.field("source_session", pa.int32()),
            pa.field("tier", pa.string(), nullable=False),
            pa.field("event_id", pa.string()),
            pa.field("evidence_sessions", pa.list_(pa.int32()), nullable=False),
        ]
    ),
    ("scenario", "horizon"),
    "Facts at each checkpoint: those valid then (current) and those closed before it.",
)

PROBES = TableDef(
    "probes",
    pa.schema(
        [
            *_KEY,
            pa.field("checkpoint", pa.int32(), nullable=False),
            pa.field("probe_id", pa.string(), nullable=False),
            pa.field("probe_type", pa.string(), nullable=False),
            pa.field("subtype", pa.string(), nullable=False),
            pa.field("asker", pa.string(), nullable=False),
            pa.field("subject", pa.string(), nullable=False),
            pa.field("question", pa.string(), nullable=False),
            pa.field("answer", pa.string(), nullable=False),
            pa.field("aliases", pa.list_(pa.string()), nullable=False),
            pa.field("deprecated", pa.list_(pa.string()), nullable=False),
            pa.field("options", pa.list_(_OPTION), nullable=False),
            pa.field("correct_option", pa.int32()),
            pa.field("default_option", pa.int32()),
            pa.field("evidence_sessions", pa.list_(pa.int32()), nullable=False),
            pa.field("event_id", pa.string()),
            pa.field("polarity", pa.string(), nullable=False),
            pa.field("slot", pa.string(), nullable=False),
            pa.field("event_session", pa.int32()),
            pa.field("evidence_terms", pa.list_(pa.string()), nullable=False),
        ]
    ),
    ("scenario", "horizon"),
    "Probes per checkpoint with latent answers, aliases, deprecated values and options.",
)

WORLD_TABLES: tuple[TableDef, ...] = (
    LATENT_PROFILES,
    EVENT_SCHEDULES,
    TRANSCRIPTS,
    GROUND_TRUTH,
    PROBES,
)

SYNTHESIS_FALLBACKS = TableDef(
    "synthesis_fallbacks",
    pa.schema(
        [
            *_KEY,
            pa.field("session_index", pa.int32(), nullable=False),
            pa.field("session_id", pa.string(), nullable=False),
            pa.field("synthesizer", pa.string(), nullable=False),  # name@version that failed
            pa.field("fallback", pa.string(), nullable=False),  # name@version that wrote it
            pa.field("reason", pa.string(), nullable=False),
            pa.field("attempts", pa.int32(), nullable=False),
            pa.field("planned", pa.string(), nullable=False),  # family ids of the session's plan
        ]
    ),
    ("scenario", "horizon"),
    "Sessions the LLM synthesizer failed to write verifiably, written by the template instead.",
)
"""Written beside the world tables by synthesizers that can fall back (LLM); not one of
``WORLD_TABLES``, which every synthesizer writes."""

_ARM = [
    pa.field("arm", pa.string(), nullable=False),
    pa.field("backend", pa.string(), nullable=False),
    pa.field("gate", pa.string(), nullable=False),
]
_CELL_KEY = [*_KEY, *_ARM]
"""Key columns of per-replicate cell tables."""
_ARM_KEY = [*_KEY[:2], *_ARM]
"""Key columns of per-cell summaries (no replicate): scenario, horizon, arm, backend, gate."""

MEMORY_SNAPSHOTS = TableDef(
    "memory_snapshots",
    pa.schema(
        [
            *_CELL_KEY,
            pa.field("session_index", pa.int32(), nullable=False),
            pa.field("session_id", pa.string(), nullable=False),
            pa.field("tier", pa.string(), nullable=False),
            pa.field("transcript_tokens", pa.int64(), nullable=False),
            pa.field("write_ms", pa.float64(), nullable=False),
            pa.field("write_round_trip_ms", pa.float64(), nullable=False),
            # For a backend that ingests asynchronously: how long after store() returned what
            # it stored became findable (its wait_until_queryable()); null for one that does
            # not declare that (found at once) and for a faulted store.
            pa.field("queryable_ms", pa.float64()),
            # LLM tokens charged to the store: the metered ones, or the backend's own report
            # when it is more than 5% above them over the cell (the two columns below). A
            # null report: the backend did not know (never read as zero).
            pa.field("write_tokens", pa.int64(), nullable=False),
            pa.field("metered_write_tokens", pa.int64(), nullable=False),
            pa.field("reported_write_tokens", pa.int64()),
            # Model calls the worker saw the backend send to an endpoint other than the meter,
            # in the store and the reads before it (their tokens are not in the metered ones).
            pa.field("unmetered_calls", pa.int64(), nullable=False),
            # Null for a backend without snapshot(): not measured (never zero).
            pa.field("storage_tokens", pa.int64()),
            pa.field("storage_delta_tokens", pa.int64()),
            pa.field("checkpoint", pa.bool_(), nullable=False),
            pa.field("snapshot", pa.string()),  # only at checkpoint sessions
            pa.field("error", pa.string()),
            # The agent's reads of memory before the store (spec §5.1 step 4), one list entry
            # per retrieve: latency inside retrieve() and the harness's wait for its reply (the
            # reads travel in the stores' stream, so the worker may answer one before the
            # harness waits for it), tokens of the text
            # returned (counted by the harness), LLM tokens metered and self-reported inside
            # it, and its fault (null when it answered). The text itself is not kept: nothing is
            # scored from it.
            pa.field("session_reads", pa.int32(), nullable=False),
            pa.field("session_read_ms", pa.list_(pa.float64()), nullable=False),
            pa.field("session_read_round_trip_ms", pa.list_(pa.float64()), nullable=False),
            pa.field("session_read_tokens", pa.list_(pa.int64()), nullable=False),
            pa.field("session_metered_read_tokens", pa.list_(pa.int64()), nullable=False),
            pa.field("session_reported_read_tokens", pa.list_(pa.int64()), nullable=False),
            pa.field("session_read_errors", pa.list_(pa.string()), nullable=False),
            # The reader model's time to first token answering the opening message over what
            # the first read returned; null without a reader model (TTFRT modelled).
            pa.field("session_start_ttft_ms", pa.float64()),
            # Where the backend runs, as it declares ("local" or "cloud"): its latency budget.
            pa.field("deployment", pa.string(), nullable=False),
            # Whether it declares model calls the meter cannot see (its token cost may then be
            # known only in part).
            pa.field("models_outside_meter", pa.bool_(), nullable=False),
        ]
    ),
    ("scenario", "horizon", "arm"),
    "One row per arm, replicate and session: write cost, storage after, the agent's reads "
    "before the store, faults.",
)

RETRIEVALS = TableDef(
    "retrievals",
    pa.schema(
        [
            *_CELL_KEY,
            pa.field("checkpoint", pa.int32(), nullable=False),
            pa.field("probe_id", pa.string(), nullable=False),
            pa.field("asker", pa.string(), nullable=False),
            # Dictionary-encoded: every probe of a checkpoint may get the same (long) text.
            pa.field("context", pa.dictionary(pa.int32(), pa.string()), nullable=False),
            pa.field("read_ms", pa.float64(), nullable=False),
            pa.field("read_round_trip_ms", pa.float64(), nullable=False),
            pa.field("read_tokens", pa.int64(), nullable=False),
            # Charged like write_tokens: metered, or the backend's report when it is the larger.
            pa.field("llm_read_tokens", pa.int64(), nullable=False),
            pa.field("metered_read_tokens", pa.int64(), nullable=False),
            pa.field("reported_read_tokens", pa.int64()),
            pa.field("unmetered_calls", pa.int64(), nullable=False),  # as in memory_snapshots
            pa.field("soft_buffer_tokens", pa.int64(), nullable=False),
            pa.field("error", pa.string()),
            # The first line retrieve() returned that the checkpoint's snapshot() does not
            # account for (storage under-reported); null when every line was in it, or when
            # there was no snapshot to check against.
            pa.field("unreported", pa.string()),
        ]
    ),
    ("scenario", "horizon", "arm"),
    "One row per arm, replicate and probe: the text handed to the reader and its cost.",
)


PROBE_ANSWERS = TableDef(
    "probe_answers",
    pa.schema(
        [
            *_CELL_KEY,
            pa.field("checkpoint", pa.int32(), nullable=False),
            pa.field("probe_id", pa.string(), nullable=False),
            pa.field("probe_type", pa.string(), nullable=False),
            pa.field("subtype", pa.string(), nullable=False),
            pa.field("answer", pa.string(), nullable=False),
            # Null only when the reader or judge call failed (see judge_error): never guessed.
            pa.field("correct", pa.bool_()),
            pa.field("score", pa.float64()),
            pa.field("action_score", pa.int8()),
            pa.field("update_correct", pa.bool_()),
            pa.field("deprecation_correct", pa.bool_()),
            pa.field("judge", pa.string(), nullable=False),
            pa.field("rationale", pa.string(), nullable=False),
            pa.field("reader", pa.string()),  # name@version of the reader (LLM: model, prompt)
            pa.field("reader_ttft_ms", pa.float64()),  # measured; null when modelled
            pa.field("judge_error", pa.string()),  # the failed reader/judge call, one line
        ]
    ),
    ("scenario", "horizon", "arm"),
    "One row per arm, replicate and probe: the reader's answer and the judge's verdict.",
)

CELL_METRICS = TableDef(
    "cell_metrics",
    pa.schema(
        [
            *_ARM_KEY,
            pa.field("checkpoint", pa.string(), nullable=False),  # a session count, or "all"
            pa.field("metric", pa.string(), nullable=False),
            pa.field("value", pa.float64()),
            pa.field("ci_low", pa.float64()),
            pa.field("ci_high", pa.float64()),
            pa.field("n", pa.int64(), nullable=False),
            # "lower" or "upper" when the figure is a bound (a cell whose model spend is
            # unknown: its cost at least, MVOT and DRIFT-C at most); null for a value.
            pa.field("bound", pa.string()),
        ]
    ),
    ("scenario", "horizon", "arm"),
    "Per arm, horizon and checkpoint (or all): every metric with its 95% interval.",
)

COST_CURVES = TableDef(
    "cost_curves",
    pa.schema(
        [
            *_ARM_KEY,
            pa.field("checkpoint", pa.int32(), nullable=False),
            pa.field("cumulative_write_tokens", pa.float64(), nullable=False),
            pa.field("storage_tokens", pa.float64(), nullable=False),
            pa.field("cumulative_read_tokens", pa.float64(), nullable=False),
            pa.field("cumulative_tokens", pa.float64(), nullable=False),
            pa.field("mvot_so_far", pa.float64()),
            # Where the LLM tokens come from: "metered", "self-reported", or "unknown" (a
            # model spend the meter cannot see: the tokens are at least, MVOT at most, these).
            pa.field("model_tokens", pa.string(), nullable=False),
        ]
    ),
    ("scenario", "horizon", "arm"),
    "Token cost curve: cumulative tokens and MVOT so far at each checkpoint (spec §7.7).",
)

CELL_TABLES: tuple[TableDef, ...] = (
    MEMORY_SNAPSHOTS,
    RETRIEVALS,
    PROBE_ANSWERS,
    CELL_METRICS,
    COST_CURVES,
)
