"""Reports: summaries, leaderboards and cost curves rendered for people."""

from ._board import render_board, render_record_board
from ._budget import BUDGET_TARGETS_MS, BudgetFigure, budget_json
from ._compare import comparison_lines
from ._explain import render_trace, render_traces
from ._leaderboard import (
    NOT_APPLICABLE,
    RANK_METRIC,
    ArmStanding,
    arm_rows,
    horizon_standings,
    render_budget,
    render_leaderboard,
    render_subtype_recall,
    standings,
    summary_json,
    verifications,
)
from ._page import REPORT_FILE, REPORTS_FOLDER, write_report
from ._plots import PLOT_TITLES, Plot, export_plots, report_plots
from ._privacy import ALLOWED_LEAK_MARK, allowed_leaks
from ._records import (
    RECORD_TIME_ENV,
    RECORDS_FOLDER,
    SIGNING_KEY_ENV,
    TREND_COLUMNS,
    RecordError,
    build_record,
    latest_record,
    list_records,
    load_record,
    record_problems,
    record_time,
    sign,
    trend_rows,
    write_record,
)
from ._report_data import ProbeTrace, ReportData, gather, probe_traces
from ._scoring import EXACT_PATH_LINE, cell_scoring, scoring_json, scoring_lines
from ._table import table_lines
from ._trust import SANITY_ARMS, SANITY_MARGIN, Verification, verify_rows
from ._world_summary import render_world_summaries

__all__ = [
    "ALLOWED_LEAK_MARK",
    "BUDGET_TARGETS_MS",
    "EXACT_PATH_LINE",
    "NOT_APPLICABLE",
    "PLOT_TITLES",
    "RANK_METRIC",
    "RECORDS_FOLDER",
    "RECORD_TIME_ENV",
    "REPORTS_FOLDER",
    "REPORT_FILE",
    "SANITY_ARMS",
    "SANITY_MARGIN",
    "SIGNING_KEY_ENV",
    "TREND_COLUMNS",
    "ArmStanding",
    "BudgetFigure",
    "Plot",
    "ProbeTrace",
    "RecordError",
    "ReportData",
    "Verification",
    "allowed_leaks",
    "arm_rows",
    "budget_json",
    "build_record",
    "cell_scoring",
    "comparison_lines",
    "export_plots",
    "gather",
    "horizon_standings",
    "latest_record",
    "list_records",
    "load_record",
    "probe_traces",
    "record_problems",
    "record_time",
    "render_board",
    "render_budget",
    "render_leaderboard",
    "render_record_board",
    "render_subtype_recall",
    "render_trace",
    "render_traces",
    "render_world_summaries",
    "report_plots",
    "scoring_json",
    "scoring_lines",
    "sign",
    "standings",
    "summary_json",
    "table_lines",
    "trend_rows",
    "verifications",
    "verify_rows",
    "write_record",
    "write_report",
]
