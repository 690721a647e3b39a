"""Files the package writes: complete or not at all, the previous good file kept, no temporary left."""

import json
import os
import stat

import pyarrow.parquet as pq
import pytest

from swift_plugins.core.errors import DataError, OutputError, PluginError
from swift_plugins.core.files import (
    FOLDER,
    FORMATS,
    atomic_path,
    check_output,
    check_outputs,
    column_names,
    distinct_inputs,
    read_rows,
    write_jsonl,
    write_rows,
    write_text,
)

ROWS = [{"nums": [6, 2, 6], "target": 24}, {"nums": [1, 1], "target": 2}]


def rows_then_failure(count):
    for index in range(count):
        yield {"row": index}
    raise RuntimeError("disk on fire")


def test_a_failed_write_keeps_the_previous_file_and_leaves_nothing_behind(tmp_path):
    path = tmp_path / "rows.jsonl"
    assert write_jsonl([{"row": "good"}], path) == 1
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_jsonl(rows_then_failure(1000), path)
    assert [row for _, row in read_rows(path)] == [{"row": "good"}]
    assert os.listdir(tmp_path) == ["rows.jsonl"]


def test_an_interrupted_first_write_leaves_no_file(tmp_path):
    path = tmp_path / "new" / "report.json"
    with pytest.raises(KeyboardInterrupt), atomic_path(path) as partial:
        partial.write_text('{"half": ')
        raise KeyboardInterrupt
    assert not path.exists() and os.listdir(tmp_path / "new") == []


def test_the_temporary_keeps_the_suffix_and_the_result_a_normal_mode(tmp_path):
    with atomic_path(tmp_path / "curves.png") as partial:
        assert partial.suffix == ".png" and partial.parent == tmp_path and partial.name != "curves.png"
        partial.write_bytes(b"png")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "curves.png").stat().st_mode) == 0o666 & ~umask
    assert write_text("hello\n", tmp_path / "a.txt").read_text() == "hello\n"


def test_column_names_of_each_format(tmp_path):
    write_jsonl([{"question": "q", "answer": "#### 1"}], tmp_path / "a.jsonl")
    (tmp_path / "b.json").write_text('[{"nums": [1], "target": 1}]')
    (tmp_path / "c.jsonl").write_text("not json\n")
    assert column_names(tmp_path / "a.jsonl") == {"question", "answer"}
    assert column_names(tmp_path / "b.json") == {"nums", "target"}
    assert column_names(tmp_path / "c.jsonl") == set()


def test_rows_are_written_in_the_format_the_extension_names(tmp_path):
    for suffix in (".jsonl", ".json", ".parquet"):
        assert write_rows(ROWS, tmp_path / "sub" / f"rows{suffix}") == 2
        assert [row for _, row in read_rows(tmp_path / "sub" / f"rows{suffix}")] == ROWS
    assert pq.read_table(tmp_path / "sub" / "rows.parquet").to_pylist() == ROWS
    assert json.loads((tmp_path / "sub" / "rows.json").read_text()) == ROWS
    assert [json.loads(line) for line in (tmp_path / "sub" / "rows.jsonl").read_text().splitlines()] == ROWS


def test_an_unknown_extension_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(OutputError) as refused:
        write_rows(ROWS, tmp_path / "new" / "rows.csv")
    assert str(refused.value) == f"{tmp_path}/new/rows.csv: cannot write it (expected a .jsonl, .json or .parquet file)"
    assert os.listdir(tmp_path) == []
    with pytest.raises(OutputError, match=r"report\.txt: cannot write it \(expected a \.json file\)"):
        check_output(tmp_path / "report.txt", (".json",))


@pytest.mark.parametrize("write", [lambda path: write_rows(ROWS, path), lambda path: write_text("{}", path)])
def test_an_unwritable_output_names_the_users_path_not_a_temporary(tmp_path, write):
    folder = tmp_path / "taken.json"
    folder.mkdir()
    a_file = tmp_path / "file"
    a_file.write_text("")
    for path, reason in ((folder, "Is a directory"), (a_file / "out.json", f"{a_file} is a file, not a folder")):
        with pytest.raises(PluginError) as refused:
            write(path)
        assert str(refused.value) == f"{path}: cannot write it ({reason})"
    assert sorted(os.listdir(tmp_path)) == ["file", "taken.json"] and os.listdir(folder) == []


def test_check_output_refuses_what_cannot_be_written_and_creates_nothing(tmp_path):
    (tmp_path / "folder.jsonl").mkdir()
    (tmp_path / "file").write_text("")
    assert check_output(tmp_path / "a" / "b" / "rows.jsonl") == tmp_path / "a" / "b" / "rows.jsonl"
    assert check_output(tmp_path / "rows.parquet").name == "rows.parquet"
    refusals = {
        tmp_path / "folder.jsonl": "Is a directory",
        tmp_path / "file" / "deeper" / "rows.jsonl": f"{tmp_path / 'file'} is a file, not a folder",
        tmp_path / "rows": "expected a .jsonl, .json or .parquet file",
    }
    for path, reason in refusals.items():
        with pytest.raises(OutputError) as refused:
            check_output(path)
        assert str(refused.value) == f"{path}: cannot write it ({reason})"
    assert sorted(os.listdir(tmp_path)) == ["file", "folder.jsonl"]


def test_a_write_failure_names_the_users_path_and_other_files_errors_pass_through(tmp_path):
    path = tmp_path / "curves.png"
    with pytest.raises(OutputError) as refused, atomic_path(path) as partial:
        raise OSError(28, "No space left on device", str(partial))
    assert str(refused.value) == f"{path}: cannot write it (No space left on device)"
    with pytest.raises(FileNotFoundError), atomic_path(path):
        (tmp_path / "missing-input.jsonl").read_text()  # an input the block reads: its own error, untouched
    assert os.listdir(tmp_path) == []


def test_no_output_is_an_input_or_another_output_whatever_the_spelling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval").mkdir()
    for name in ("rows.jsonl", "eval/results.jsonl"):
        (tmp_path / name).write_text("{}\n")
    (tmp_path / "link.jsonl").symlink_to("rows.jsonl")
    refusals = [
        ([("rows.jsonl", FORMATS)], ["rows.jsonl"], "an input of this command: write it elsewhere"),
        ([("link.jsonl", FORMATS)], ["rows.jsonl"], "an input of this command: write it elsewhere"),
        ([("rows.jsonl", FORMATS)], [tmp_path / "link.jsonl"], "an input of this command: write it elsewhere"),
        ([(f"../{tmp_path.name}/rows.jsonl", FORMATS)], ["rows.jsonl"], "an input of this command: write it elsewhere"),
        ([("eval", FOLDER)], ["eval/results.jsonl"], "an input of this command: write it elsewhere"),  # replaced whole
        ([("a.json", (".json",)), ("./a.json", FORMATS)], [], "two outputs of this command go there: give each its "
                                                              "own path"),
        ([("out", FOLDER), ("out/a.json", (".json",))], [], "two outputs of this command go there: give each its own "
                                                             "path"),
    ]  # fmt: skip
    for outputs, inputs, reason in refusals:
        with pytest.raises(OutputError) as refused:
            check_outputs(outputs, inputs)
        assert str(refused.value).endswith(f": cannot write it ({reason})"), (outputs, inputs)
    check_outputs([("eval/score.json", (".json",)), (None, FORMATS), ("eval", FOLDER)][:2], [None, "rows.jsonl"])
    assert sorted(os.listdir(tmp_path)) == ["eval", "link.jsonl", "rows.jsonl"]


def test_a_name_the_file_system_refuses_is_refused_before_any_work_and_a_long_one_it_takes_is_written(tmp_path):
    for path in (tmp_path / f"{'x' * 300}.jsonl", tmp_path / ("y" * 300) / "rows.jsonl", tmp_path / ("é" * 200)):
        with pytest.raises(OutputError, match=r"cannot write it \(a name of \d+ bytes, over the 255 the file system"):
            check_output(path, FORMATS if path.suffix else FOLDER)
    deep = tmp_path.joinpath(*["z" * 250] * 17, "rows.jsonl")
    with pytest.raises(OutputError, match=r"cannot write it \(a path over the 4096 bytes the system takes\)"):
        check_output(deep)
    longest = tmp_path / f"{'w' * 249}.jsonl"  # 255 bytes: its temporary's name must fit too
    assert write_rows(ROWS, longest) == 2 and os.listdir(tmp_path) == [longest.name]


def test_a_file_given_twice_is_refused_whatever_the_spelling(tmp_path):
    (tmp_path / "a.jsonl").write_text("")
    (tmp_path / "b.jsonl").symlink_to("a.jsonl")
    distinct_inputs([tmp_path / "a.jsonl", tmp_path / "c.jsonl"])
    with pytest.raises(DataError, match=r"b\.jsonl: the same file as .*a\.jsonl: give each once"):
        distinct_inputs([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])


BROKEN = {
    "cut.json": (b'[{"nums": [1, 2], "target": 3}, {"nums": [', "cut.json:1: not valid JSON (Expecting value at "
                 "column 43)"),
    "lines.json": (b'[{"nums": [1],\n "target": }]', "lines.json:2: not valid JSON (Expecting value at column 12)"),
    "empty.json": (b"", "empty.json: an empty file (a .json file holds a list of row objects)"),
    "deep.json": (b"[" * 100_000, "deep.json: not valid JSON here (nested too deeply)"),
    "binary.json": (b"\x89PNG\r\n", "binary.json: not UTF-8 text (byte 0x89 at offset 0): save it as UTF-8"),
    "cut.jsonl": (b'{"a": 1}\n{"a": ', "cut.jsonl:2: not valid JSON (Expecting value at column 7)"),
    "empty.parquet": (b"", "empty.parquet: not a readable Parquet file (Parquet file size is 0 bytes): write it again"),
    "random.parquet": (bytes(range(256)) * 8, "random.parquet: not a readable Parquet file (Parquet magic bytes not "
                       "found in footer): write it again"),
}  # fmt: skip


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_file_is_one_line_naming_it_and_its_line(tmp_path, name):
    data, message = BROKEN[name]
    (tmp_path / name).write_bytes(data)
    with pytest.raises(DataError) as refused:
        list(read_rows(tmp_path / name))
    assert str(refused.value) == f"{tmp_path}/{message}"
    assert column_names(tmp_path / name) == ({"a"} if name == "cut.jsonl" else set())  # a jsonl's first row's


def test_a_parquet_file_cut_short_and_a_folder_are_one_line(tmp_path):
    write_rows(ROWS * 50, tmp_path / "rows.parquet")
    data = (tmp_path / "rows.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    (tmp_path / "folder.jsonl").mkdir()
    for path, message in ((tmp_path / "cut.parquet", "not a readable Parquet file (Parquet magic bytes not found in "
                           "footer): write it again"), (tmp_path / "folder.jsonl", "a folder, not a file")):
        with pytest.raises(DataError) as refused:
            list(read_rows(path))
        assert str(refused.value) == f"{path}: {message}"
