import pytest

from solution import region_totals


def write(tmp_path, text):
    path = tmp_path / "in.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_example_file_shape(tmp_path):
    path = write(tmp_path, "region,amount\nNorth,10.5\nSouth,12\nNorth,20\n")
    assert region_totals(path) == {"North": 30.5, "South": 12.0}


def test_quoted_region_with_comma(tmp_path):
    path = write(tmp_path, 'region,amount\n"North, East",1.5\n"North, East",2\nWest,3\n')
    assert region_totals(path) == {"North, East": 3.5, "West": 3.0}


def test_header_only(tmp_path):
    assert region_totals(write(tmp_path, "region,amount\n")) == {}


def test_empty_amount_skipped_and_spaces_stripped(tmp_path):
    path = write(tmp_path, "region,amount\n  South ,4\nSouth,\nSouth,0.25\n")
    result = region_totals(path)
    assert result == {"South": pytest.approx(4.25)}
    assert all(isinstance(v, float) for v in result.values())


def test_unicode_regions(tmp_path):
    path = write(tmp_path, "region,amount\nZürich,1\nSão Paulo,2\nZürich,1\n")
    assert region_totals(path) == {"Zürich": 2.0, "São Paulo": 2.0}
