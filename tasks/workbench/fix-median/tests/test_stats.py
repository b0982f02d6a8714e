import pytest

import stats


def test_odd_count_unsorted():
    assert stats.median([3, 1, 2]) == 2


def test_even_count_is_mean_of_middle_pair():
    assert stats.median([4, 1, 3, 2]) == 2.5
    assert stats.median([1, 1]) == 1.0


def test_negative_and_float_values():
    assert stats.median([-5, -1, -3]) == -3
    assert stats.median([0.5, 0.25]) == pytest.approx(0.375)


def test_empty_raises():
    with pytest.raises(ValueError):
        stats.median([])


def test_input_not_modified():
    values = [3, 1, 2]
    stats.median(values)
    assert values == [3, 1, 2]


def test_mean_unchanged():
    assert stats.mean([1, 2, 3, 4]) == 2.5
    with pytest.raises(ValueError):
        stats.mean([])
