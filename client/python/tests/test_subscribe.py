"""Publications through fmud.Client: samples as rows, every point, events, telemetry, logs."""

import os

import pytest

import fmud
from conftest import FMUS, MSD, read_csv


def test_rows_of_a_whole_run_are_the_results_files_rows(client, daemon):
    out = daemon.path("r.csv")
    s = client.load(MSD, out=out, stop=2.0)["session"]
    sub = client.subscribe(s, ["mass1.x1", "mass2.x2"])
    assert sub.topic.startswith("s%d." % s)
    client.start(s)
    rows = sub.rows()
    assert sub.ended
    # The results file also has the start point, published before anyone subscribed.
    file_rows = read_csv(out)[1:]
    assert len(rows) == len(file_rows)
    assert rows.names == ["mass1.x1", "mass2.x2"]
    assert [float(r["time"]) for r in file_rows] == pytest.approx(list(rows.time), abs=1e-12)
    assert [float(r["mass2.x2"]) for r in file_rows] == list(rows["mass2.x2"])
    assert rows.time[-1] == pytest.approx(2.0)
    sub.close()


def test_rows_are_numpy_arrays(client):
    np = pytest.importorskip("numpy")
    s = client.load(MSD, stop=0.5)["session"]
    with client.subscribe(s, ["mass1.x1", "mass1.v1"]) as sub:
        client.start(s)
        rows = sub.rows()
    assert isinstance(rows.time, np.ndarray) and rows.time.dtype == np.float64
    assert rows.values.shape == (len(rows), 2)
    assert rows.values.dtype == np.float64
    assert list(rows.values[:, 0]) == list(rows["mass1.x1"])


def test_a_subscription_of_every_recorded_column_learns_the_names(client):
    s = client.load(MSD, stop=0.2)["session"]
    with client.subscribe(s) as sub:
        client.start(s)
        samples = list(sub)
    assert samples[0].first and samples[0].names
    assert "mass1.x1" in samples[0].names
    assert all(x.names == samples[0].names for x in samples)
    assert samples[-1]["mass1.x1"] == samples[-1].values[samples[0].names.index("mass1.x1")]


def test_every_point_samples_each_communication_point(client):
    # msd records every 10th point; everyPoint samples all of them.
    s = client.load(MSD, stop=0.5)["session"]
    every = client.subscribe(s, ["mass1.x1"], every_point=True)
    rec = client.subscribe(s, ["mass1.x1"])
    client.step(s, 20)
    got = [every.receive(30) for _ in range(20)]
    assert [x.point for x in got] == list(range(1, 21))
    assert sum(x.unrecorded for x in got) == 18
    recorded = [rec.receive(30) for _ in range(2)]
    assert [x.point for x in recorded] == [10, 20]
    assert rec.receive(0) is None                   # nothing more was published
    every.close()
    rec.close()
    assert client.status(s)["state"] == "paused"


def test_closing_a_subscription_unsubscribes_it(client):
    s = client.load(MSD, stop=0.5)["session"]
    sub = client.subscribe(s, ["mass1.x1"])
    sub.close()
    with pytest.raises(fmud.Invalid) as e:
        client.unsubscribe(s, sub.topic)
    assert sub.topic in e.value.message


def test_events_follow_a_session_to_its_end(client):
    s = client.load(MSD, stop=0.3)["session"]
    with client.events(s) as ev:
        client.step(s, 1)
        first = [ev.receive(30), ev.receive(30)]
        if first[0]["state"] == "loaded":       # the load's event may follow its reply
            first = [first[1], ev.receive(30)]
        assert [(e["session"], e["state"]) for e in first] == [(s, "running"), (s, "paused")]
        client.resume(s)
        rest = list(ev)
    assert rest[-1]["state"] == "finished"
    assert rest[-1]["time"] == pytest.approx(0.3)
    assert ev.ended


def test_a_feed_has_joined_when_it_exists(client):
    # The daemon publishes the first event within a round trip of the feed's
    # creation: only a feed whose subscriptions are in force sees it, every time.
    s = client.load(MSD, stop=1e6)["session"]
    for i in range(20):
        with client.events(s) as ev:
            client.step(s, 1)
            first = ev.receive(30)
            if i == 0 and first["state"] == "loaded":
                first = ev.receive(30)      # the load's event may follow its reply
            assert first["state"] == "running"
            # The step's reply may come before its "paused" is published: read it here, so
            # that the next feed sees only its own step's events.
            assert ev.receive(30)["state"] == "paused"


def test_a_subscription_made_while_a_session_runs_misses_no_point_after_its_reply(client):
    s = client.load(MSD, stop=1e6, warp=20.0)["session"]
    with client.subscribe(s, ["mass1.x1"], every_point=True) as first:
        client.start(s)
        first.receive(30)
        # Joined while the first's samples flow (kept, then left to the first).
        with client.subscribe(s, ["mass1.v1"], every_point=True) as sub:
            got = [sub.receive(30) for _ in range(100)]
        client.stop(s)
    assert got[0].first
    assert [g.point for g in got] == list(range(got[0].point, got[0].point + 100))


def test_telemetry_comes_while_a_session_runs_paced(client):
    s = client.load(MSD, stop=2.5, warp=1.0)["session"]
    with client.telemetry(s) as tel:
        client.start(s)
        got = list(tel)
    assert got, "no telemetry in a paced run of 2.5 s"
    assert all(t["session"] == s and t["warp"] == 1.0 for t in got)


def test_log_messages_are_followed_as_they_are_logged(client):
    s = client.load(os.path.join(FMUS, "Misbehave.fmu"),
                    starts={"fault": 18, "at": 0, "count": 0})["session"]
    with client.follow_logs(s) as logs:
        client.start(s)
        got = list(logs)
    warnings = [m for m in got if m["status"] == 1 and m["category"] != "fmud"]
    assert len(warnings) == 10
    assert [m["seq"] for m in got] == [m["seq"] for m in client.logs(s)][:len(got)]


def _forget_kept(sub):
    # A sample that came while the subscribe waited for its answer is kept already (when it
    # came first is the machine's timing): the tests below start from nothing kept.
    sub._early.clear()
    sub._early_bytes = 0
    sub._gaps.clear()


def test_a_message_dropped_while_kept_flags_the_next_sample_read(client, monkeypatch):
    # What comes before a join's or a subscribe's answer is kept up to a bound; past it a
    # message is dropped, and the next sample of its topic read after those kept says so.
    from fmud import pubsub
    from fmud.wire import pack
    s = client.load(MSD, stop=0.05)["session"]
    with client.subscribe(s, ["mass1.x1"], every_point=True) as sub:
        _forget_kept(sub)
        monkeypatch.setattr(pubsub, "KEEP_MAX", 1)
        early = {"session": s, "generation": 1, "time": -1.0, "point": 0, "flags": 0,
                 "values": [0.0]}
        sub.keep([sub.topic.encode(), pack(early)])
        sub.keep([sub.topic.encode(), pack(dict(early, time=-0.5))])    # dropped
        client.start(s)
        samples = list(sub)
    assert samples[0].time == -1.0 and not samples[0].dropped
    assert samples[1].time >= 0
    assert samples[1].dropped
    assert not any(x.dropped for x in samples[2:])
    assert len(samples) > 2


def test_kept_messages_are_bounded_in_bytes_too(client, monkeypatch):
    from fmud import pubsub
    s = client.load(MSD, stop=0.05)["session"]
    with client.subscribe(s, ["mass1.x1"]) as sub:
        _forget_kept(sub)
        monkeypatch.setattr(pubsub, "KEEP_BYTES", 1000)
        for _ in range(3):
            sub.keep([b"x", b"\0" * 400])
        assert len(sub._early) == 2 and sub._early_bytes == 802
        assert sub._gaps == {b"x"}
        # The next message of that topic kept says so; another topic's does not.
        monkeypatch.setattr(pubsub, "KEEP_BYTES", 10000)
        sub.keep([b"y", b""])
        sub.keep([b"x", b""])
        assert [g for _, g in sub._early] == [False, False, False, True]
        assert not sub._gaps
        # A dropped message whose topic is too long to be one is not remembered.
        monkeypatch.setattr(pubsub, "KEEP_BYTES", 0)
        sub.keep([b"t" * (pubsub.TOPIC_MAX + 1), b""])
        assert not sub._gaps
