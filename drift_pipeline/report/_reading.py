"""Why a verdict: the careful reader's reading of one probe, line by line, for the drill-down.

The stored ``rationale`` is one line. The drill-down reads the probe's retrieved context again
with the same reader (it is deterministic) and lists every mention of a candidate value: the
line, the value and its role (current, deprecated, decoy, other), and how the reader took it,
``counted`` (asserted, retracted, negated) or ``ignored`` as a question, a hypothetical, a wish,
another speaker's fact and so on, with the cue and the id of the rule that decided. The memory
snapshots are read the same way, so the lines of memory about the probe's values show beside
the verdict. An LLM reader's answer is read as the judge read it
(:func:`~drift_pipeline.evaluation.reader.reading_from_answer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import duckdb

    from drift_pipeline.evaluation.reader import ReaderProbe, Reading

__all__ = ["COUNTED_FRAMES", "MentionLine", "Rereader"]

COUNTED_FRAMES: Final = frozenset({"asserted", "retracted", "negated"})
"""Frames the reader counts; every other frame is a mention it ignored."""
WORLD_TABLES: Final = ("probes", "latent_profiles", "ground_truth")


@dataclass(frozen=True)
class MentionLine:
    """One mention of a candidate value, as the reader took it.

    Attributes:
        line: The line's number in the text (1-based).
        text: The line as written.
        value: The candidate value mentioned, and ``role`` its role for the probe.
        frame: How the reader took it (``asserted``, ``question``, ``hypothetical`` …).
        cue: The words that decided the frame; ``rule`` the rule's id.
    """

    line: int
    text: str
    value: str
    role: str
    frame: str
    cue: str
    rule: str

    @property
    def counted(self) -> bool:
        """Whether the reader counted the mention (else it ignored it)."""
        return self.frame in COUNTED_FRAMES

    def describe(self) -> str:
        """``line 4: counted as asserted ('I moved to'; rule r12): 'Oslo' (current) — text``."""
        how = "counted as" if self.counted else "ignored as"
        cue = f"{self.cue!r}; " if self.cue else ""
        return (
            f"line {self.line}: {how} {self.frame} ({cue}rule {self.rule or '—'}): "
            f"{self.value!r} ({self.role}) — {self.text.strip()}"
        )


class Rereader:
    """Reads probes' texts again with the careful reader; one world's probe views at a time.

    Args:
        con: DuckDB with the run's views (``probes``, ``latent_profiles``, ``ground_truth``).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        self._views: dict[tuple[str, str, int], dict[str, Mapping[str, Any]]] = {}

    def available(self) -> bool:
        """Whether the run folder has the world tables a reading needs."""
        views = {r[0] for r in self._con.execute("select view_name from duckdb_views()").fetchall()}
        return set(WORLD_TABLES) <= views

    def _probe_rows(self, scenario: str, horizon: str, replicate: int) -> dict[str, Any]:
        key = (scenario, horizon, replicate)
        if key not in self._views:
            from drift_pipeline.evaluation import with_reader_columns

            tables = [
                self._con.sql(
                    f"select * from {table} where scenario = ? and horizon = ? and replicate = ?",
                    params=[scenario, horizon, replicate],
                ).to_arrow_table()
                for table in WORLD_TABLES
            ]
            probes = with_reader_columns(*tables)
            # One world's probes at a time: a report walks its probes world by world.
            self._views = {key: {row["probe_id"]: row for row in probes.to_pylist()}}
        return self._views[key]

    def probe(
        self, scenario: str, horizon: str, replicate: int, probe_id: str
    ) -> ReaderProbe | None:
        """The careful reader's view of the probe; ``None`` for a family with its own judge."""
        from drift_pipeline.evaluation import reader_probe
        from drift_pipeline.world.probe_families import get_probe_family

        row = self._probe_rows(scenario, horizon, replicate).get(probe_id)
        if row is None or not get_probe_family(str(row["probe_type"])).careful_reader:
            return None
        return reader_probe(row)

    @staticmethod
    def read(text: str, view: ReaderProbe, answer: bool = False) -> Reading:
        """``text`` read for ``view``: a retrieved context, or (``answer``) a reader's answer."""
        from drift_pipeline.evaluation.reader import read_context, reading_from_answer

        return reading_from_answer(text, view) if answer else read_context(text, view)

    @staticmethod
    def mentions(reading: Reading, text: str) -> tuple[MentionLine, ...]:
        """Every candidate mention of ``reading``, numbered as lines of ``text``."""
        lines = text.splitlines()
        out = []
        for mention in reading.mentions:
            index = int(mention.line)
            line = lines[index] if 0 <= index < len(lines) else mention.text
            out.append(
                MentionLine(
                    index + 1,
                    line,
                    str(mention.value),
                    str(mention.role),
                    str(mention.frame),
                    str(mention.cue),
                    str(mention.rule),
                )
            )
        return tuple(out)
