"""The kinds added after the first release: the d-left counting filter and the filters that
forget (count and time windows), through the same API as the others."""

import pickle
import time

import pytest

import bloomkit
from conftest import FIXTURES


def urls(start, stop):
    return [f"https://example.com/page/{i}" for i in range(start, stop)]


def test_dleft_counting_filter_adds_counts_and_removes(tmp_path):
    f = bloomkit.DLeftCountingFilter(10_000, 0.01)
    f.add_many(urls(0, 3000))
    f.add("twice")
    f.add("twice")
    assert all(f.contains_many(urls(0, 3000))) and "twice" in f
    assert f.count("twice") == 2 and f.count("absent") == 0
    # The fingerprints held: 3001 distinct elements, a few of which may share a cell (equal
    # fingerprints in one bucket; at 1% FPR and 3000 elements, a handful at most).
    assert 2980 <= len(f) <= 3001
    f.remove("twice")
    assert "twice" in f and f.count("twice") == 1
    f.remove("twice")
    assert "twice" not in f
    with pytest.raises(KeyError):
        f.remove("never added")
    # 10,000 absent elements at a design FPR of 1% with under a third of the capacity used:
    # the expected count is under 100; 300 is far outside any plausible spread.
    assert sum(f.contains_many(urls(3000, 13_000))) < 300
    assert f.kind == "dleft" and f.capacity == 10_000 and f.fpp == 0.01
    assert 0 < f.load_factor < 1 and f.saturated == 0
    f.save(tmp_path / "d.bloom")
    for g in (bloomkit.load(tmp_path / "d.bloom"), pickle.loads(pickle.dumps(f))):
        assert type(g) is bloomkit.DLeftCountingFilter and g.to_bytes() == f.to_bytes()
    with pytest.raises(TypeError, match="union"):
        f | f


def test_the_dleft_fixture_answers_as_in_rust():
    f = bloomkit.load(FIXTURES / "dleft.bloom")
    assert type(f) is bloomkit.DLeftCountingFilter
    assert f.to_bytes() == (FIXTURES / "dleft.bloom").read_bytes()


def test_count_window_filter_forgets_old_insertions():
    f = bloomkit.CountWindowFilter(1000, 0.01)
    assert f.window == 1000 and f.guaranteed_window >= 1000
    first = urls(0, 1000)
    f.add_many(first)
    assert all(f.contains_many(first))
    later = [f"later-{i}" for i in range(f.forgotten_after)]
    f.add_many(later)
    assert f.inserted == 1000 + len(later)
    # Every one of the last `window` insertions is found; the first ones have no bit left
    # (only false positives remain, at most the FPR of 1%: 1000 tests, 100 is far outside).
    assert all(f.contains_many(later[-1000:]))
    assert sum(f.contains_many(first)) < 100
    g = pickle.loads(pickle.dumps(f))
    assert type(g) is bloomkit.CountWindowFilter and g.to_bytes() == f.to_bytes()


def test_time_window_filter_forgets_after_its_window():
    f = bloomkit.TimeWindowFilter(0.3, 1000, 0.01, generations=3)
    assert f.window == pytest.approx(0.3) and f.generations == 3
    assert f.generation_length == pytest.approx(0.1)
    f.add_many(urls(0, 500))
    assert all(f.contains_many(urls(0, 500)))
    # An element stays at most the window plus one generation: after twice the window (by
    # the clock, whatever the machine's speed) every one is gone, up to false positives
    # (FPR 1%, 500 tests: 50 is far outside the spread).
    time.sleep(0.6)
    assert sum(f.contains_many(urls(0, 500))) < 50
    f.add("fresh")
    assert "fresh" in f


@pytest.mark.parametrize("make", [
    lambda: bloomkit.CountWindowFilter(0, 0.01),
    lambda: bloomkit.CountWindowFilter(100, 1.5),
    lambda: bloomkit.TimeWindowFilter(0, 100, 0.01),
    lambda: bloomkit.TimeWindowFilter(-1, 100, 0.01),
    lambda: bloomkit.TimeWindowFilter(float("nan"), 100, 0.01),
    lambda: bloomkit.TimeWindowFilter(60, 0, 0.01),
    lambda: bloomkit.DLeftCountingFilter(-5, 0.01),
    lambda: bloomkit.DLeftCountingFilter(100, 0),
])
def test_bad_parameters_raise_value_error(make):
    with pytest.raises(ValueError):
        make()
