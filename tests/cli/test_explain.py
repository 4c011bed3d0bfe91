"""``drift explain``: a correct and an incorrect probe of one arm, on a world of the test's own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from report.tiny_world import TinyRun, invoke

from drift_pipeline.pipeline import connect


@pytest.fixture(scope="module")
def folder(tiny_run: TinyRun) -> Path:
    return tiny_run.folder / "data"


def _probe(folder: Path, arm: str, correct: bool) -> dict[str, str]:
    """The arm's first recall probe with that verdict, preferring one whose reading ignored a
    mention (a question, a hypothetical …) beside the one it counted."""
    relation = connect(folder).execute(
        "select a.probe_id, p.question, a.rationale, a.answer, r.context from probe_answers a "
        "join probes p using (scenario, horizon, replicate, probe_id) "
        "join retrievals r using (scenario, horizon, replicate, arm, probe_id) "
        "where a.arm = ? and a.correct = ? and a.probe_type = 'recall' "
        "order by a.rationale like '%not counted%' desc, a.horizon, a.probe_id limit 1",
        [arm, correct],
    )
    row = relation.fetchone()
    assert row is not None, f"{arm} has no {'correct' if correct else 'incorrect'} recall probe"
    return dict(zip([d[0] for d in relation.description], row, strict=True))


@pytest.mark.parametrize("correct", [True, False])
def test_a_probe_is_explained_from_memory_to_verdict(folder: Path, correct: bool):
    arm = "sentence_log@hard"
    probe = _probe(folder, arm, correct)
    result = invoke("explain", str(folder), "--arm", arm, "--probe", probe["probe_id"])
    assert result.exit_code == 0, result.output
    text = result.output
    assert f"probe {probe['probe_id']} (recall:" in text
    assert f"question: {probe['question']}" in text
    # What was stored after each evidence session: its tokens and the memory's lines about
    # the asked values (the whole snapshot with --full).
    assert "stored after each evidence session:" in text
    assert re.search(r"session \d+: \d+ tokens stored", text)
    assert re.search(
        r"memory at the checkpoint after session \d+ \(\d+ lines\); its lines about", text
    )
    # What retrieve returned, the answer, the verdict and the judge's own rationale.
    retrieved = text.split("retrieve returned:\n", 1)[1]
    first = (probe["context"] or "(nothing)").splitlines()[0]
    assert retrieved.startswith(f"  {first}")
    assert f"reader's answer: {probe['answer']}" in text
    assert f"verdict: {'correct' if correct else 'incorrect'}" in text
    assert f"why: {probe['rationale']}" in text
    # Why, line by line: the same reader read it again and agrees with the stored verdict ...
    reading = text.split("\nline by line (the retrieved context read again by ", 1)[1]
    assert "it now answers" not in reading.splitlines()[0]
    described = reading.splitlines()[1:]
    lines = (probe["context"] or "").splitlines()
    for line in described:
        found = MENTION.match(line)
        assert found, line
        # ... each mention names the line it sits on, as the context has it ...
        assert lines[int(found["line"]) - 1].strip() == found["text"]
    # ... and every rule the stored rationale names is among the lines' rules.
    rules = {MENTION.match(line)["rule"] for line in described}  # type: ignore[index]
    assert set(re.findall(r"rule ([\w-]+)\)", probe["rationale"])) <= rules
    if "not counted" in probe["rationale"]:
        assert any(": ignored as " in line for line in described)


MENTION = re.compile(
    r"^  line (?P<line>\d+): (counted|ignored) as [\w ]+ "
    r"\((?:(?:'.*'|\".*\"); )?rule (?P<rule>[^)]+)\): "
    r"(?:'.*'|\".*\") \(\w+\) — (?P<text>.*)$"
)


def test_full_prints_the_whole_memory(folder: Path):
    arm = "sentence_log@hard"
    probe = _probe(folder, arm, True)
    short = invoke("explain", str(folder), "--arm", arm, "--probe", probe["probe_id"])
    full = invoke("explain", str(folder), "--arm", arm, "--probe", probe["probe_id"], "--full")
    assert "the whole memory:" in full.output and "the whole memory:" not in short.output


def test_an_unknown_arm_or_probe_exits_2_naming_what_exists(folder: Path):
    wrong_arm = invoke("explain", str(folder), "--arm", "nope@hard", "--probe", "x")
    assert wrong_arm.exit_code == 2 and "sentence_log@hard" in wrong_arm.output
    wrong_probe = invoke("explain", str(folder), "--arm", "amnesiac@hard", "--probe", "x")
    assert wrong_probe.exit_code == 2 and "--probe x" in wrong_probe.output


def test_a_backend_name_names_its_arm_when_the_run_has_it_under_one_gate(folder: Path):
    probe = _probe(folder, "sentence_log@hard", True)
    bare = invoke("explain", str(folder), "--arm", "sentence_log", "--probe", probe["probe_id"])
    gated = invoke(
        "explain", str(folder), "--arm", "sentence_log@hard", "--probe", probe["probe_id"]
    )
    assert bare.exit_code == 0 and bare.output == gated.output
    # A name that is not a backend of the run is still refused, naming the arms.
    wrong = invoke("explain", str(folder), "--arm", "sentence", "--probe", probe["probe_id"])
    assert wrong.exit_code == 2 and "sentence_log@hard" in wrong.output
