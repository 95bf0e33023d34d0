"""CSV exports open in spreadsheets: no text cell may be read as a formula, and numbers stay numbers."""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path

import pytest

from probes.link.protocol import ProfileReport
from tui.export import CSV_COLUMNS, to_csv

DATA = Path(__file__).parents[1] / "data"


def exported(chain: str, **kernel: object) -> list[dict[str, str]]:
    m = ProfileReport.from_json((DATA / "h200_add.json").read_text()).results[0]
    first = dataclasses.replace(m.kernels[0], **kernel)
    rows = csv.DictReader(io.StringIO(to_csv([dataclasses.replace(m, chain=chain, kernels=[first])]), newline=""))
    assert tuple(rows.fieldnames or ()) == CSV_COLUMNS
    return list(rows)


@pytest.mark.parametrize("chain", ["-a + b", "+a", "=1+1", "@SUM(A1)", "\ta", "\ra"])
def test_a_chain_that_starts_like_a_formula_is_quoted(chain: str) -> None:
    assert {row["chain"] for row in exported(chain)} == {"'" + chain}


def test_hostile_kernel_names_and_ops_are_quoted_and_numbers_stay_numbers() -> None:
    [row, *_] = exported(
        "(a + b).relu()",
        name='=HYPERLINK("https://example.invalid","x")',
        short_name="-2+3",
        ops=["@evil"],
        device_time_us=-1.5,
    )
    assert row["chain"] == "(a + b).relu()"
    assert row["kernel"] == '\'=HYPERLINK("https://example.invalid","x")'
    assert row["short_name"] == "'-2+3" and row["ops"] == "'@evil"
    assert row["device_time_us"] == "-1.5"  # a number, read as one
