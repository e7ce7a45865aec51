"""Uploads (put, load by content) and results (results, fetch_results) against a real daemon."""

import hashlib
import os

import pytest

import fmud
from conftest import EXAMPLES, LINEAR_ODE, MSD, run_to_end

MSD_DIR = os.path.join(EXAMPLES, "msd")
MIB = 1 << 20


def read(path):
    with open(path, "rb") as f:
        return f.read()


def recording(client):
    """client._call wrapped to keep each put's (offset, bytes of data) sent."""
    sent = []
    call = client._call

    def wrapped(op, args=None, timeout=0):
        if op == "put":
            sent.append((args["offset"], len(args.get("data", b""))))
        return call(op, args, timeout)
    client._call = wrapped
    return sent


def test_an_upload_loaded_by_content_runs_to_the_results_of_a_load_by_path(client, daemon):
    by_path = client.load(MSD, out=daemon.path("path.csv"), stop=0.5)["session"]
    run_to_end(client, by_path)
    sha = client.put(MSD)
    assert sha == hashlib.sha256(read(MSD)).hexdigest()
    by_content = client.load(content=sha, out=daemon.path("content.csv"), stop=0.5)["session"]
    run_to_end(client, by_content)
    assert read(daemon.path("content.csv")) == read(daemon.path("path.csv"))
    # every 10th of the 50 points, time 0 and the header
    assert len(read(daemon.path("path.csv")).splitlines()) == 7


def test_upload_and_load_sends_an_ssd_with_the_fmus_it_names(client, daemon):
    sent = recording(client)
    res = client.upload_and_load(MSD_DIR, out=daemon.path("ssd.csv"), stop=0.2)
    run_to_end(client, res["session"])
    assert len(sent) == 6                   # three files: a probe and one chunk each
    by_path = client.load(MSD_DIR, out=daemon.path("path.csv"), stop=0.2)["session"]
    run_to_end(client, by_path)
    assert read(daemon.path("ssd.csv")) == read(daemon.path("path.csv"))
    # Content the daemon has is not sent again: only the probes.
    del sent[:]
    s = client.upload_and_load(os.path.join(MSD_DIR, "SystemStructure.ssd"))["session"]
    assert sent == [(0, 0)] * 3
    assert client.status(s)["state"] == "loaded"


def test_upload_and_load_puts_the_input_csv(client, daemon, tmp_path):
    inp = tmp_path / "in.csv"
    inp.write_text("time,u0\n0,2.5\n1,2.5\n")
    s = client.upload_and_load(LINEAR_ODE, input=str(inp), stop=0.1)["session"]
    client.step(s, 1)
    assert client.get(s, "u0")["u0"] == 2.5             # the uploaded CSV drives the input
    with pytest.raises(TypeError):
        client.upload_and_load(LINEAR_ODE, stepsize=0.1)


def test_a_broken_off_upload_resumes_at_the_daemons_offset(client, tmp_path):
    data = os.urandom(2 * MIB + 12345)
    sha = hashlib.sha256(data).hexdigest()
    # A first client sent the probe and the first chunk, then went away.
    assert client._call("put", {"sha256": sha, "size": len(data), "offset": 0,
                                "kind": "csv"}) == {"offset": 0, "have": False}
    assert client._call("put", {"sha256": sha, "size": len(data), "offset": 0, "data": data[:MIB],
                                "kind": "csv"}) == {"offset": MIB, "have": False}
    path = tmp_path / "big.csv"
    path.write_bytes(data)
    sent = recording(client)
    assert client.put(path) == sha
    assert sent == [(0, 0), (MIB, MIB), (2 * MIB, 12345)]
    del sent[:]
    assert client.put(data, "csv") == sha              # the store has it: a probe only
    assert sent == [(0, 0)]


def test_bytes_put_in_chunks_of_at_most_a_mib(client):
    data = bytes(range(256)) * (MIB // 256) + b"tail"
    sent = recording(client)
    assert client.put(bytearray(data), "csv") == hashlib.sha256(data).hexdigest()
    assert sent == [(0, 0), (0, MIB), (MIB, 4)]


def test_a_file_that_changes_during_the_upload_is_refused_by_its_sha(client, tmp_path):
    path = tmp_path / "moving.csv"
    path.write_bytes(b"a" * 1000)
    named = hashlib.sha256(b"a" * 1000).hexdigest()
    call = client._call

    def changing(op, args=None, timeout=0):
        res = call(op, args, timeout)
        if op == "put" and "data" not in args:
            path.write_bytes(b"b" * 1000)       # after the hash, before the data
        return res
    client._call = changing
    with pytest.raises(fmud.Invalid) as e:
        client.put(path)
    assert e.value.message == ("put: the content's SHA-256 is %s, not %s as named: upload "
                               "discarded" % (hashlib.sha256(b"b" * 1000).hexdigest(), named))
    client._call = call
    # The upload was discarded: the same content starts again from 0, and nothing else is harmed.
    assert client._call("put", {"sha256": named, "size": 1000, "offset": 0}) == \
        {"offset": 0, "have": False}
    assert client.put(b"a" * 1000, "csv") == named
    with pytest.raises(fmud.Invalid) as e:
        client.load(content=hashlib.sha256(b"nothing").hexdigest())
    assert client.list() == []


def test_a_chunk_at_another_offset_is_refused_naming_the_offset(client):
    data = b"x" * 2048
    sha = hashlib.sha256(data).hexdigest()
    client._call("put", {"sha256": sha, "size": 2048, "offset": 0, "data": data[:1024]})
    with pytest.raises(fmud.Invalid) as e:
        client._call("put", {"sha256": sha, "size": 2048, "offset": 0, "data": data[:1024]})
    assert e.value.message == ("put: a chunk at offset 0, but the upload of %s has 1024 bytes: "
                               "send from 1024" % sha)
    assert client.put(data) == sha                      # resumes from 1024


def test_results_fetched_equal_the_daemons_results_file(client, daemon, tmp_path):
    out = daemon.path("msd.csv")
    s = client.load(MSD, out=out, stop=1.0)["session"]
    run_to_end(client, s)
    whole = read(out)
    assert whole.count(b"\n") == 12               # the header, t = 0, 0.1, ..., 1
    assert client.fetch_results(s) == whole
    assert client.fetch_results(s, follow=False) == whole
    assert client.fetch_results(s, tmp_path / "got.csv") == len(whole)
    assert (tmp_path / "got.csv").read_bytes() == whole
    p = client.results(s, offset=100, max=50)
    assert (p["data"], p["offset"], p["size"], p["done"], p["format"]) == \
        (whole[100:150], 100, len(whole), False, "csv")
    p = client.results(s, offset=len(whole))
    assert (p["data"], p["done"]) == (b"", True)


def test_results_fetched_while_the_session_runs_are_the_whole_file(client, daemon):
    out = daemon.path("msd.csv")
    s = client.load(MSD, out=out, stop=1.0, warp=2.0)["session"]      # paced: it runs a while
    client.step(s, 10)
    first = client.results(s)
    assert first["done"] is False                       # paused: recording goes on
    so_far = client.fetch_results(s, follow=False)
    client.resume(s)
    got = client.fetch_results(s)                       # follows until recording ends
    assert client.status(s)["state"] == "finished"
    assert got == read(out)
    assert got.startswith(first["data"]) and got.startswith(so_far)


def test_results_errors_name_the_session_and_harm_nothing(client):
    s = client.load(MSD, stop=1.0)["session"]
    with pytest.raises(fmud.Invalid) as e:
        client.results(s, offset=70000)
    assert e.value.message.startswith("offset 70000 is past the end of the results of session %d"
                                      % s)
    with pytest.raises(fmud.BadRequest):
        client.results(s, max=0)
    with pytest.raises(fmud.NoSession):
        client.fetch_results(999)
    with pytest.raises(TypeError):
        client.results(s, offset="0")
    assert client.status(s)["state"] == "loaded"
