"""``drift judge-check``: how strict the reader and judge are, on a labelled set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .common import OUT_OPTION, evaluation_options, json_option
from .errors import CommandError

if TYPE_CHECKING:
    from drift_pipeline.storage import StorageRoot


@click.command("judge-check")
@click.option(
    "--judge",
    type=click.Choice(["rule", "llm"]),
    default="llm",
    show_default=True,
    help="llm: the pinned LLM judge (DRIFT_LLM_BASE_URL, DRIFT_JUDGE_MODEL or DRIFT_LLM_MODEL); "
    "rule: the offline careful reader and the context judge (default set: labelled contexts).",
)
@click.option(
    "--set",
    "check_set",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="A labelled set of your own (JSON lines; each item an answer or a context); default: "
    "the shipped contexts (--judge rule) or answers (--judge llm).",
)
@click.option(
    "--others",
    is_flag=True,
    help="With --judge rule and no --set: the shipped contexts written by other authors "
    "(eleven sets, 1,658 items) instead of the hand-written ones.",
)
@click.option(
    "--write-figures",
    is_flag=True,
    help="Re-measure the careful reader on every labelled set the package ships and rewrite "
    "the figures every leaderboard quotes (evaluation/data/reader_figures.json).",
)
@click.option(
    "--held-out",
    "held_out",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="With --write-figures: also measure this set by other authors, kept outside the "
    "package and never used to revise the rules (repeat for several). Its figures are the "
    "reader's on text it has not met; once a rule is changed because of one, it is no longer "
    "held out.",
)
@OUT_OPTION
@json_option("Also write the report (rates, categories, every decision) as JSON to this file.")
def command(
    judge: str,
    check_set: Path | None,
    others: bool,
    write_figures: bool,
    held_out: tuple[Path, ...],
    out: StorageRoot,
    json_path: Path | None,
) -> None:
    """How strict are the reader and judge? Accuracy, false accepts and rejects on a labelled set.

    An item carries an answer (scored by the judge) or a context (read by the offline careful
    reader, then scored). The shipped context set covers plain, paraphrased, vague,
    hypothetical, questioned, third-party, sarcastic, negated, retracted and dated statements;
    the shipped answer set holds vague, wrong, paraphrased and plain answers. Targets: accuracy
    at least 90%, false accepts at most 5%. LLM replies are cached under --out's llm_cache.
    """
    if held_out and not write_figures:
        raise CommandError("--held-out: only with --write-figures")
    if write_figures:
        from drift_pipeline.evaluation._reader_figures import echo_written, write_shipped_figures

        try:
            echo_written(*write_shipped_figures(None, held_out), click.echo)
        except (OSError, ValueError) as error:
            raise CommandError(str(error)) from error
        return
    judge_check_exec(judge, check_set, others, out, json_path)


def judge_check_exec(
    judge: str, check_set: Path | None, others: bool, out: StorageRoot, json_path: Path | None
) -> None:
    """Score the set with the rule or LLM judge; print the report, optionally write its JSON.

    Raises:
        CommandError: An unreadable set, or the LLM judge without its endpoint (exit 2).
    """
    from drift_pipeline.evaluation import LLMJudge, RuleJudge, load_check_set, run_judge_check
    from drift_pipeline.llm import LLMClient
    from drift_pipeline.pipeline import llm_cache_location

    try:
        items = load_check_set(check_set, contexts=judge == "rule", others=others)
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from error
    if judge == "rule":
        report = run_judge_check(RuleJudge(), items)
    else:
        options = evaluation_options("llm", "llm")
        assert options.judge_llm is not None
        with LLMClient(options.judge_llm, llm_cache_location(out)) as client:
            report = run_judge_check(LLMJudge(client), items)
    click.echo(report.render())
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
