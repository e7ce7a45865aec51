"""A real fmud for the Python client's tests, as tests/daemon_fixture.c starts one.

Each test that asks for `daemon` gets its own fmud from the build tree on
private ipc endpoints in a fresh temporary folder (its cache, scratch and
state folders inside), started with --ready-fd and waited for, stopped
with SIGTERM afterwards, and checked: exit status 0 and both socket files
gone. The environment is made private first (no other daemon's endpoint,
key or cache). The build tree is named by FMUD_BUILD_DIR (ctest sets it);
the daemon's log is printed when a test fails.
"""

import csv
import ctypes
import os
import select
import shutil
import signal
import subprocess
import tempfile

import pytest

BUILD = os.environ.get("FMUD_BUILD_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "build", "dev")
BUILD = os.path.realpath(BUILD)
FMUD = os.path.join(BUILD, "daemon", "fmud")
WORKER = os.path.join(BUILD, "worker", "fmud-worker")
FMUS = os.path.join(BUILD, "tests", "fmus")
EXAMPLES = os.path.join(BUILD, "configs", "examples")
MSD = os.path.join(EXAMPLES, "msd.ssp")
LINEAR_ODE = os.path.join(FMUS, "LinearOde.fmu")
FEEDTHROUGH = os.path.join(FMUS, "Feedthrough.fmu")

READY_TIMEOUT = 60      # liveness bounds for a loaded machine, not measures
EXIT_TIMEOUT = 60


def _die_with_parent():
    """The daemon must not outlive a test run that crashed (PR_SET_PDEATHSIG, SIGKILL)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


class Daemon:
    """A running fmud: dir, endpoint, pub_endpoint, log_path."""

    def __init__(self, conf=None, extra=()):
        self.dir = tempfile.mkdtemp(prefix="fmud-py-")
        # A root daemon's workers run as another user: they must reach the cache through here.
        os.chmod(self.dir, 0o711)
        self.endpoint = "ipc://%s/control.sock" % self.dir
        self.pub_endpoint = "ipc://%s/events.sock" % self.dir
        self.log_path = os.path.join(self.dir, "fmud.log")
        for name, mode in (("cache", 0o755), ("scratch", 0o711)):
            os.mkdir(os.path.join(self.dir, name))
            os.chmod(os.path.join(self.dir, name), mode)
        if conf is None:
            cfg = ["--no-config"]
        else:
            cfg = ["--config", os.path.join(self.dir, "fmud.conf")]
            with open(cfg[1], "w") as f:
                f.write(conf)
        rfd, wfd = os.pipe()
        argv = [FMUD] + cfg + [
            "--endpoint", self.endpoint, "--pub-endpoint", self.pub_endpoint,
            "--cache-dir", os.path.join(self.dir, "cache"),
            "--scratch-dir", os.path.join(self.dir, "scratch"),
            "--state-dir", os.path.join(self.dir, "state"),
            "--worker", WORKER, "--ready-fd", str(wfd),
            "--allow", FMUS, "--allow", EXAMPLES, "--allow", self.dir,
            "--output-dir", self.dir] + list(extra)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         pass_fds=(wfd,), preexec_fn=_die_with_parent)
        os.close(wfd)
        try:
            got = b""
            while len(got) < 6:
                r, _, _ = select.select([rfd], [], [], READY_TIMEOUT)
                chunk = os.read(rfd, 16) if r else b""
                if not chunk:
                    self.kill()
                    raise RuntimeError("fmud did not say READY:\n" + self.log())
                got += chunk
            assert got == b"READY\n", got
        finally:
            os.close(rfd)

    def path(self, name):
        return os.path.join(self.dir, name)

    def log(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        """SIGTERM; the daemon exits 0 and leaves no socket file."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.join()

    def join(self):
        try:
            rc = self.proc.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("fmud did not exit:\n" + self.log())
        log = self.log()
        left = [n for n in ("control.sock", "events.sock") if os.path.lexists(self.path(n))]
        shutil.rmtree(self.dir, ignore_errors=True)
        assert rc == 0, "fmud exited %d:\n%s" % (rc, log)
        assert left == [], "fmud left %s behind:\n%s" % (" and ".join(left), log)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def read_csv(path):
    """A CSV file's rows, as dicts by its header."""
    with open(path) as f:
        return list(csv.DictReader(f))


def run_to_end(client, s):
    """Start session s and follow its events to its end; it must have finished."""
    with client.events(s) as ev:
        client.start(s)
        list(ev)
    assert client.status(s)["state"] == "finished"


def private_env(monkeypatch, tmp_path):
    """No other daemon's endpoint, keys or cache; the runtime folders below tmp_path."""
    for var in ("FMUD_ENDPOINT", "FMUD_SERVER_KEY", "FMUD_KEY", "FMUD_DAEMON", "FMUD_WORKER",
                "CACHE_DIRECTORY"):
        monkeypatch.delenv(var, raising=False)
    for var, name in (("RUNTIME_DIRECTORY", "run"), ("XDG_RUNTIME_DIR", "xdg")):
        d = tmp_path / name
        d.mkdir(mode=0o700)
        monkeypatch.setenv(var, str(d))


@pytest.fixture
def env(monkeypatch, tmp_path):
    private_env(monkeypatch, tmp_path)
    return tmp_path


@pytest.fixture
def daemon(env, request):
    d = Daemon()
    yield d
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        print("fmud log:\n" + d.log())
    d.stop()


@pytest.fixture
def client(daemon):
    import fmud
    c = fmud.Client(daemon.endpoint)
    yield c
    c.close()


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)
