"""bloomkit.redis against a real redis-server on a free loopback port."""

import subprocess
import sys

import pytest

import bloomkit
import bloomkit.redis
from bloomkit.redis import (
    CountingRedisFilter,
    RedisError,
    RedisFilter,
    RedissonFilter,
    ScalableRedisFilter,
    TimeWindowRedisFilter,
)
from conftest import free_port, unique_name as name

ITEMS = [f"https://example.com/r/{i}" for i in range(3000)]
OTHERS = [f"https://example.net/x/{i}" for i in range(3000)]



@pytest.mark.parametrize("cls", [RedisFilter, ScalableRedisFilter, RedissonFilter])
def test_add_check_and_batches(redis_url, cls):
    f = cls(redis_url, name(), 10_000, 0.001)
    assert f.add("a") is True
    assert f.add("a") is False
    assert f.check_and_add("b") is False
    assert f.check_and_add("b") is True
    assert "a" in f and b"a" in f and "zzz" not in f
    # "new" is False only for a false positive among the 3000 (expected ~3, 0.1% each).
    assert sum(f.add_many(ITEMS)) > len(ITEMS) - 30
    assert f.contains_many(ITEMS[:100]) == [True] * 100
    # 3000 absent elements at 0.1%: expected 3; 30 is far outside any plausible spread.
    assert sum(f.contains_many(OTHERS)) < 30
    assert 2800 < len(f) < 3200
    with pytest.raises(TypeError, match="str, bytes or int"):
        f.add(1.5)


def test_other_processes_share_the_filter(redis_url):
    key = name()
    f = RedisFilter(redis_url, key, 100_000, 0.001)
    script = (
        "import sys, bloomkit.redis as r\n"
        "f = r.RedisFilter(sys.argv[1], sys.argv[2])\n"
        "f.add_many(f'p{sys.argv[3]}-{i}' for i in range(1000))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, redis_url, key, str(p)])
             for p in range(3)]
    for p in procs:
        assert p.wait(timeout=60) == 0
    assert all(f.contains_many([f"p{p}-{i}" for p in range(3) for i in range(1000)]))
    opened = RedisFilter(redis_url, key)  # open without sizing
    assert "p2-999" in opened


def test_create_is_idempotent_and_clear_delete(redis_url):
    key = name()
    f = RedisFilter(redis_url, key, 1000, 0.01)
    f.add("x")
    again = RedisFilter(redis_url, key, 1000, 0.01)
    assert "x" in again
    f.clear()
    assert "x" not in again
    f.delete()
    with pytest.raises(RedisError, match="no filter"):
        RedisFilter(redis_url, key)


def test_redisson_filters_use_redissons_sizing(redis_url):
    key = name()
    f = RedissonFilter(redis_url, key, 1000, 0.01)
    f.add_many(["a", "b", "c"])
    assert all(RedissonFilter(redis_url, key).contains_many(["a", "b", "c"]))
    assert len(f) == 3
    with pytest.raises(TypeError, match="RedissonFilter cannot be cleared"):
        f.clear()
    assert isinstance(f, bloomkit.redis.SharedFilter)
    assert repr(f) == f"RedissonFilter(name={key!r})"


def test_bad_input(redis_url):
    with pytest.raises(ValueError):
        RedisFilter(redis_url, name(), 0, 0.01)
    with pytest.raises(ValueError):
        RedisFilter(redis_url, name(), 100, 1.5)
    with pytest.raises(ValueError, match="both"):
        RedisFilter(redis_url, name(), 100)
    with pytest.raises(ValueError, match="name"):
        RedisFilter(redis_url, "bad{name}", 100, 0.01)
    with pytest.raises(RedisError, match="no filter"):
        ScalableRedisFilter(redis_url, name())


def test_integer_arguments_are_refused_naming_them_before_connecting():
    # Checked before any connection: nothing listens on port 1.
    url = "redis://127.0.0.1:1/"
    huge = 2**200
    too_large = [
        (lambda: RedisFilter(url, "x", huge, 0.01), f"capacity {huge} is too large"),
        (lambda: RedissonFilter(url, "x", huge, 0.01), "capacity .* too large"),
        (lambda: CountingRedisFilter(url, "x", 2**64, 0.01), "capacity 18446744073709551616"),
        (lambda: ScalableRedisFilter(url, "x", huge, 0.01), "capacity .* too large"),
        (lambda: ScalableRedisFilter(url, "x", 100, 0.01, growth=huge), "growth .* too large"),
        (lambda: ScalableRedisFilter(url, "x", 100, 0.01, growth=-1), "growth must be at least 0"),
        (lambda: TimeWindowRedisFilter(url, "x", 60, huge, 0.01), "capacity .* too large"),
        (lambda: TimeWindowRedisFilter(url, "x", 60, 100, 0.01, generations=2**32),
         "generations 4294967296 is too large: at most 4294967295"),
        (lambda: TimeWindowRedisFilter(url, "x", 60, 100, 0.01, generations=-1),
         "generations must be at least 0, got -1"),
        (lambda: RedisFilter(url, "x", -huge, 0.01), "capacity must be a positive integer, got -"),
    ]
    for make, message in too_large:
        with pytest.raises(ValueError, match=message):
            make()
    bools = [
        (lambda: RedisFilter(url, "x", True, 0.01), "capacity"),
        (lambda: RedissonFilter(url, "x", True, 0.01), "capacity"),
        (lambda: CountingRedisFilter(url, "x", False, 0.01), "capacity"),
        (lambda: ScalableRedisFilter(url, "x", True, 0.01), "capacity"),
        (lambda: ScalableRedisFilter(url, "x", 100, 0.01, growth=True), "growth"),
        (lambda: TimeWindowRedisFilter(url, "x", 60, True, 0.01), "capacity"),
        (lambda: TimeWindowRedisFilter(url, "x", 60, 100, 0.01, generations=True), "generations"),
    ]
    for make, argument in bools:
        with pytest.raises(TypeError, match=f"^{argument} must be an integer, not bool$"):
            make()


def test_bad_urls_timeouts_and_windows_are_value_errors():
    for url in ["http://x", "not a url", "redis://127.0.0.1:6379/NAME", "redis://:pw@h:port/"]:
        with pytest.raises(ValueError, match="invalid Redis URL") as e:
            RedisFilter(url, "x", 100, 0.01)
        assert "pw@" not in str(e.value)
    # Nothing listens on port 1: these are refused before connecting.
    for timeout in [2e19, 1e-12, 0.0, -1.0, float("nan"), float("inf")]:
        with pytest.raises(ValueError, match="timeout must be a number of seconds"):
            RedisFilter("redis://127.0.0.1:1/", "x", 100, 0.01, timeout=timeout)
    with pytest.raises(ValueError, match="at most 100 years"):
        bloomkit.TimeWindowFilter(1e18, 100, 0.01)


def test_a_window_longer_than_a_century_is_refused(redis_url):
    with pytest.raises(ValueError, match="at most 100 years"):
        TimeWindowRedisFilter(redis_url, name(), 1.8e16, 100, 0.01)


def test_saturated_filters_have_a_length(redis_url):
    # Every bit set: the estimate is infinite, the length the largest a `len` can be.
    f = RedisFilter(redis_url, name(), 1, 0.5)
    f.add_many(range(20_000))
    assert f.estimated_len() == float("inf")
    assert len(f) == sys.maxsize
    w = TimeWindowRedisFilter(redis_url, name(), 60, 1, 0.5)
    w.add_many(range(1000))
    assert w.estimated_len() == float("inf")
    assert len(w) == sys.maxsize


def test_another_kind_under_the_name_is_refused(redis_url):
    key = name()
    RedisFilter(redis_url, key, 1000, 0.01).add("x")
    with pytest.raises((RedisError, ValueError)):
        ScalableRedisFilter(redis_url, key)
    with pytest.raises((RedisError, ValueError)):
        RedisFilter(redis_url, key, 5000, 0.01)  # same name, other sizing


def test_unreachable_server_raises_redis_error():
    with pytest.raises(RedisError):
        RedisFilter(f"redis://127.0.0.1:{free_port()}/", "x", 100, 0.01, timeout=2)
    with pytest.raises(ValueError):
        RedisFilter("redis://127.0.0.1:1/", "x", 100, 0.01, timeout=0)
    assert issubclass(bloomkit.RedisError, Exception)


def test_passwords_never_show_in_exceptions_or_reprs(redis_url):
    """An ACL user with a password on the session's server: every failure's message and repr,
    and the repr of a working filter, leave the password out."""
    secret = "pw-Py77-never-shown"
    user = "bk-" + name()
    port = redis_url.rstrip("/").rsplit(":", 1)[1]
    subprocess.run(["redis-cli", "-p", port, "ACL", "SETUSER", user, "on", ">" + secret,
                    "~*", "+@all"], check=True, capture_output=True)
    good = f"redis://{user}:{secret}@127.0.0.1:{port}/"
    shown = []
    for cls in (RedisFilter, CountingRedisFilter):
        f = cls(good, name(), 100, 0.01)
        f.add("x")
        shown.append(repr(f))
    for url in [
        f"redis://{user}:{secret}x@127.0.0.1:{port}/",  # WRONGPASS
        f"redis://{user}:{secret}@127.0.0.1:{free_port()}/",  # nobody listening
        f"redis://{user}:{secret}@[::1:{port}/",  # bad syntax
        f"redis://{user}:{secret}@127.0.0.1:{port}x/",
        f"rediss://{user}:{secret}@127.0.0.1:{port}/",
    ]:
        with pytest.raises((RedisError, ValueError)) as e:
            RedisFilter(url, "x", 100, 0.01, timeout=2)
        shown += [str(e.value), repr(e.value)]
    for s in shown:
        assert secret not in s, s


def sized(cls):
    """(create, open) of a kind sized by capacity and fpp."""
    return (lambda url, key: cls(url, key, 10_000, 0.001)), (lambda url, key: cls(url, key))


@pytest.mark.parametrize("makers,cli_kind", [
    (sized(RedisFilter), []),
    (sized(ScalableRedisFilter), ["--kind", "scalable"]),
    (sized(RedissonFilter), ["--kind", "classic", "--scheme", "redisson"]),
    (sized(CountingRedisFilter), ["--kind", "counting"]),
    ((lambda url, key: TimeWindowRedisFilter(url, key, 3600, 10_000, 0.001),
      TimeWindowRedisFilter), ["--window", "1h"]),
], ids=["blocked", "scalable", "redisson", "counting", "time-window"])
def test_the_cli_shares_redis_filters_with_python(redis_url, cli, makers, cli_kind):
    from conftest import run_cli

    # Python creates and fills; the CLI answers the same.
    create, open_ = makers
    key = name()
    f = create(redis_url, key)
    f.add_many(ITEMS[:500])
    target = redis_url + key
    probe = ITEMS[:500] + OTHERS[:500]
    expected = {x for x, yes in zip(probe, f.contains_many(probe)) if yes}
    proc = run_cli(cli, "check", target, input="\n".join(probe).encode() + b"\n")
    assert set(proc.stdout.decode().splitlines()) == expected

    # The CLI creates and fills; Python opens it by name and answers the same.
    key = name()
    target = redis_url + key
    run_cli(cli, "-q", "create", target, "-n", "10000", "-p", "0.001", *cli_kind)
    run_cli(cli, "-q", "add", target, input="\n".join(ITEMS[:500]).encode() + b"\n")
    g = open_(redis_url, key)
    assert g.contains_many(ITEMS[:500]) == [True] * 500
    proc = run_cli(cli, "check", target, input="\n".join(probe).encode() + b"\n")
    assert {x for x, yes in zip(probe, g.contains_many(probe)) if yes} == set(
        proc.stdout.decode().splitlines())
