"""The audit of a Countdown table."""

from swift_plugins.countdown.audit import audit


def test_audit_counts_solvable_trivial_duplicates_and_unsupported():
    nums = [[6, 2, 6], [1, 1, 1], [2, 3], [6, 2, 6], [1, 2, 3, 4, 5], [3, 2, 6], [20_000, 1]]
    targets = [24, 100, 5, 24, 15, 36, 20_001]
    report = audit(nums, targets, jobs=1)
    assert report.rows == 7
    assert report.solvable == 4
    assert report.unsolvable_rows == [1]
    assert report.unsupported_rows == [4, 6]  # five numbers; a number beyond the solver's bound
    assert report.duplicates == 1
    assert report.trivial == 4  # 2+3=5, 1+2+3+4+5=15, 3*2*6=36, 20000+1=20001
    assert report.by_count == {2: (2, 1), 3: (4, 3), 5: (1, 0)}
    assert report.targets["max"] == 20_001 and report.numbers["min"] == 1


def test_parallel_audit_agrees(countdown_rows):
    nums = [r["nums"] for r in countdown_rows] + [[1, 1, 1]]
    targets = [r["target"] for r in countdown_rows] + [99]
    one, two = audit(nums, targets, jobs=1), audit(nums, targets, jobs=2)
    assert one.as_dict() == two.as_dict()
    assert one.unsolvable_rows == two.unsolvable_rows == [len(countdown_rows)]


def test_huge_numbers_and_targets_are_unsupported_rows_not_an_overflow():
    nums = [[6, 2, 6], [1, 2, 3], [10**30, 2, 3], [1] * 5, [2, 2]]
    targets = [24, 10**21, 6, -(10**400), 4]
    report = audit(nums, targets, jobs=1)
    assert report.unsupported_rows == [1, 2, 3] and report.solvable == 2 and report.unsolvable_rows == []
    assert report.targets["max"] == 10**21 and report.numbers["max"] == 10**30  # exact, as in the file
    assert report.targets["min"] == -(10**400) and report.targets["mean"] is None  # beyond floating point
    assert report.numbers["median"] == 2.0
