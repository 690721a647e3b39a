"""Files the package writes: complete or not at all, the previous good file kept, no temporary left."""

import os
import stat

import pytest

from swift_plugins.core.files import atomic_path, column_names, read_rows, write_jsonl, write_text


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
