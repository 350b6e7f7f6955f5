"""The set-like API of every in-memory kind, element encoding and bad input."""

import collections
import copy
import inspect
import pickle
import sys
import threading

import pytest

import bloomkit

PLAIN_KINDS = [
    bloomkit.BloomFilter,
    bloomkit.BlockedBloomFilter,
    bloomkit.CountingBloomFilter,
    bloomkit.AtomicBloomFilter,
    bloomkit.AtomicBlockedBloomFilter,
]
ALL_KINDS = PLAIN_KINDS + [bloomkit.ScalableBloomFilter]


def urls(start, stop):
    return [f"https://example.com/page/{i}" for i in range(start, stop)]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_added_elements_are_present_and_few_others_are(kind):
    f = kind(10_000, 0.01)
    for u in urls(0, 5000):
        f.add(u)
    assert all(u in f for u in urls(0, 5000))
    # 10,000 absent elements at a 1% design FPR with half the capacity used: the expected
    # count is under 100 (the filter is half full); 300 is far outside any plausible spread.
    false_positives = sum(u in f for u in urls(5000, 15000))
    assert false_positives < 300
    assert isinstance(f, bloomkit.Filter)
    assert f.kind in ("classic", "blocked", "counting", "scalable")


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_batches_answer_like_single_calls(kind):
    f = kind(10_000, 0.01)
    f.add_many(u for u in urls(0, 3000))  # a generator
    g = kind(10_000, 0.01)
    for u in urls(0, 3000):
        g.add(u)
    probe = urls(0, 6000)
    assert f.contains_many(probe) == [u in g for u in probe]
    assert f.contains_many(tuple(probe[:10])) == [True] * 10
    assert f.contains_many([]) == []


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_len_is_the_estimate(kind):
    f = kind(100_000, 0.01)
    f.update(urls(0, 20_000), urls(20_000, 30_000))
    assert len(f) == round(f.estimated_len())
    # The estimate of a classic-style filter is within a few percent at this fill.
    assert 28_500 < len(f) < 31_500


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_check_and_add_reports_the_first_sighting(kind):
    f = kind(1000, 0.001)
    assert f.check_and_add("x") is False
    assert f.check_and_add("x") is True
    assert "x" in f


def test_single_element_methods_take_one_positional_argument():
    # `add` and `check_and_add` are METH_O method descriptors made by hand (meth_o.rs).
    for cls in (bloomkit.Filter, bloomkit.BloomFilter, bloomkit.BlockedBloomFilter,
                bloomkit.MappedFilter):
        for name in ("add", "check_and_add"):
            method = vars(cls)[name]
            assert str(inspect.signature(method)) == "(self, element, /)"
            assert method.__doc__.startswith("Adds an element")
    f = bloomkit.BloomFilter(100, 0.01)
    for call in (lambda: f.add(), lambda: f.add("a", "b"), lambda: f.add(element="a")):
        with pytest.raises(TypeError):
            call()
    assert "a" not in f
    assert f.add("a") is None and f.check_and_add("a") is True
    # Called on an object of another class, a method is refused by CPython's check before
    # the Rust code reads the object as a filter of its class.
    blocked = bloomkit.BlockedBloomFilter(100, 0.01)
    with pytest.raises(TypeError, match="'bloomkit.BloomFilter' objects doesn't apply to a "
                                        "'bloomkit.BlockedBloomFilter'"):
        bloomkit.BloomFilter.add(blocked, "a")
    for method in (bloomkit.Filter.add, bloomkit.MappedFilter.check_and_add):
        with pytest.raises(TypeError, match="doesn't apply"):
            method("not a filter", "a")
    with pytest.raises(TypeError, match="doesn't apply"):
        bloomkit.MappedFilter.add(f, "a")
    # The base class's methods serve every kind.
    counting = bloomkit.CountingBloomFilter(100, 0.01)
    assert bloomkit.Filter.check_and_add(counting, "a") is False
    assert bloomkit.Filter.check_and_add(counting, "a") is True
    assert bloomkit.Filter.add(blocked, "z") is None and "z" in blocked


def test_element_types_are_encoded_as_rust_keys():
    f = bloomkit.BloomFilter(1000, 0.001)
    f.add("héllo")
    assert "héllo".encode() in f  # str = its UTF-8 bytes
    assert bytearray("héllo".encode()) in f
    f.add(-5)
    assert (-5).to_bytes(8, "little", signed=True) in f  # int = i64 little-endian
    assert True not in f
    f.add(True)
    assert 1 in f  # bool is an int, as in Python sets
    assert (2**63 - 1) not in f
    with pytest.raises(OverflowError, match="64-bit"):
        f.add(2**64)
    # A str that has no UTF-8 encoding (a lone surrogate) is refused, not mangled.
    with pytest.raises(UnicodeEncodeError):
        f.add("\ud800")
    with pytest.raises(UnicodeEncodeError):
        f.add_many(["ok", "\udfff"])
    assert "ok" not in f  # a chunk is checked completely before any of it is added
    # Non-ASCII strings take the same path as ASCII ones.
    f.add_many(["日本語", "emoji 😀"])
    assert "日本語".encode() in f and "emoji 😀".encode("utf-8") in f


@pytest.mark.parametrize("bad", [1.5, None, object(), ["a"], ("a",)])
def test_unsupported_elements_raise_type_error_naming_the_types(bad):
    f = bloomkit.BlockedBloomFilter(100, 0.01)
    for call in (f.add, f.__contains__, f.check_and_add, lambda x: f.add_many([x])):
        with pytest.raises(TypeError, match="str, bytes or int"):
            call(bad)
    with pytest.raises(TypeError):
        f.add_many(5)  # not iterable


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("capacity,fpp", [(0, 0.01), (-10, 0.01), (100, 0.0), (100, 1.0),
                                          (100, -0.5), (100, float("nan")), (100, 2)])
def test_bad_parameters_raise_value_error(kind, capacity, fpp):
    with pytest.raises(ValueError):
        kind(capacity, fpp)


def test_bad_parameter_types_raise_type_error():
    with pytest.raises(TypeError):
        bloomkit.BloomFilter("many", 0.01)
    with pytest.raises(TypeError):
        bloomkit.BloomFilter(1.5, 0.01)
    with pytest.raises(TypeError):
        bloomkit.BloomFilter(100, None)
    with pytest.raises(ValueError, match="preset"):
        bloomkit.BloomFilter(100, 0.01, preset="nope")


def test_counting_filters_remove():
    f = bloomkit.CountingBloomFilter(1000, 0.001)
    f.add("a")
    f.add("a")
    assert f.count("a") == 2
    f.remove("a")
    assert "a" in f
    f.remove("a")
    assert "a" not in f
    with pytest.raises(KeyError):
        f.remove("a")


@pytest.mark.parametrize("kind", [k for k in ALL_KINDS if k is not bloomkit.CountingBloomFilter])
def test_other_kinds_cannot_remove(kind):
    f = kind(100, 0.01)
    f.add("a")
    with pytest.raises(TypeError, match="cannot remove"):
        f.remove("a")
    assert "a" in f


@pytest.mark.parametrize("kind", [bloomkit.BloomFilter, bloomkit.BlockedBloomFilter,
                                  bloomkit.AtomicBloomFilter, bloomkit.AtomicBlockedBloomFilter])
def test_union_and_intersection(kind):
    a, b = kind(1000, 0.001), kind(1000, 0.001)
    a.update(["x", "both"])
    b.update(["y", "both"])
    u = a | b
    assert type(u) is kind
    assert all(e in u for e in ("x", "y", "both"))
    i = a & b
    assert "both" in i and "x" not in i and "y" not in i
    assert "y" not in a  # the operands are unchanged
    a |= b
    assert "y" in a
    a &= i
    assert "both" in a and "x" not in a
    a |= a  # combining a filter with itself is harmless
    assert "both" in a


def test_combining_different_filters_is_refused():
    with pytest.raises(ValueError, match="incompatible"):
        bloomkit.BloomFilter(1000, 0.01) | bloomkit.BloomFilter(10, 0.01)
    with pytest.raises(ValueError, match="combine"):
        bloomkit.BloomFilter(1000, 0.01) | bloomkit.BlockedBloomFilter(1000, 0.01)
    with pytest.raises(TypeError):
        bloomkit.BloomFilter(1000, 0.01) | {"a"}
    c = bloomkit.CountingBloomFilter(100, 0.01)
    c |= bloomkit.CountingBloomFilter(100, 0.01)
    with pytest.raises(TypeError, match="intersection"):
        c & c


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_pickle_and_copy_keep_kind_and_contents(kind):
    f = kind(1000, 0.01)
    f.update(urls(0, 500))
    for g in (pickle.loads(pickle.dumps(f)), copy.copy(f), copy.deepcopy(f)):
        assert type(g) is kind
        assert g.contains_many(urls(0, 1000)) == f.contains_many(urls(0, 1000))
        assert (g.capacity, g.fpp, g.bits, g.hashes) == (f.capacity, f.fpp, f.bits, f.hashes)
    g = copy.copy(f)
    g.add("only in the copy")
    assert "only in the copy" not in f


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_equality_is_same_class_parameters_and_bits(kind):
    f = kind(1000, 0.01)
    f.update(urls(0, 500))
    assert f == f and not (f != f)
    for g in (pickle.loads(pickle.dumps(f)), copy.copy(f), kind.from_bytes(f.to_bytes())):
        assert g == f and f == g and not (g != f)
    g = copy.copy(f)
    g.add("one more")
    assert g != f and not (g == f)
    assert kind(1000, 0.01) != kind(2000, 0.01)  # other parameters, both empty
    other = bloomkit.BlockedBloomFilter if kind is bloomkit.BloomFilter else bloomkit.BloomFilter
    assert f != other(1000, 0.01)
    assert f != "not a filter" and f != {"a"}
    # Mutable, like `set`: not hashable.
    with pytest.raises(TypeError, match="unhashable"):
        hash(f)


@pytest.mark.parametrize("kind", PLAIN_KINDS)
def test_equality_and_union_while_a_batch_adds_to_either_filter(kind):
    # Filters are compared and combined in place. While a batch adds to one of them without
    # the GIL, a comparison or union in another thread sees it between two chunks, never half
    # written, and never crashes. Each batch adds elements the other filter lacks, so once one
    # has run the two differ; adding the same elements to the other makes them equal again.
    # Within a step the answer can only switch once, from the state before to the state
    # after (a 4096-element chunk sets new bits, so a partly added batch never makes them
    # equal, nor leaves them equal).
    f, g = kind(200_000, 0.01), kind(200_000, 0.01)
    first, second = urls(0, 60_000), urls(60_000, 120_000)

    def compare():
        answers = []
        while batch.is_alive():
            answers.append(f == g)
            answers.append(g == f)
            f | g  # reads both as `==` does
        return answers

    steps = ((g, first, False), (f, first, True), (f, second, False), (g, second, True))
    for target, elements, equal_after in steps:
        batch = threading.Thread(target=target.add_many, args=(elements,))
        batch.start()
        answers = compare()
        batch.join()
        switch = answers.index(equal_after) if equal_after in answers else len(answers)
        assert answers == [not equal_after] * switch + [equal_after] * (len(answers) - switch)
        assert (f == g) is equal_after and (g == f) is equal_after
        if kind is not bloomkit.CountingBloomFilter:  # (a union of counters adds them up)
            # A union equals the side that holds every element of the other.
            assert (f | g == f) is (target is f or equal_after)
            assert (f | g == g) is (target is g or equal_after)
    assert f.contains_many(first + second) == [True] * 120_000


def test_properties_and_repr():
    f = bloomkit.BloomFilter(1000, 0.01)
    assert (f.capacity, f.fpp) == (1000, 0.01)
    assert f.bits >= 9585 and f.hashes == 7
    assert f.memory_bytes == (f.bits + 63) // 64 * 8
    assert 0 == f.estimated_fpp()
    f.add("a")
    assert repr(f).startswith("BloomFilter(capacity=1000, fpp=0.01, bits=")
    assert "len≈1" in repr(f)
    s = bloomkit.ScalableBloomFilter(10, 0.01)
    s.add_many(range(100))
    assert s.layers >= 3 and s.capacity >= 100 and s.fpp == 0.01
    f.clear()
    assert "a" not in f and len(f) == 0


def test_scalable_limits_raise_value_error():
    s = bloomkit.ScalableBloomFilter(10, 0.01, max_layers=1)
    with pytest.raises(ValueError, match="full"):
        s.add_many(range(100))
    with pytest.raises(ValueError):
        bloomkit.ScalableBloomFilter(10, 0.01, tightening=1.5)


@pytest.mark.parametrize("kind", PLAIN_KINDS + [bloomkit.ScalableBloomFilter])
def test_threads_adding_at_once_lose_nothing(kind):
    # Batches probe without the GIL while single calls of other threads hold it: every
    # element added by any of them is there afterwards.
    f = kind(200_000, 0.01)
    chunks = [urls(t * 20_000, (t + 1) * 20_000) for t in range(4)]

    def work(chunk):
        for i in range(0, len(chunk), 1000):
            f.add_many(chunk[i:i + 1000])
            f.add(chunk[i] + "#single")
            assert chunk[i] in f and f.contains_many([chunk[i]]) == [True]
            assert f.check_and_add(chunk[i] + "#single")

    threads = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(f.contains_many(urls(0, 80_000)))
    assert all(f.contains_many(u + "#single" for u in urls(0, 80_000)[::1000]))


def test_batches_of_any_sequence_and_element_type_answer_like_single_calls():
    class Text(str):
        pass

    elements = ["a", Text("b"), b"c", bytearray(b"d"), 5, True, -(2**63), "é" * 50]
    for kind in (bloomkit.BloomFilter, bloomkit.BlockedBloomFilter):
        single = kind(1000, 0.001)
        for e in elements:
            single.add(e)
        for sequence in (list, tuple, iter, lambda xs: collections.deque(xs)):
            batch = kind(1000, 0.001)
            batch.add_many(sequence(elements))
            assert batch.to_bytes() == single.to_bytes()
            assert batch.contains_many(sequence(elements)) == [True] * len(elements)


def test_a_list_changed_by_another_thread_during_a_batch_is_read_safely():
    # A batch reads a list in place and lets other threads run between its chunks: one that
    # shortens the list and replaces its items (freeing the old strings) must not make it read
    # freed or missing items. The first chunk is never touched, so it is always added.
    f = bloomkit.BlockedBloomFilter(400_000, 0.001)
    items = urls(0, 200_000)
    stop = threading.Event()

    def churn():
        n = 0
        while not stop.is_set():
            n += 1
            for j in range(8192, len(items), 997):
                items[j] = f"replaced-{n}-{j}"
            if len(items) > 20_000:
                del items[-5000:]

    other = threading.Thread(target=churn)
    other.start()
    try:
        for _ in range(20):
            f.add_many(items)
            assert f.contains_many(items[:4096]) == [True] * 4096
    finally:
        stop.set()
        other.join()
    assert all(f.contains_many(urls(0, 4096)))


def test_the_base_class_cannot_be_created():
    with pytest.raises(TypeError):
        bloomkit.Filter()


def test_batches_are_taken_4096_at_a_time():
    f = bloomkit.BlockedBloomFilter(100_000, 0.0001)
    items = [f"e{i}" for i in range(10_000)]
    with pytest.raises(TypeError, match="not float"):
        f.add_many(items[:5000] + [0.5] + items[5000:])
    # The first chunk (4096 elements) went in; the one holding the float and all after it not.
    assert f.contains_many(items[:4096]) == [True] * 4096
    assert sum(f.contains_many(items[4096:])) < 10  # FPR 1e-4 on 5904 absent: expected < 1
    # Generators of any length, and lengths that are multiples of the chunk.
    g = bloomkit.BloomFilter(100_000, 0.001)
    g.add_many(str(i) for i in range(8192))
    assert g.contains_many(str(i) for i in range(8192)) == [True] * 8192
    assert len(g.contains_many(iter(range(12_345)))) == 12_345


def test_integer_arguments_out_of_range_raise_value_error_naming_them():
    # Any Python int is taken, however large, and refused by name (not by an OverflowError
    # in C's words, "Python int too large to convert to C long").
    cases = [
        (lambda: bloomkit.BloomFilter(2**200, 0.01), "capacity .* too large"),
        (lambda: bloomkit.BlockedBloomFilter(-(2**200), 0.01), "capacity must be a positive"),
        (lambda: bloomkit.CountingBloomFilter(2**64, 0.01), "capacity 18446744073709551616"),
        (lambda: bloomkit.DLeftCountingFilter(2**70, 0.01), "capacity"),
        (lambda: bloomkit.CountWindowFilter(2**100, 0.01), "window"),
        (lambda: bloomkit.TimeWindowFilter(1, 2**100, 0.01), "capacity"),
        (lambda: bloomkit.TimeWindowFilter(1, 100, 0.01, generations=-1), "generations"),
        (lambda: bloomkit.TimeWindowFilter(1, 100, 0.01, generations=2**40), "generations"),
        (lambda: bloomkit.BloomFilter.with_params(2**64, 3), "bits"),
        (lambda: bloomkit.BloomFilter.with_params(64, 2**32), "hashes"),
        (lambda: bloomkit.BloomFilter.with_params(64, 0), "hashes"),
        (lambda: bloomkit.ScalableBloomFilter(2**100, 0.01), "initial_capacity"),
        (lambda: bloomkit.ScalableBloomFilter(10, 0.01, growth=-1), "growth"),
        (lambda: bloomkit.ScalableBloomFilter(10, 0.01, growth=2**40), "growth"),
        (lambda: bloomkit.ScalableBloomFilter(10, 0.01, max_layers=-1), "max_layers"),
        (lambda: bloomkit.ScalableBloomFilter(10, 0.01, max_capacity=-5), "max_capacity"),
        (lambda: bloomkit.ScalableBloomFilter(10, 0.01, max_capacity=2**64), "max_capacity"),
    ]
    for make, message in cases:
        with pytest.raises(ValueError, match=message):
            make()
    with pytest.raises(TypeError, match="^growth must be an integer, not float$"):
        bloomkit.ScalableBloomFilter(10, 0.01, growth=2.5)
    s = bloomkit.ScalableBloomFilter(10, 0.01, growth=4, max_layers=3, max_capacity=10**6)
    s.add_many(range(100))
    assert s.layers == 3


def test_bools_are_refused_as_integer_arguments_naming_them():
    # bool is an int subclass: True would otherwise be a capacity of 1 (and False of 0).
    cases = [
        (lambda: bloomkit.BloomFilter(True, 0.01), "capacity"),
        (lambda: bloomkit.BlockedBloomFilter(False, 0.01), "capacity"),
        (lambda: bloomkit.CountingBloomFilter(True, 0.01), "capacity"),
        (lambda: bloomkit.AtomicBloomFilter(True, 0.01), "capacity"),
        (lambda: bloomkit.AtomicBlockedBloomFilter(True, 0.01), "capacity"),
        (lambda: bloomkit.DLeftCountingFilter(True, 0.01), "capacity"),
        (lambda: bloomkit.CountWindowFilter(True, 0.01), "window"),
        (lambda: bloomkit.TimeWindowFilter(60, True, 0.01), "capacity"),
        (lambda: bloomkit.TimeWindowFilter(60, 100, 0.01, generations=True), "generations"),
        (lambda: bloomkit.BloomFilter.with_params(True, 3), "bits"),
        (lambda: bloomkit.BloomFilter.with_params(64, True), "hashes"),
        (lambda: bloomkit.ScalableBloomFilter(True, 0.01), "initial_capacity"),
        (lambda: bloomkit.ScalableBloomFilter(10, 0.01, growth=True), "growth"),
        (lambda: bloomkit.ScalableBloomFilter(10, 0.01, max_layers=True), "max_layers"),
        (lambda: bloomkit.ScalableBloomFilter(10, 0.01, max_capacity=False), "max_capacity"),
    ]
    for make, name in cases:
        with pytest.raises(TypeError, match=f"^{name} must be an integer, not bool$"):
            make()
    # Other ints and objects with __index__ are still integers.
    class Index:
        def __init__(self, value):
            self.value = value

        def __index__(self):
            return self.value

    assert bloomkit.BloomFilter(Index(1000), 0.01).capacity == 1000
    with pytest.raises(ValueError, match=f"^capacity {2**200} is too large"):
        bloomkit.BloomFilter(Index(2**200), 0.01)
    with pytest.raises(TypeError, match="^capacity must be an integer, not str$"):
        bloomkit.BloomFilter("1000", 0.01)


def test_a_filter_larger_than_the_available_memory_is_refused_before_allocating(monkeypatch):
    # Linux lets an allocation beyond the free memory succeed and kills the process as the
    # pages are touched: the size is checked against MemAvailable first (BLOOMKIT_MEM_AVAILABLE
    # stands for it here, as for the CLI).
    monkeypatch.setenv("BLOOMKIT_MEM_AVAILABLE", str(100 << 20))
    too_large = [
        lambda: bloomkit.BloomFilter.with_params(8 * (200 << 20), 3),
        lambda: bloomkit.BloomFilter(10**9, 0.01),
        lambda: bloomkit.BloomFilter(10**9, 0.01, preset="guava"),
        lambda: bloomkit.BlockedBloomFilter(10**9, 0.01),
        lambda: bloomkit.AtomicBloomFilter(10**9, 0.01),
        lambda: bloomkit.CountingBloomFilter(2 * 10**8, 0.01),  # 240 MB of 4-bit counters
        lambda: bloomkit.DLeftCountingFilter(10**9, 0.01),
        lambda: bloomkit.CountWindowFilter(10**9, 0.01),
        lambda: bloomkit.ScalableBloomFilter(10**9, 0.01),
        lambda: bloomkit.TimeWindowFilter(60, 10**9, 0.01),
    ]
    for make in too_large:
        with pytest.raises(MemoryError, match="more than this machine has available"):
            make()
    # Kinds that need about twice a classic filter's bits are counted by their own sizing:
    # each of these would hold 150-180 MB, though a classic filter of the design takes 84 MB.
    for make in [
        lambda: bloomkit.TimeWindowFilter(60, 70_000_000, 0.01),
        lambda: bloomkit.CountWindowFilter(70_000_000, 0.01),
        lambda: bloomkit.DLeftCountingFilter(70_000_000, 0.01),
    ]:
        with pytest.raises(MemoryError, match="more than this machine has available"):
            make()
    assert bloomkit.BloomFilter(10**6, 0.01).bits < 8 * (100 << 20)  # what fits is made
    assert bloomkit.BloomFilter.with_params(8 * (90 << 20), 3).bits == 8 * (90 << 20)
    monkeypatch.setenv("BLOOMKIT_MEM_AVAILABLE", "lots")
    with pytest.raises(ValueError, match="BLOOMKIT_MEM_AVAILABLE"):
        bloomkit.BloomFilter(10**9, 0.01)


@pytest.mark.parametrize("kind", PLAIN_KINDS)
def test_a_saturated_filter_has_a_length_and_a_repr(kind):
    # Every bit set: the estimate is infinite, and len() answers the most it may.
    f = kind(1, 0.5)
    f.add_many(range(100_000))
    assert f.estimated_len() == float("inf")
    assert len(f) == sys.maxsize
    assert repr(f).endswith("saturated)")
    g = bloomkit.BloomFilter.with_params(64, 1)
    g.add_many(range(10_000))
    assert len(g) == sys.maxsize and len(copy.copy(g)) == sys.maxsize


class LyingLength:
    """An iterable whose `__len__` claims far more elements than it yields."""

    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return 10**12


def test_batches_trust_the_elements_not_a_claimed_length(tmp_path):
    # A `__len__` is only a hint: room for a terabyte of answers would abort the interpreter.
    kinds = [bloomkit.BloomFilter(100, 0.01), bloomkit.BlockedBloomFilter(100, 0.01),
             bloomkit.CountingBloomFilter(100, 0.01), bloomkit.ScalableBloomFilter(100, 0.01)]
    for f in kinds:
        f.add("a")
        assert f.contains_many(LyingLength(["a", "b"])) == [True, False], f
        f.add_many(LyingLength(["c"]))
        assert "c" in f
    path = tmp_path / "m.bloom"
    bloomkit.BloomFilter(100, 0.01).save(path)
    with bloomkit.BloomFilter.open_mmap(path, writable=True) as m:
        m.add("a")
        assert m.contains_many(LyingLength(["a", "b"])) == [True, False]


def test_reprs_name_the_arguments_and_print_floats_briefly():
    assert repr(bloomkit.BloomFilter(10, 1e-300)).startswith("BloomFilter(capacity=10, fpp=1e-300, ")
    assert repr(bloomkit.CountWindowFilter(1000, 0.01)).startswith(
        "CountWindowFilter(window=1000, fpp=0.01, ")
    with pytest.raises(ValueError, match="not 1e-300$"):
        bloomkit.DLeftCountingFilter(10, 1e-300)
    with pytest.raises(ValueError, match="less than the initial capacity"):
        bloomkit.ScalableBloomFilter(10, 0.01, max_capacity=5)

