"""Reading Countdown files: every format, and errors that name the file and the line or row."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swift_plugins.core.files import column_names
from swift_plugins.countdown.data import COUNTDOWN, DataError, read_columns, read_rows


def test_the_three_formats_read_alike(tmp_path):
    rows = [{"nums": [6, 2, 6], "target": 24}, {"nums": [1, 2], "target": 3}]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    (tmp_path / "a.json").write_text(json.dumps(rows))
    pq.write_table(
        pa.table({"nums": [r["nums"] for r in rows], "target": [r["target"] for r in rows]}), tmp_path / "a.parquet"
    )
    for name in ("a.jsonl", "a.json", "a.parquet"):
        assert read_columns(tmp_path / name) == ([[6, 2, 6], [1, 2]], [24, 3])
        assert COUNTDOWN.holds_data(column_names(tmp_path / name))
    assert [where for where, _ in read_rows(tmp_path / "a.parquet")] == [
        f"{tmp_path / 'a.parquet'}: row {i}" for i in (0, 1)
    ]


def test_errors_name_the_true_line_of_a_jsonl_file(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"nums": [1, 2], "target": 3}\n\n{"nums": "x", "target": 3}\n')
    with pytest.raises(DataError, match=r"data.jsonl:3: nums must be a non-empty list of integers, got 'x'"):
        read_columns(path)
    path.write_text('{"nums": [1, 2], "target": 3}\n{"nums": [1, 2]}\n')
    with pytest.raises(
        DataError,
        match=r"data.jsonl:2: Countdown data needs columns 'nums' and 'target'; "
        r"missing \['target'\]",
    ):
        read_columns(path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("rows.json", '{"nums": [1]}', "must hold a list of row objects"),
        ("rows.jsonl", "[1, 2]\n", "rows.jsonl:1: a row must be a JSON object"),
        ("rows.csv", "nums,target\n", "expected a .jsonl, .json, .parquet file"),
    ],
)
def test_malformed_files_fail_clearly(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(DataError, match=message):
        read_columns(tmp_path / name)
