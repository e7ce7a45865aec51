"""client/python/examples/two_runs.py against a real daemon: two runs, told apart."""

import csv
import os
import subprocess
import sys

from conftest import EXAMPLES

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "two_runs.py")


def test_two_runs_writes_both_runs(daemon, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, EXAMPLE, os.path.join(EXAMPLES, "msd.ssp"),
                        "--endpoint", daemon.endpoint, "--out", str(tmp_path)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    if (tmp_path / "two_runs.png").exists():
        assert "wrote %s" % (tmp_path / "two_runs.png") in r.stdout
        return
    assert "matplotlib is not installed" in r.stdout
    runs = []
    for name in ("run1.csv", "run2.csv"):
        with open(tmp_path / name) as f:
            runs.append(list(csv.DictReader(f)))
    assert list(runs[0][0]) == ["time", "mass1.x1", "mass2.x2"]
    assert len(runs[0]) == len(runs[1])
    assert float(runs[0][-1]["time"]) == 10.0
    # The stiffer spring moves mass 1 otherwise.
    assert runs[0][-1]["mass1.x1"] != runs[1][-1]["mass1.x1"]
