#!/usr/bin/python3
"""two_runs: the msd example through fmud twice, the second time with a
stiffer coupling spring (mass2.kc 10 -> 40 N/m), and both runs plotted.

usage: two_runs.py [SCENARIO] [--endpoint E] [--out DIR]

SCENARIO is the msd example (msd.ssp), by default the installed one. Each
run is loaded, subscribed to (every point) and started; its samples
arrive as rows while it runs, and the session is unloaded at the end. With matplotlib
the two runs are drawn into DIR/two_runs.png, without it they are written
as DIR/run1.csv and DIR/run2.csv. The daemon is the local one as fmuctl
finds it (or --endpoint, or $FMUD_ENDPOINT); it must be allowed to read
SCENARIO's folder.
"""

import argparse
import os
import sys

import fmud

HERE = os.path.dirname(os.path.realpath(__file__))
CANDIDATES = ["/usr/share/fmud/examples/msd.ssp", "/usr/local/share/fmud/examples/msd.ssp",
              os.path.join(HERE, "..", "..", "..", "build", "dev", "configs", "examples",
                           "msd.ssp")]
COLUMNS = ["mass1.x1", "mass2.x2"]


def run(client, scenario, starts):
    """Load scenario with starts, run it to its stop time; its rows."""
    session = client.load(scenario, starts=starts)["session"]
    try:
        # Every communication point, not only the recorded ones: smooth curves.
        with client.subscribe(session, COLUMNS, every_point=True) as sub:
            client.start(session)
            rows = sub.rows()
        state = client.status(session)
        if state["state"] != "finished":
            raise SystemExit("two_runs: the run ended %s: %s" % (state["state"], state["message"]))
        return rows
    finally:
        client.unload(session)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", nargs="?",
                    default=next((p for p in CANDIDATES if os.path.exists(p)), CANDIDATES[0]))
    ap.add_argument("--endpoint", help="the daemon's control endpoint")
    ap.add_argument("--out", default=".", help="where the plot or the CSVs go")
    a = ap.parse_args()

    try:
        with fmud.Client(a.endpoint) as client:
            first = run(client, a.scenario, {})
            second = run(client, a.scenario, {"mass2.kc": 40.0})
    except fmud.Error as e:
        sys.exit("two_runs: %s" % e.message)

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        for name, rows in (("run1.csv", first), ("run2.csv", second)):
            rows.to_csv(os.path.join(a.out, name))
        print("two_runs: matplotlib is not installed: wrote %s and %s instead of a plot"
              % (os.path.join(a.out, "run1.csv"), os.path.join(a.out, "run2.csv")))
        return

    fig, axes = plt.subplots(len(COLUMNS), 1, sharex=True, figsize=(8, 6))
    for ax, col in zip(axes, COLUMNS):
        ax.plot(first.time, first[col], label="kc = 10 N/m")
        ax.plot(second.time, second[col], label="kc = 40 N/m")
        ax.set_ylabel(col + " [m]")
        ax.legend(loc="upper right")
    axes[-1].set_xlabel("time [s]")
    fig.suptitle("msd: two runs through fmud")
    path = os.path.join(a.out, "two_runs.png")
    fig.savefig(path, dpi=100)
    print("two_runs: wrote %s" % path)


if __name__ == "__main__":
    main()
