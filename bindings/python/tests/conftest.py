"""Shared fixtures: the real `bloomkit` CLI binary and a real redis-server.

In CI (CI=true) a missing tool fails the tests that need it instead of skipping them.
"""

import os
import pathlib
import shutil
import socket
import subprocess
import time
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "crates" / "bloomkit" / "tests" / "fixtures" / "v1"
IN_CI = os.environ.get("CI") == "true"


def require(what, available):
    """Skips (or in CI fails) a test whose tool is missing."""
    if not available:
        if IN_CI:
            pytest.fail(f"{what} is not available, and CI runs every live test")
        pytest.skip(f"{what} is not available")


@pytest.fixture(scope="session")
def cli():
    """Path of the `bloomkit` binary (BLOOMKIT_CLI, else the workspace's debug build)."""
    path = pathlib.Path(os.environ.get("BLOOMKIT_CLI", ROOT / "target" / "debug" / "bloomkit"))
    require(f"the bloomkit CLI at {path} (cargo build -p bloomkit-cli)", path.is_file())
    return str(path)


def run_cli(cli, *args, input=None, check=True):
    """Runs the CLI; returns the completed process (stdout/stderr as bytes)."""
    proc = subprocess.run(
        [cli, *map(str, args)], input=input, capture_output=True, timeout=120
    )
    if check and proc.returncode not in (0, 1):
        raise AssertionError(f"bloomkit {args} failed: {proc.stderr.decode()}")
    return proc


def unique_name():
    """A Redis filter name no other test uses."""
    return "test-" + uuid.uuid4().hex


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A redis-server on a free loopback port, stopped after the session (on another free
    port if the first is taken before the server binds it)."""
    server = shutil.which("redis-server")
    require("redis-server", server is not None)
    workdir = tmp_path_factory.mktemp("redis")
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(workdir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if _answers_ping(proc, port):
            break
        proc.kill()
        proc.wait(timeout=10)
    else:
        raise RuntimeError("redis-server did not start on any of 5 free ports")
    try:
        yield f"redis://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _answers_ping(proc, port):
    """Whether the server `proc` answers PING on `port` within 20 s (False if it exits)."""
    deadline = time.monotonic() + 20
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False
