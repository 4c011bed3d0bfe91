"""``drift query``: SQL in DuckDB over a run's tables."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

import click

from .common import OUT_OPTION
from .errors import CommandError

if TYPE_CHECKING:
    import duckdb

    from drift_pipeline.storage import StorageRoot


@click.command("query")
@click.argument("sql")
@OUT_OPTION
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
def command(sql: str, out: StorageRoot, fmt: str) -> None:
    """Run SQL in DuckDB over a run's tables (one view per table: probes, cell_metrics, …).

    Beside the tables, ``leaderboard_trend`` holds every stored leaderboard record's rows: one
    per record, horizon (``all``: the composite) and arm, with its date and DRIFT-C.
    """
    query_exec(sql, out, fmt)


def query_exec(sql: str, out: StorageRoot, fmt: str) -> None:
    """Print the result of ``sql`` over the tables under ``out`` as a table, CSV or JSON.

    Raises:
        CommandError: ``out`` is not a folder, or the query failed (its first line; exit 2).
    """
    import duckdb

    from drift_pipeline.pipeline import connect

    folder = out.local_path
    if folder is not None and not folder.is_dir():
        what = "a file, not a folder" if folder.exists() else "no such folder"
        raise CommandError(f"--out {out}: {what} (the run's folder, as drift run --out gave it)")
    con = connect(out)
    _register_trend(con, out)
    try:
        relation = con.sql(sql)
    except duckdb.Error as error:
        raise CommandError(f"query failed: {str(error).splitlines()[0]}") from error
    if relation is None:
        return
    if fmt == "table":
        click.echo(str(relation))
        return
    frame = relation.to_arrow_table()
    if fmt == "csv":
        # RFC 4180 quoting: a text value holding a comma, quote or line break stays one field.
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(frame.column_names)
        for row in zip(*(frame.column(c).to_pylist() for c in frame.column_names), strict=True):
            writer.writerow("" if v is None else v for v in row)
        click.echo(buffer.getvalue(), nl=False)
    else:
        click.echo(json.dumps(frame.to_pylist(), default=str, indent=2))


def _register_trend(con: duckdb.DuckDBPyConnection, out: StorageRoot) -> None:
    """The ``leaderboard_trend`` view over a local folder's records (an S3 root has none)."""
    import pyarrow as pa

    from drift_pipeline.report import TREND_COLUMNS, trend_rows

    folder = out.local_path
    rows = trend_rows(folder) if folder is not None else []
    types = {"rank": pa.int64(), "valid": pa.bool_()} | {
        name: pa.float64() for name in ("drift_c", "drift_c_low", "drift_c_high")
    }
    schema = pa.schema([(name, types.get(name, pa.string())) for name in TREND_COLUMNS])
    con.register("leaderboard_trend", pa.Table.from_pylist(rows, schema=schema))
