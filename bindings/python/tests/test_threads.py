"""Several Python threads on one filter at once: the batch methods probe without the GIL while
other threads add, combine, clear, save and pickle it. Nothing crashes or deadlocks (every
thread must end within its timeout), and no element whose add returned is lost."""

import copy
import pickle
import threading

import pytest

import bloomkit

KINDS = [
    bloomkit.BloomFilter,
    bloomkit.BlockedBloomFilter,
    bloomkit.CountingBloomFilter,
    bloomkit.AtomicBloomFilter,
    bloomkit.AtomicBlockedBloomFilter,
    bloomkit.ScalableBloomFilter,
    bloomkit.DLeftCountingFilter,
]
TIMEOUT = 120  # seconds each thread may take on a loaded machine; a deadlock takes forever


def run_all(*targets):
    """Runs each target in its own thread; re-raises the first error of any of them."""
    errors = []

    def guard(target):
        try:
            target()
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=guard, args=(t,), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (deadlock?)"
    if errors:
        raise errors[0]


def keys(tag, n):
    return [f"{tag}-{i}" for i in range(n)]


@pytest.mark.parametrize("kind", KINDS)
def test_batches_with_adds_unions_saves_and_pickles_lose_nothing(kind, tmp_path):
    f = kind(200_000, 0.01)
    other = kind(200_000, 0.01)
    other.add_many(keys("other", 5000))
    stop = threading.Event()
    snapshots = []

    def batches(t):
        def work():
            for i in range(15):
                f.add_many(iter(keys(f"b{t}-{i}", 2000)))
                assert all(f.contains_many(keys(f"b{t}-{i}", 2000)))
        return work

    def singles():
        for i in range(3000):
            f.add(f"s-{i}")
            assert f"s-{i}" in f

    def unions():
        while not stop.is_set():
            if kind is not bloomkit.ScalableBloomFilter and kind is not bloomkit.DLeftCountingFilter:
                f.__ior__(other)
            snapshots.append(pickle.dumps(f))
            snapshots.append(copy.copy(f).to_bytes())
            f.save(tmp_path / "f.bloom")
            del snapshots[:-4]

    def workers():
        run_all(batches(0), batches(1), singles)
        stop.set()

    run_all(workers, unions)
    for t in range(2):
        for i in range(15):
            assert all(f.contains_many(keys(f"b{t}-{i}", 2000)))
    assert all(f.contains_many(keys("s", 3000)))
    for s in snapshots:  # each snapshot is a whole filter
        g = pickle.loads(s) if s[:1] == b"\x80" else kind.from_bytes(s)
        assert type(g) is kind
    assert type(kind.load(tmp_path / "f.bloom")) is kind


@pytest.mark.parametrize("kind", KINDS)
def test_batches_with_clears_and_intersections_neither_crash_nor_deadlock(kind):
    f = kind(100_000, 0.01)
    empty = kind(100_000, 0.01)
    stop = threading.Event()

    def batches():
        for i in range(20):
            f.add_many(keys(f"b{i}", 3000))
            f.contains_many(keys(f"b{i}", 3000))
        stop.set()

    def clears():
        while not stop.is_set():
            f.clear()
            if kind in (bloomkit.BloomFilter, bloomkit.BlockedBloomFilter,
                        bloomkit.AtomicBloomFilter, bloomkit.AtomicBlockedBloomFilter):
                f.__iand__(empty)
            len(f)

    run_all(batches, clears)
    # Sequential again: the answers are a sequential run's.
    f.clear()
    f.add_many(keys("after", 5000))
    assert all(f.contains_many(keys("after", 5000)))


@pytest.mark.parametrize("kind", KINDS)
def test_a_generator_that_changes_the_filter_during_its_batch(kind):
    f = kind(100_000, 0.01)

    def elements():
        for i in range(10_000):
            f.add(f"inside-{i}")  # the filter, while its own batch takes elements
            if i % 3000 == 0:
                f.contains_many([f"inside-{i}"])
                f.to_bytes()
            yield f"yielded-{i}"

    f.add_many(elements())
    assert all(f.contains_many(keys("inside", 10_000)))
    assert all(f.contains_many(keys("yielded", 10_000)))
    assert all(f.contains_many(f"yielded-{i}" for i in range(0, 10_000, 7)
                               if f.add(f"q-{i}") is None))
    assert all(f"q-{i}" in f for i in range(0, 10_000, 7))


@pytest.mark.parametrize("kind", KINDS)
def test_a_generator_that_raises_midway_leaves_the_chunks_before_it(kind):
    f = kind(100_000, 0.001)

    def elements():
        for i in range(10_000):
            if i == 9000:
                raise RuntimeError("the source failed")
            yield f"e-{i}"

    with pytest.raises(RuntimeError, match="the source failed"):
        f.add_many(elements())
    # As for a refused element: the chunks of 4096 before it are in, nothing of its chunk.
    assert all(f.contains_many(keys("e", 8192)))
    assert sum(f.contains_many(f"e-{i}" for i in range(8192, 9000))) < 10  # FPR 1e-3 of 808


@pytest.mark.parametrize("kind", [bloomkit.BloomFilter, bloomkit.BlockedBloomFilter])
def test_closing_a_mapping_while_other_threads_use_it(kind, tmp_path):
    path = tmp_path / "m.bloom"
    kind(500_000, 0.001).save(path)
    rw = kind.open_mmap(path, writable=True)
    ro = kind.open_mmap(path)
    stop = threading.Event()

    def adds():
        for i in range(20):
            rw.add_many(keys(f"a{i}", 2000))
            assert all(ro.contains_many(keys(f"a{i}", 2000)))
        stop.set()

    def closes():
        while not stop.is_set():
            rw.close()
            ro.close()
            with kind.open_mmap(path) as again:
                again.contains_many(keys("a0", 100))

    run_all(adds, closes)
    # A closed mapping stays usable (close seals; the mapping ends with the object).
    rw.close()
    rw.add("after close")
    assert "after close" in ro
    rw.close()
    g = kind.load(path)  # sealed: the checksum covers every bit
    assert all(g.contains_many(k for i in range(20) for k in keys(f"a{i}", 2000)))
    assert "after close" in g
