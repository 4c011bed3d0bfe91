"""Write a run folder's HTML report with its plots beside it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from ._html import render_html
from ._plots import export_plots, report_plots
from ._report_data import gather

if TYPE_CHECKING:
    import duckdb

__all__ = ["REPORTS_FOLDER", "REPORT_FILE", "write_report"]

REPORTS_FOLDER: Final = "_reports"
REPORT_FILE: Final = "report.html"


def write_report(
    folder: Path,
    con: duckdb.DuckDBPyConnection,
    record: Path | None = None,
    target: Path | None = None,
) -> Path:
    """Write ``report.html`` (and each plot as SVG and PNG) for the run in ``folder``.

    Args:
        folder: The run folder (its records and tables).
        con: DuckDB with a view per stored table of ``folder``.
        record: The record to report (default: the latest).
        target: The page's path (default: ``<folder>/_reports/report.html``); the plots go
            beside it.

    Returns:
        The page's path.

    Raises:
        RecordError: No record to report.
    """
    data = gather(folder, con, record)
    page = target or folder / REPORTS_FOLDER / REPORT_FILE
    plots = report_plots(data)
    svgs = export_plots(plots, page.parent)
    text = render_html(data, plots, svgs)
    staged = page.with_name(page.name + ".part")
    staged.write_text(text, encoding="utf-8")
    staged.replace(page)  # whole or not at all
    return page
