"""client/python/examples/two_runs.py against a real daemon: two runs, plotted or as CSV."""

import os
import subprocess
import sys

import pytest

from conftest import MSD, read_csv

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "two_runs.py")


def two_runs(daemon, out, env):
    r = subprocess.run([sys.executable, EXAMPLE, MSD,
                        "--endpoint", daemon.endpoint, "--out", str(out)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_two_runs_without_matplotlib_writes_both_runs_as_csv(daemon, tmp_path):
    # A matplotlib that cannot be imported, ahead of any installed one.
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "matplotlib.py").write_text("raise ImportError('hidden by the test')\n")
    env = dict(os.environ, PYTHONPATH="%s:%s" % (hide, os.environ.get("PYTHONPATH", "")))
    out = tmp_path / "out"
    out.mkdir()
    assert "matplotlib is not installed" in two_runs(daemon, out, env)
    runs = []
    for name in ("run1.csv", "run2.csv"):
        runs.append(read_csv(out / name))
    assert list(runs[0][0]) == ["time", "mass1.x1", "mass2.x2"]
    assert len(runs[0]) == len(runs[1]) == 1000          # every point of 0.01 s
    assert float(runs[0][-1]["time"]) == pytest.approx(10.0)
    # The stiffer spring moves mass 1 otherwise.
    assert runs[0][-1]["mass1.x1"] != runs[1][-1]["mass1.x1"]
    assert not (out / "two_runs.png").exists()


def test_two_runs_with_matplotlib_plots_both_runs(daemon, tmp_path):
    pytest.importorskip("matplotlib")
    out = two_runs(daemon, tmp_path, dict(os.environ, MPLBACKEND="Agg"))
    assert "wrote %s" % (tmp_path / "two_runs.png") in out
    with open(tmp_path / "two_runs.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
