"""Readings and rows: NumPy arrays of the dtype the values fit, and lists without NumPy."""

import pytest

import fmud
from fmud import tables


class FakeSample:
    def __init__(self, time, point, values):
        self.time, self.point, self.flags, self.values = time, point, 0, values


SAMPLES = [FakeSample(0.1, 1, [1.5, 2, True, "a"]), FakeSample(0.2, 2, [2.5, 3, False, "b"])]
NAMES = ["f", "i", "b", "s"]


def test_each_column_has_the_dtype_its_values_fit(tmp_path):
    np = pytest.importorskip("numpy")
    rows = fmud.Rows(NAMES, SAMPLES)
    assert [rows[n].dtype for n in NAMES] == [np.float64, np.int64, np.bool_, object]
    assert rows.values.dtype == object and rows.values.shape == (2, 4)
    assert list(rows.time) == [0.1, 0.2]
    assert rows["s"].tolist() == ["a", "b"]
    # Integers past int64 stay exact: uint64, else object; past 2^53 never float64.
    assert tables.column([2 ** 64 - 1]).dtype == np.uint64
    assert tables.column([-1, 2 ** 64 - 1]).dtype == object
    assert tables.column([1.5, 2 ** 53 + 1]).dtype == object
    assert tables.column([1.5, 2]).dtype == np.float64
    rows.to_csv(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text() == "time,f,i,b,s\n0.1,1.5,2,1,a\n0.2,2.5,3,0,b\n"


def test_without_numpy_everything_is_lists(monkeypatch, tmp_path):
    monkeypatch.setattr(tables, "numpy", None)
    r = fmud.Reading(1.0, ["a", "b"], [1.0, "x"])
    assert r.values == [1.0, "x"] and r["b"] == "x"
    rows = fmud.Rows(NAMES, SAMPLES)
    assert rows.time == [0.1, 0.2]
    assert rows["i"] == [2, 3]
    assert rows.values == [[1.5, 2, True, "a"], [2.5, 3, False, "b"]]
    rows.to_csv(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text() == "time,f,i,b,s\n0.1,1.5,2,1,a\n0.2,2.5,3,0,b\n"
