"""bloomkit.redis's counting and time-window filters against a real redis-server, and shared
with the real CLI both ways."""


import pytest

from bloomkit.redis import (
    CountingRedisFilter,
    RedisError,
    RedisFilter,
    SharedFilter,
    TimeWindowRedisFilter,
)
from conftest import run_cli, unique_name as name

ITEMS = [f"https://example.com/k/{i}" for i in range(2000)]
OTHERS = [f"https://example.net/k/{i}" for i in range(2000)]



MAKERS = {
    "counting": (lambda url, key: CountingRedisFilter(url, key, 10_000, 0.001),
                 lambda url, key: CountingRedisFilter(url, key)),
    "time-window": (lambda url, key: TimeWindowRedisFilter(url, key, 3600, 10_000, 0.001),
                    lambda url, key: TimeWindowRedisFilter(url, key)),
}


@pytest.mark.parametrize("kind", MAKERS)
def test_add_check_batches_len_and_delete(redis_url, kind):
    create, open_ = MAKERS[kind]
    key = name()
    f = create(redis_url, key)
    assert isinstance(f, SharedFilter)
    assert f.add("a") is True and f.add("a") is False
    assert f.check_and_add("b") is False and f.check_and_add("b") is True
    assert "a" in f and b"a" in f and "zzz" not in f
    # 2000 new elements at 0.1 %: about 2 false "already there"; 20 is far outside.
    assert sum(f.add_many(ITEMS)) > len(ITEMS) - 20
    assert open_(redis_url, key).contains_many(ITEMS) == [True] * len(ITEMS)
    assert sum(f.contains_many(OTHERS)) < 20  # expected 2 false positives
    assert 1900 < len(f) < 2100
    assert repr(f) == f"{type(f).__name__}(name={key!r})"
    f.clear()
    assert "a" not in f
    f.delete()
    with pytest.raises(RedisError, match="no filter"):
        open_(redis_url, key)


def test_counting_remove_and_count(redis_url):
    f = CountingRedisFilter(redis_url, name(), 10_000, 0.001)
    f.add("x")
    f.add("x")
    f.add("y")
    assert f.count("x") == 2 and f.count("y") == 1 and f.count("never") == 0
    f.remove("x")
    assert "x" in f and f.count("x") == 1
    f.remove("x")
    assert "x" not in f
    with pytest.raises(KeyError):
        f.remove("x")
    assert f.remove_many(["y", "y", "never"]) == [True, False, False]
    with pytest.raises(TypeError, match="str, bytes or int"):
        f.remove(1.5)


def test_only_counting_filters_remove_and_count(redis_url):
    f = RedisFilter(redis_url, name(), 1000, 0.01)
    with pytest.raises(TypeError, match="RedisFilter cannot remove"):
        f.remove("x")
    with pytest.raises(TypeError, match="RedisFilter cannot count"):
        f.count("x")
    w = TimeWindowRedisFilter(redis_url, name(), 60, 1000, 0.01)
    with pytest.raises(TypeError, match="TimeWindowRedisFilter cannot remove"):
        w.remove_many(["x"])


def test_time_window_parameters(redis_url):
    key = name()
    f = TimeWindowRedisFilter(redis_url, key, window=7200, capacity=1000, fpp=0.01,
                              generations=4)
    assert f.window == 7200 and f.generations == 4
    opened = TimeWindowRedisFilter(redis_url, key)
    assert opened.window == 7200 and opened.generations == 4
    # Re-created with another window: refused, naming it.
    with pytest.raises((RedisError, ValueError), match="window"):
        TimeWindowRedisFilter(redis_url, key, window=60, capacity=1000, fpp=0.01)


def test_bad_input(redis_url):
    with pytest.raises(ValueError, match="window, capacity and fpp"):
        TimeWindowRedisFilter(redis_url, name(), 60)
    with pytest.raises(ValueError, match="window, capacity and fpp"):
        TimeWindowRedisFilter(redis_url, name(), generations=3)
    with pytest.raises(ValueError, match="window must be a positive"):
        TimeWindowRedisFilter(redis_url, name(), -1, 100, 0.01)
    with pytest.raises(ValueError):
        CountingRedisFilter(redis_url, name(), 0, 0.01)
    with pytest.raises(ValueError):
        CountingRedisFilter(redis_url, name(), 100, 2.0)
    with pytest.raises(ValueError, match="both"):
        CountingRedisFilter(redis_url, name(), 100)
    with pytest.raises(RedisError, match="no filter"):
        CountingRedisFilter(redis_url, name())
    # Another kind under the name.
    key = name()
    RedisFilter(redis_url, key, 1000, 0.01).add("x")
    with pytest.raises((RedisError, ValueError)):
        CountingRedisFilter(redis_url, key)
    with pytest.raises((RedisError, ValueError)):
        TimeWindowRedisFilter(redis_url, key)


def test_the_cli_names_their_kinds(redis_url, cli):
    # (Answers shared both ways: test_redis.py's test_the_cli_shares_redis_filters_with_python.)
    for kind, (create, _) in MAKERS.items():
        key = name()
        create(redis_url, key).add("x")
        assert kind in run_cli(cli, "info", redis_url + key).stdout.decode()


def test_a_removal_in_python_is_seen_by_the_cli(redis_url, cli):
    key = name()
    f = CountingRedisFilter(redis_url, key, 1000, 0.001)
    f.add_many(["keep", "drop"])
    f.remove("drop")
    proc = run_cli(cli, "check", redis_url + key, "keep", "drop")
    assert proc.stdout.decode().split() == ["keep"]
    run_cli(cli, "-q", "remove", redis_url + key, "keep")
    assert "keep" not in f
