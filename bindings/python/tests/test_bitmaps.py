"""bloomkit.Bitmap and bloomkit.TwoBitMap: exact integer sets, their files, and the real CLI."""

import copy
import inspect
import pickle

import pytest

import bloomkit
from conftest import run_cli


@pytest.mark.parametrize("form", ["dense", "roaring"])
def test_bitmap_is_an_exact_set_of_its_range(form):
    b = bloomkit.Bitmap(-1000, 1_000_000, form=form)
    assert b.form == form and (b.start, b.end) == (-1000, 1_000_000)
    assert b.add(42) is True and b.add(42) is False
    assert b.add_many([7, 999_999, 7, -1000]) == 3
    assert 42 in b and -1000 in b and 8 not in b
    assert 5_000_000 not in b and 2**70 not in b  # outside the range: absent
    assert len(b) == 4
    assert list(b) == [-1000, 7, 42, 999_999]
    assert b.contains_many([7, 8, 42]) == [True, False, True]
    assert b.rank(42) == 3 and b.rank(41) == 2 and b.rank(-5000) == 0
    b.remove(7)
    assert 7 not in b
    with pytest.raises(KeyError):
        b.remove(7)
    assert b.discard(42) is True and b.discard(42) is False
    b.clear()
    assert len(b) == 0 and list(b) == []


def test_the_form_follows_the_expected_count():
    assert bloomkit.Bitmap(0, 10**9).form == "roaring"
    assert bloomkit.Bitmap(0, 10**9, expected=10**8).form == "dense"
    b = bloomkit.Bitmap(0, 10**6, expected=10)
    b.add_many(range(0, 10**6, 1000))
    dense = b.to_form("dense")
    assert dense.form == "dense" and list(dense) == list(b)


def test_set_operations():
    a = bloomkit.Bitmap(0, 100)
    b = bloomkit.Bitmap(0, 100)
    a.add_many([1, 2, 3])
    b.add_many([2, 3, 4])
    assert list(a | b) == [1, 2, 3, 4]
    assert list(a & b) == [2, 3]
    assert list(a - b) == [1]
    c = copy.copy(a)
    c |= b
    assert list(c) == [1, 2, 3, 4] and list(a) == [1, 2, 3]
    c &= b
    assert list(c) == [2, 3, 4]
    c -= a
    assert list(c) == [4]
    with pytest.raises(ValueError):
        a | bloomkit.Bitmap(0, 200)


def test_two_bit_map_counts_once_and_more():
    m = bloomkit.TwoBitMap(0, 1000)
    assert [m.add(v) for v in [5, 9, 5, 700, 5]] == [0, 0, 1, 0, 2]
    assert (m.count(5), m.count(9), m.count(1)) == (2, 1, 0)
    assert 9 in m and 1 not in m
    assert list(m.singles()) == [9, 700] and list(m.repeated()) == [5]
    assert m.singles_len() == 2 and len(m) == 3
    assert m.add_many([1, 1, 2]) == 2


def test_add_takes_one_positional_integer():
    # `add` of both bitmaps is a METH_O method descriptor made by hand (meth_o.rs).
    for cls, returns in ((bloomkit.Bitmap, "returns whether it was new"),
                         (bloomkit.TwoBitMap, "returns its cell")):
        method = vars(cls)["add"]
        assert str(inspect.signature(method)) == "(self, value, /)"
        assert returns in method.__doc__
        m = cls(0, 100)
        for call in (lambda: m.add(), lambda: m.add(1, 2), lambda: m.add(value=1)):
            with pytest.raises(TypeError):
                call()
        with pytest.raises(TypeError, match="not str"):
            m.add("7")
        with pytest.raises(ValueError):
            m.add(100)
        assert len(m) == 0
        # Refused by CPython's check before the Rust code reads the object as a bitmap.
        with pytest.raises(TypeError, match="doesn't apply"):
            method(bloomkit.BloomFilter(10, 0.1), 1)
    b, t = bloomkit.Bitmap(0, 100), bloomkit.TwoBitMap(0, 100)
    assert (b.add(7), b.add(7), bloomkit.Bitmap.add(b, 8)) == (True, False, True)
    assert (t.add(7), t.add(7), t.add(7)) == (0, 1, 2) and list(b) == [7, 8]


def test_files_bytes_and_pickling(tmp_path):
    b = bloomkit.Bitmap(0, 10**6)
    b.add_many([3, 30, 300])
    b.save(tmp_path / "b.bloom")
    assert list(bloomkit.Bitmap.load(tmp_path / "b.bloom")) == [3, 30, 300]
    assert list(bloomkit.load(tmp_path / "b.bloom")) == [3, 30, 300]
    assert type(bloomkit.load(tmp_path / "b.bloom")) is bloomkit.Bitmap
    assert list(bloomkit.Bitmap.from_bytes(b.to_bytes())) == [3, 30, 300]
    assert list(pickle.loads(pickle.dumps(b))) == [3, 30, 300]
    m = bloomkit.TwoBitMap(0, 100)
    m.add_many([1, 1, 2])
    m.save(tmp_path / "m.bloom")
    again = bloomkit.load(tmp_path / "m.bloom")
    assert type(again) is bloomkit.TwoBitMap and list(again.singles()) == [2]
    assert list(pickle.loads(pickle.dumps(m)).repeated()) == [1]
    # The other kind, or a Bloom filter, is refused by a class method.
    with pytest.raises(ValueError, match="two-bit"):
        bloomkit.Bitmap.load(tmp_path / "m.bloom")
    with pytest.raises(ValueError, match="Bitmap cannot hold"):
        bloomkit.BloomFilter(100, 0.01).save(tmp_path / "f.bloom") or bloomkit.Bitmap.load(
            tmp_path / "f.bloom")
    with pytest.raises(ValueError, match="not a Bloom filter"):
        bloomkit.BloomFilter.load(tmp_path / "b.bloom")


def test_bitmaps_compare_as_sets_and_are_not_hashable():
    dense = bloomkit.Bitmap(0, 10**6, form="dense")
    roaring = bloomkit.Bitmap(0, 10**6, form="roaring")
    for b in (dense, roaring):
        b.add_many([3, 30, 300])
    assert dense == roaring and dense == copy.copy(dense) == pickle.loads(pickle.dumps(dense))
    roaring.add(4)
    assert dense != roaring
    assert bloomkit.Bitmap(0, 10) != bloomkit.Bitmap(0, 11)
    assert bloomkit.Bitmap(0, 10) != bloomkit.TwoBitMap(0, 10)
    assert bloomkit.Bitmap(0, 10) != {1}
    m = bloomkit.TwoBitMap(0, 10)
    m.add_many([1, 1, 2])
    assert m == pickle.loads(pickle.dumps(m)) == copy.deepcopy(m)
    n = copy.copy(m)
    n.add(2)
    assert m != n  # 2 seen twice in n, once in m
    for b in (dense, m):
        with pytest.raises(TypeError, match="unhashable"):
            hash(b)


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        bloomkit.Bitmap(10, 10)
    with pytest.raises(ValueError, match="64-bit"):
        bloomkit.Bitmap(-1, 2**64)
    with pytest.raises(ValueError, match="form"):
        bloomkit.Bitmap(0, 10, form="sparse")
    with pytest.raises(ValueError, match="expected"):
        bloomkit.Bitmap(0, 10, expected=0)
    b = bloomkit.Bitmap(0, 100)
    with pytest.raises(TypeError, match="must be int, not str"):
        b.add("7")
    with pytest.raises(TypeError, match="must be int, not float"):
        1.5 in b
    with pytest.raises(ValueError, match="range"):
        b.add(100)
    with pytest.raises(ValueError, match="range"):
        b.add(2**80)
    with pytest.raises(ValueError, match="range"):
        b.add_many([1, 2, 500])
    with pytest.raises(TypeError, match="must be int"):
        b.add_many([1, None])
    with pytest.raises(FileNotFoundError):
        bloomkit.Bitmap.load(tmp_path / "missing.bloom")
    b.save(tmp_path / "b.bloom")
    data = (tmp_path / "b.bloom").read_bytes()
    (tmp_path / "cut.bloom").write_bytes(data[:-3])
    with pytest.raises(ValueError):
        bloomkit.Bitmap.load(tmp_path / "cut.bloom")
    with pytest.raises(ValueError):
        bloomkit.Bitmap.from_bytes(b"\x00" * 10)


@pytest.mark.parametrize("kind,cls", [("bitmap", bloomkit.Bitmap),
                                      ("two-bit-map", bloomkit.TwoBitMap)])
def test_the_cli_reads_python_bitmaps_and_python_reads_the_clis(cli, tmp_path, kind, cls):
    mine = cls(0, 1_000_000)
    mine.add_many([5, 77, 123_456])
    mine.save(tmp_path / "py.bloom")
    proc = run_cli(cli, "check", tmp_path / "py.bloom", "5", "6", "77", "123456")
    assert proc.stdout.decode().split() == ["5", "77", "123456"]
    path = tmp_path / "cli.bloom"
    run_cli(cli, "-q", "create", path, "--kind", kind, "--range", "0..1000000")
    run_cli(cli, "-q", "add", path, "9", "99", "999", "99")
    theirs = bloomkit.load(path)
    assert type(theirs) is cls
    assert [v in theirs for v in (9, 99, 999, 10)] == [True, True, True, False]
    if cls is bloomkit.TwoBitMap:
        assert list(theirs.singles()) == [9, 999] and theirs.count(99) == 2


def test_iterating_more_integers_than_memory_holds_is_a_memory_error(monkeypatch):
    # The snapshot of a dense bitmap takes 128 times its bits: checked against the available
    # memory (BLOOMKIT_MEM_AVAILABLE stands for MemAvailable) as it grows, never an abort.
    b = bloomkit.Bitmap(0, 10**7, form="dense")
    assert b.add_many(range(10**7)) == 10**7
    monkeypatch.setenv("BLOOMKIT_MEM_AVAILABLE", str(100 << 20))
    with pytest.raises(MemoryError, match="snapshot"):
        iter(b)
    t = bloomkit.TwoBitMap(0, 10**7)
    t.add_many(range(10**7))
    with pytest.raises(MemoryError, match="snapshot"):
        t.singles()
    monkeypatch.setenv("BLOOMKIT_MEM_AVAILABLE", str(1 << 30))
    assert sum(1 for _ in iter(b)) == 10**7


def test_range_arguments_of_any_size_raise_value_error_naming_them():
    for make, message in [
        (lambda: bloomkit.Bitmap(0, 2**200), "end"),
        (lambda: bloomkit.Bitmap(-(2**200), 10), "start"),
        (lambda: bloomkit.TwoBitMap(0, 2**70), "range|end"),
        (lambda: bloomkit.Bitmap(0, 100, expected=2**100), "expected"),
        (lambda: bloomkit.Bitmap(0, 100, expected=-1), "expected"),
    ]:
        with pytest.raises(ValueError, match=message):
            make()
    with pytest.raises(TypeError):
        bloomkit.Bitmap(0, 10.5)


def test_rank_takes_any_64_bit_integer_and_refuses_others_naming_the_argument():
    b = bloomkit.Bitmap(0, 100)
    b.add_many([1, 50])
    assert b.rank(-(2**63)) == 0 and b.rank(2**64 - 1) == 2  # beyond the range: clamped
    for value, message in [
        (2**200, f"^value {2**200} is too large: at most 18446744073709551615$"),
        (2**64, "^value 18446744073709551616 is too large"),
        (-(2**200), f"^value must be at least -9223372036854775808, got {-(2**200)}$"),
    ]:
        with pytest.raises(ValueError, match=message):
            b.rank(value)
    for value, type_name in [(True, "bool"), (1.5, "float"), ("7", "str")]:
        with pytest.raises(TypeError, match=f"^value must be an integer, not {type_name}$"):
            b.rank(value)


def test_bools_are_refused_as_range_arguments_naming_them():
    for cls in (bloomkit.Bitmap, bloomkit.TwoBitMap):
        for make, argument in [
            (lambda: cls(False, 10), "start"),
            (lambda: cls(0, True), "end"),
            (lambda: cls(0, 10, expected=True), "expected"),
        ]:
            with pytest.raises(TypeError, match=f"^{argument} must be an integer, not bool$"):
                make()
