"""Native files, memory mapping, Guava and Go formats: round trips and golden values from the
Rust tests' data (crates/bloomkit/tests)."""

import array
import contextlib
import errno
import fcntl
import os
import pickle
import resource
import signal
import subprocess
import sys
import threading

import pytest

import bloomkit
from conftest import FIXTURES, run_cli

KEYS = [f"https://example.com/page/{i}" for i in range(300)]

# The fixtures of crates/bloomkit/tests/fixtures.rs that Python can build: file (under the
# fixtures folder), maker. bloomkit's own classic, counting and scalable filters are the v2
# files: the default probing scheme since, `mixed-double` (the v1 files have the one before).
FIXTURE_MAKERS = {
    "v2/classic-mixed-double.bloom": lambda: bloomkit.BloomFilter(1000, 0.01),
    "v1/classic-bloomkit64.bloom": lambda: bloomkit.BloomFilter(1000, 0.01, preset="bloomkit64"),
    "v1/guava.bloom": lambda: bloomkit.BloomFilter(1000, 0.01, preset="guava"),
    "v1/guava32.bloom": lambda: bloomkit.BloomFilter(1000, 0.01, preset="guava32"),
    "v1/go.bloom": lambda: bloomkit.BloomFilter(1000, 0.01, preset="go"),
    "v1/redisson.bloom": lambda: bloomkit.BloomFilter(1000, 0.01, preset="redisson"),
    "v1/blocked-default.bloom": lambda: bloomkit.BlockedBloomFilter(1000, 0.01),
    "v2/counting4-mixed-double.bloom": lambda: bloomkit.CountingBloomFilter(1000, 0.01),
    "v2/scalable-mixed-double.bloom": lambda: bloomkit.ScalableBloomFilter(100, 0.01),
}


@pytest.mark.parametrize("name", sorted(FIXTURE_MAKERS))
def test_python_builds_the_rust_fixture_files_byte_for_byte(name, tmp_path):
    f = FIXTURE_MAKERS[name]()
    f.add_many(KEYS)
    path = FIXTURES.parent / name
    committed = path.read_bytes()
    assert f.to_bytes() == committed
    f.save(tmp_path / "saved.bloom")
    assert (tmp_path / "saved.bloom").read_bytes() == committed
    loaded = bloomkit.load(path)
    assert type(loaded) is type(f)
    assert all(loaded.contains_many(KEYS))
    assert loaded.to_bytes() == committed


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in FIXTURES.glob("*.bloom"))
    + sorted(f"../v2/{p.name}" for p in FIXTURES.parent.glob("v2/*mixed-double.bloom")),
)
def test_every_fixture_loads_as_its_kind(name):
    f = bloomkit.load(FIXTURES / name)
    assert all(f.contains_many(KEYS))
    assert type(f).load(FIXTURES / name).to_bytes() == (FIXTURES / name).read_bytes()


def test_save_and_load_every_kind(tmp_path):
    for kind in (bloomkit.BloomFilter, bloomkit.BlockedBloomFilter, bloomkit.CountingBloomFilter,
                 bloomkit.ScalableBloomFilter, bloomkit.AtomicBloomFilter,
                 bloomkit.AtomicBlockedBloomFilter):
        f = kind(5000, 0.01)
        f.add_many(KEYS)
        path = tmp_path / f"{kind.__name__}.bloom"
        f.save(str(path))  # str and pathlib paths
        g = kind.load(path)
        assert type(g) is kind
        assert all(g.contains_many(KEYS))
        assert (g.capacity, g.fpp, g.bits) == (f.capacity, f.fpp, f.bits)
        assert type(kind.from_bytes(f.to_bytes())) is kind


class _BytesPathLike:
    """An os.PathLike whose path is bytes."""

    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return self.path


def test_paths_may_be_str_bytes_or_path_like_as_for_open(tmp_path):
    # A name that is not UTF-8 is bytes to Python (surrogate escapes as str): both reach the
    # same file.
    raw = os.fsencode(tmp_path) + b"/caf\xe9.bloom"
    f = bloomkit.BlockedBloomFilter(1000, 0.01)
    f.add_many(KEYS)
    f.save(raw)
    assert os.path.exists(os.fsdecode(raw))
    for path in (raw, os.fsdecode(raw), _BytesPathLike(raw)):
        assert all(bloomkit.BlockedBloomFilter.load(path).contains_many(KEYS))
        assert all(bloomkit.load(path).contains_many(KEYS))
    with bloomkit.BlockedBloomFilter.open_mmap(raw, writable=True) as m:
        assert m.check_and_add("from a bytes path") is False
    assert "from a bytes path" in bloomkit.load(_BytesPathLike(raw))
    os.remove(raw)
    f.save_new(_BytesPathLike(raw))
    with pytest.raises(FileExistsError):
        f.save_new(raw)
    bitmap = bloomkit.Bitmap(0, 100)
    bitmap.add(7)
    bitmap.save(tmp_path.as_posix().encode() + b"/bits.bloom")
    assert 7 in bloomkit.Bitmap.load(tmp_path / "bits.bloom")
    for bad in (5, None, ["a"]):
        with pytest.raises(TypeError, match="expected str, bytes or os.PathLike object"):
            f.save(bad)
        with pytest.raises(TypeError, match="expected str, bytes or os.PathLike object"):
            bloomkit.load(bad)


def test_load_of_another_kind_is_refused(tmp_path):
    path = tmp_path / "c.bloom"
    bloomkit.CountingBloomFilter(100, 0.01).save(path)
    with pytest.raises(ValueError, match="counting"):
        bloomkit.BloomFilter.load(path)
    assert type(bloomkit.load(path)) is bloomkit.CountingBloomFilter
    assert type(bloomkit.Filter.load(path)) is bloomkit.CountingBloomFilter


def test_missing_and_unwritable_files_raise_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        bloomkit.BloomFilter.load(tmp_path / "missing.bloom")
    with pytest.raises(OSError):
        bloomkit.BloomFilter(10, 0.1).save(tmp_path / "no" / "such" / "dir.bloom")
    with pytest.raises(OSError):
        bloomkit.BloomFilter.open_mmap(tmp_path / "missing.bloom")


def test_damaged_files_raise_value_error(tmp_path):
    good = (FIXTURES / "classic.bloom").read_bytes()
    cases = {
        "empty": b"",
        "truncated header": good[:40],
        "truncated payload": good[:-9],
        "not a filter": b"hello world" * 20,
        "flipped bit": good[:200] + bytes([good[200] ^ 1]) + good[201:],
    }
    for what, data in cases.items():
        path = tmp_path / "bad.bloom"
        path.write_bytes(data)
        with pytest.raises(ValueError):
            bloomkit.load(path)
        with pytest.raises(ValueError):
            bloomkit.BloomFilter.from_bytes(data)
        with pytest.raises(ValueError):
            pickle.loads(_bad_pickle(data))


def test_special_paths_raise_os_error_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.bloom"
    os.mkfifo(fifo)
    (tmp_path / "a.bloom").symlink_to("b.bloom")
    (tmp_path / "b.bloom").symlink_to("a.bloom")
    paths = {
        str(fifo): "FIFO",
        str(tmp_path): "directory",
        "/dev/zero": "character device",
        "/dev/null": "character device",
        str(tmp_path / "a.bloom"): "symbolic links",
    }
    # Opening a FIFO for reading waits for a writer (and the wait is not interruptible from
    # Python): the reads run in a child process that must end in time.
    script = (
        "import sys, bloomkit\n"
        "readers = [bloomkit.load, bloomkit.BloomFilter.load, bloomkit.BloomFilter.open_mmap,\n"
        "           lambda p: bloomkit.BlockedBloomFilter.open_mmap(p, writable=True)]\n"
        "for path in sys.argv[1:]:\n"
        "    for i, read in enumerate(readers):\n"
        "        try:\n"
        "            read(path)\n"
        "            print(path, i, 'opened')\n"
        "        except Exception as e:\n"
        "            print(path, i, type(e).__name__, str(e).replace(chr(10), ' '))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *paths],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4 * len(paths), done.stdout
    for line in lines:
        path = line.split(" ", 1)[0]
        error = "IsADirectoryError" if paths[path] == "directory" else "OSError"
        assert f" {error} " in line and paths[path] in line, line
    with pytest.raises(IsADirectoryError, match="it is a directory"):
        bloomkit.BloomFilter(10, 0.01).save(tmp_path)
    assert fifo.is_fifo()


def test_a_file_whose_size_lies_is_refused_as_damaged():
    # /proc files declare 0 bytes and hold more: read as they declare, they are no filter.
    for read in [bloomkit.load, bloomkit.BloomFilter.open_mmap]:
        with pytest.raises(ValueError, match="truncated"):
            read("/proc/self/status")


class _FullDisk:
    """A directory on a tmpfs of `size` bytes, mounted for the test (root), or else a plain
    directory whose writes fail past `size` bytes by a file-size limit (RLIMIT_FSIZE with
    SIGXFSZ ignored: the kernel's EFBIG). Either way a real write fails in the kernel."""

    def __init__(self, path, size):
        self.path = path
        self.size = size
        path.mkdir()
        mount = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)]
        # BLOOMKIT_TEST_NO_MOUNT=1 tries the fallback where mounting works.
        self.mounted = (
            "BLOOMKIT_TEST_NO_MOUNT" not in os.environ
            and subprocess.run(mount, capture_output=True).returncode == 0
        )
        self.errno = errno.ENOSPC if self.mounted else errno.EFBIG

    @contextlib.contextmanager
    def full(self):
        if self.mounted:
            filler = self.path / "filler"
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
            try:
                while True:
                    os.write(fd, bytes(4096))
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
            finally:
                os.close(fd)
            try:
                yield
            finally:
                filler.unlink()
        else:
            limits = resource.getrlimit(resource.RLIMIT_FSIZE)
            handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, limits[1]))
            try:
                yield
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, limits)
                signal.signal(signal.SIGXFSZ, handler)

    def close(self):
        if self.mounted:
            subprocess.run(["umount", str(self.path)], check=True)


def test_save_on_a_full_disk_raises_os_error_and_keeps_the_original(tmp_path):
    disk = _FullDisk(tmp_path / "disk", 1 << 20)
    try:
        path = disk.path / "f.bloom"
        f = bloomkit.ScalableBloomFilter(10_000, 0.01)
        f.add("kept")
        f.save(path)
        before = path.read_bytes()
        f.add_many(KEYS)
        with disk.full():
            with pytest.raises(OSError) as raised:
                f.save(path)
            assert raised.value.errno == disk.errno
            assert str(path) in str(raised.value)
            with pytest.raises(OSError):
                f.save_new(disk.path / "new.bloom")
        assert path.read_bytes() == before
        assert sorted(p.name for p in disk.path.iterdir()) == ["f.bloom"]
        assert "kept" in bloomkit.load(path)
    finally:
        disk.close()


def _sparse_copy(source, target):
    """Copies `source` to `target` leaving a hole for every 4 KiB page of zeros (as
    `cp --sparse=always` does)."""
    data = source.read_bytes()
    with open(target, "wb") as out:
        for at in range(0, len(data), 4096):
            page = data[at : at + 4096]
            if any(page):
                out.seek(at)
                out.write(page)
        out.truncate(len(data))


@pytest.mark.parametrize("kind", [bloomkit.BloomFilter, bloomkit.BlockedBloomFilter])
def test_a_sparse_copy_mapped_on_a_full_tmpfs_raises_os_error_not_a_crash(tmp_path, kind):
    """On a full tmpfs even reading a hole of a mapped file needs a page: the first read would
    kill the interpreter (SIGBUS). `open_mmap` reads the holes in when it maps the file and
    raises OSError instead; with room the same file opens. (Without a mount the holes cost
    nothing to read, and it opens either way.)"""
    disk = _FullDisk(tmp_path / "disk", 1 << 20)
    try:
        original = tmp_path / "original.bloom"
        f = kind(100_000, 0.01)
        f.add("present")
        f.save(original)
        path = disk.path / "sparse.bloom"
        _sparse_copy(original, path)
        assert os.stat(path).st_blocks * 512 < os.stat(path).st_size
        with disk.full():
            if disk.mounted:
                with pytest.raises(OSError) as raised:
                    kind.open_mmap(path)
                assert raised.value.errno == errno.ENOSPC
                assert str(path) in str(raised.value)
            else:
                assert "present" in kind.open_mmap(path)
        mapped = kind.open_mmap(path)
        assert "present" in mapped and "absent" not in mapped
        assert path.read_bytes() == original.read_bytes()
        del mapped
    finally:
        disk.close()


def _bad_pickle(data):
    """A pickle whose payload is `data` instead of a filter."""
    return pickle.dumps(_Restore(data))


class _Restore:
    def __init__(self, data):
        self.data = data

    def __reduce__(self):
        return (bloomkit._bloomkit._restore, ("BloomFilter", self.data))


def test_kinds_that_cannot_be_mapped_say_so(tmp_path):
    # A valid file of another kind is not "corrupt": the error names the kind and what to do.
    for name, f in [("counting", bloomkit.CountingBloomFilter(100, 0.01)),
                    ("scalable", bloomkit.ScalableBloomFilter(100, 0.01)),
                    ("d-left", bloomkit.DLeftCountingFilter(100, 0.01))]:
        path = tmp_path / f"{name}.bloom"
        f.save(path)
        for writable in (False, True):
            with pytest.raises(ValueError, match="cannot be memory-mapped.*load it") as e:
                bloomkit.BloomFilter.open_mmap(path, writable=writable)
            assert "corrupt" not in str(e.value)
        assert type(bloomkit.load(path)) is type(f)


@pytest.mark.parametrize("kind", [bloomkit.BloomFilter, bloomkit.BlockedBloomFilter])
def test_memory_mapped_read_only_and_read_write(tmp_path, kind):
    path = tmp_path / "mapped.bloom"
    f = kind(100_000, 0.01)
    f.add_many(KEYS)
    f.save(path)
    ro = kind.open_mmap(path)
    assert not ro.writable and not ro.dirty and ro.kind == f.kind
    assert (ro.bits, ro.hashes, ro.capacity, ro.fpp) == (f.bits, f.hashes, 100_000, 0.01)
    assert all(ro.contains_many(KEYS)) and "absent" not in ro and KEYS[0] in ro
    assert len(ro) == len(f)
    ro.verify()
    with pytest.raises(TypeError, match="read-only"):
        ro.add("x")

    with kind.open_mmap(path, writable=True) as rw:
        assert rw.add("new") is None
        assert rw.check_and_add("new") is True and rw.check_and_add("newer") is False
        rw.add_many(["more", "still more"])
        assert rw.dirty and "more" in ro  # the read-only mapping sees the shared pages
    assert not ro.dirty  # sealed on exit
    ro.verify()
    g = kind.load(path)  # a checked load: the checksum is valid again
    assert all(e in g for e in ["new", "more", "still more", *KEYS])


@pytest.mark.parametrize("kind", [bloomkit.BloomFilter, bloomkit.BlockedBloomFilter])
def test_threads_adding_and_flushing_one_mapping_leave_it_sealed(tmp_path, kind):
    # The file lock excludes processes, not the threads of one that share a mapping: a flush of
    # one thread must not seal the file between another's dirty mark and its bits (which left
    # a clean mark over a stale checksum: the next checked load refused the file). After each
    # flush the flusher reads the file under the file lock, as another process would (its own
    # open file): whenever the dirty mark (header offset 88, docs/FORMAT.md) is clear, the
    # checksum must hold.
    path = tmp_path / "threads.bloom"
    kind(100_000, 0.001).save(path)
    rw = kind.open_mmap(path, writable=True)
    stop = threading.Event()
    errors = []
    sealed_snapshots = []

    # Lists made beforehand: an adder spends its time adding, without the GIL, and then
    # pauses, so that a flush which overlapped its batch is read before the next batch.
    batches = [[[f"{t}-{i}-{j}" for j in range(20_000)] for i in range(20)] for t in range(2)]

    def add(t):
        try:
            for i, batch in enumerate(batches[t]):
                rw.add_many(batch)
                rw.add(f"{t}-{i}-single")
                stop.wait(0.003)
        except Exception as e:  # reported below
            errors.append(e)

    def flush_and_read():
        rw.flush()
        with open(path, "rb") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            data = f.read()
        if int.from_bytes(data[88:96], "little") == 0:
            sealed_snapshots.append(data)

    def flush():
        # Flushes during and between the adders' batches, without starving them (each flush
        # checksums the whole file under the lock; a loop without a pause let the adders run
        # past the join timeout on a slow 2-core machine).
        while not stop.is_set():
            flush_and_read()
            stop.wait(0.0005)

    flusher = threading.Thread(target=flush)
    adders = [threading.Thread(target=add, args=(t,)) for t in range(2)]
    flusher.start()
    for t in adders:
        t.start()
    for t in adders:
        t.join(timeout=120)
    stop.set()
    flusher.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in [flusher, *adders])
    flush_and_read()  # nothing else runs: sealed
    for data in sealed_snapshots:
        kind.from_bytes(data)  # checked: a stale checksum raises ValueError
    rw.close()
    assert not kind.open_mmap(path).dirty
    g = kind.load(path)  # checked: the checksum covers every bit
    assert all(all(g.contains_many(batch)) for mine in batches for batch in mine)
    assert all(f"{t}-{i}-single" in g for t in range(2) for i in range(20))


def test_a_damaged_file_is_not_opened_for_writing(tmp_path):
    path = tmp_path / "damaged.bloom"
    good = (FIXTURES / "classic.bloom").read_bytes()
    path.write_bytes(good[:300] + bytes([good[300] ^ 4]) + good[301:])
    with pytest.raises(ValueError, match="checksum"):
        bloomkit.BloomFilter.open_mmap(path, writable=True)


def test_only_classic_and_blocked_files_map(tmp_path):
    bloomkit.CountingBloomFilter(100, 0.01).save(tmp_path / "counting.bloom")
    with pytest.raises(ValueError, match="only classic and blocked"):
        bloomkit.BloomFilter.open_mmap(tmp_path / "counting.bloom")


def test_processes_adding_to_one_mapped_file_lose_nothing(tmp_path):
    path = tmp_path / "shared.bloom"
    bloomkit.BlockedBloomFilter(200_000, 0.001).save(path)
    script = (
        "import sys, bloomkit\n"
        "p = sys.argv[2]\n"
        "with bloomkit.BlockedBloomFilter.open_mmap(sys.argv[1], writable=True) as f:\n"
        "    for i in range(0, 20000, 500):\n"
        "        f.add_many(f'{p}-{j}' for j in range(i, i + 500))\n"
        "        f.add(f'{p}-single-{i}')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), str(p)]) for p in range(4)]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    f = bloomkit.BlockedBloomFilter.load(path)  # sealed and checksummed
    for p in range(4):
        assert all(f.contains_many(f"{p}-{j}" for j in range(20000)))
        assert all(f.contains_many(f"{p}-single-{i}" for i in range(0, 20000, 500)))


def test_processes_checking_one_mapped_file_are_told_new_once(tmp_path):
    # Four processes check-and-add the same 20,000 elements at once, in different orders:
    # answers of present elements skip the lock, new ones take it, and every element must be
    # reported new by exactly one process (none by two; none by no process except a false
    # positive at insert time: expected 20,000 * 0.001 * 1/2 on average, 10, so 60 is far out).
    path = tmp_path / "dedup.bloom"
    bloomkit.BlockedBloomFilter(20_000, 0.001).save(path)
    script = (
        "import random, sys, bloomkit\n"
        "items = [f'e{i}' for i in range(20000)]\n"
        "random.Random(int(sys.argv[2])).shuffle(items)\n"
        "with bloomkit.BlockedBloomFilter.open_mmap(sys.argv[1], writable=True) as f:\n"
        "    new = [x for x in items if not f.check_and_add(x)]\n"
        "sys.stdout.write('\\n'.join(new))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), str(p)],
                              stdout=subprocess.PIPE, text=True) for p in range(4)]
    reported = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        reported += out.split()
    assert len(reported) == len(set(reported)), "an element was reported new twice"
    assert len(reported) > 20_000 - 60
    f = bloomkit.BlockedBloomFilter.load(path)  # sealed by the clean closes
    assert all(f.contains_many(f"e{i}" for i in range(20000)))


def test_a_writer_that_dies_leaves_a_dirty_file_that_still_loads(tmp_path):
    path = tmp_path / "dirty.bloom"
    bloomkit.BloomFilter(10_000, 0.01).save(path)
    script = (
        "import os, sys, bloomkit\n"
        "f = bloomkit.BloomFilter.open_mmap(sys.argv[1], writable=True)\n"
        "f.add_many(['a', 'b', 'c'])\n"
        "os._exit(0)  # no seal: as if killed\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
    assert bloomkit.BloomFilter.open_mmap(path).dirty
    g = bloomkit.BloomFilter.load(path)
    assert all(g.contains_many(["a", "b", "c"]))


def test_a_mapped_file_replaced_by_another_process_is_not_written(tmp_path):
    path = tmp_path / "replaced.bloom"
    bloomkit.BlockedBloomFilter(1000, 0.01).save(path)
    mapped = bloomkit.BlockedBloomFilter.open_mmap(path, writable=True)
    mapped.add("before")
    replacement = bloomkit.BlockedBloomFilter.load(path)  # dirty: loads, checksum recomputed
    replacement.add("other")
    replacement.save(path)  # a whole-file save: a new file renamed over the old one
    # Bits set in the old file now would be lost with it: refused, and nothing is changed.
    with pytest.raises(OSError, match="replaced or removed the file") as caught:
        mapped.add("after")
    assert caught.value.errno == errno.ESTALE
    with pytest.raises(OSError, match="replaced"):
        mapped.add_many(["after"])
    mapped.close()  # the old file is not sealed over the new one: no error
    now = bloomkit.BlockedBloomFilter.load(path)
    assert "before" in now and "other" in now and "after" not in now


def test_a_writer_notices_every_replacement_by_another_process(cli, tmp_path):
    # One process adds elements through a mapping of a relative path while the CLI replaces
    # the file whole, again and again (`merge` into one of its inputs: under the old file's
    # lock, read it, write the union to a new file and rename that over the path). The
    # writer must notice each replacement at its next add (an OSError; it then maps the new
    # file), so every element it was told it added is in the file that ends up at the path.
    path = tmp_path / "replaced.bloom"
    bloomkit.BlockedBloomFilter(100_000, 0.001).save(path)
    writer = (
        "import time, bloomkit\n"
        "f = bloomkit.BlockedBloomFilter.open_mmap('replaced.bloom', writable=True)\n"
        "reopened = 0\n"
        "for i in range(20000):\n"
        "    while True:\n"
        "        try:\n"
        "            f.add(f'w{i}')\n"
        "            break\n"
        "        except OSError:\n"
        "            f.close()\n"
        "            f = bloomkit.BlockedBloomFilter.open_mmap('replaced.bloom', writable=True)\n"
        "            reopened += 1\n"
        "    if i % 50 == 0:\n"
        "        time.sleep(0.001)\n"
        "f.close()\n"
        "print(reopened)\n"
    )
    w = subprocess.Popen([sys.executable, "-c", writer], cwd=tmp_path, stdout=subprocess.PIPE,
                         text=True)
    replacements = 0
    while w.poll() is None and replacements < 200:
        other = bloomkit.BlockedBloomFilter(100_000, 0.001)
        other.add(f"r{replacements}")
        other.save(tmp_path / "other.bloom")
        run_cli(cli, "merge", path, path, tmp_path / "other.bloom")
        replacements += 1
    out, _ = w.communicate(timeout=300)
    assert w.returncode == 0
    final = bloomkit.BlockedBloomFilter.load(path)
    assert all(final.contains_many(f"w{i}" for i in range(20000))), "an added element was lost"
    assert all(final.contains_many(f"r{r}" for r in range(replacements)))
    assert int(out) >= 1, "no replacement came while the writer ran: nothing was tested"


def test_save_new_creates_a_file_only_once(tmp_path):
    path = tmp_path / "new.bloom"
    first = bloomkit.BloomFilter(1000, 0.01)
    first.add("first")
    first.save_new(path)
    second = bloomkit.BloomFilter(1000, 0.01)
    second.add("second")
    with pytest.raises(FileExistsError):
        second.save_new(path)
    kept = bloomkit.BloomFilter.load(path)
    assert "first" in kept and "second" not in kept
    assert [p.name for p in tmp_path.iterdir()] == ["new.bloom"]  # no temporary file left


def guava_golden(preset):
    """Guava's BloomFilterTest: n = 10^6, p = 0.03, the even numbers inserted as decimal
    strings, the odd ones tested (values in crates/bloomkit/tests/guava_golden.rs)."""
    f = bloomkit.BloomFilter(1_000_000, 0.03, preset=preset)
    f.add_many(str(i) for i in range(0, 2_000_000, 2))
    odd = [str(i) for i in range(1, 2_000_000, 2)]
    answers = f.contains_many(odd)
    below_900 = [int(s) for s, a in zip(odd, answers) if a and int(s) < 900]
    return f, below_900, sum(answers)


def test_guava_golden_false_positives_and_round_trip():
    f, below_900, total = guava_golden("guava")
    assert below_900 == [89, 129, 471, 723, 751, 835, 871]
    assert total == 29763
    assert len(f) == 1_000_100
    assert abs(f.estimated_fpp() - 0.0300140770265523) < 1e-15
    data = f.to_guava()
    g = bloomkit.BloomFilter.from_guava(data)
    assert g.to_guava() == data
    assert g.contains_many([str(i) for i in range(0, 2000, 2)]) == [True] * 1000
    assert g.capacity is None and g.fpp is None  # Guava's stream records no design


def test_go_golden_words_and_round_trips():
    # Go bits-and-blooms New(100, 3) + Add("hello") + Add("world"): WriteTo's words
    # (big-endian) 0440200000000050 0000000400000000 (crates/bloomkit/tests/go_redisson_golden.rs).
    f = bloomkit.BloomFilter.with_params(100, 3, preset="go")
    f.add("hello")
    f.add("world")
    data = f.to_go()
    assert data[:16] == (100).to_bytes(8, "big") + (3).to_bytes(8, "big")
    assert data[-16:] == bytes.fromhex("0440200000000050" "0000000400000000")
    assert bloomkit.BloomFilter.from_go(data).to_go() == data
    text = f.to_go_json()
    back = bloomkit.BloomFilter.from_go_json(text)
    assert back.to_go() == data
    assert bloomkit.BloomFilter.from_go_json(text.encode()).to_go() == data
    # Go's NewWithEstimates(1000, 0.01) sizing: m = 9586, k = 7.
    g = bloomkit.BloomFilter(1000, 0.01, preset="go")
    assert (g.bits, g.hashes) == (9586, 7)


def test_foreign_formats_refuse_what_they_cannot_hold():
    with pytest.raises(ValueError):
        bloomkit.BloomFilter(100, 0.01).to_guava()  # bloomkit's hashing is not Guava's
    with pytest.raises(ValueError):
        bloomkit.BloomFilter(100, 0.01).to_go()
    for bad in (b"", b"\x00" * 3, b"\xff" * 64):
        with pytest.raises(ValueError):
            bloomkit.BloomFilter.from_guava(bad)
        with pytest.raises(ValueError):
            bloomkit.BloomFilter.from_go(bad)
    with pytest.raises(ValueError):
        bloomkit.BloomFilter.from_go_json("{not json")


def test_every_from_bytes_takes_any_bytes_like_object():
    # bytes, bytearray, memoryview (also of a slice) and other buffers (array) alike.
    def forms(data):
        return [data, bytearray(data), memoryview(data),
                memoryview(b"xx" + data + b"yy")[2:-2], array.array("B", data)]

    for kind in (bloomkit.BloomFilter, bloomkit.BlockedBloomFilter, bloomkit.CountingBloomFilter,
                 bloomkit.ScalableBloomFilter, bloomkit.AtomicBloomFilter,
                 bloomkit.AtomicBlockedBloomFilter, bloomkit.DLeftCountingFilter,
                 bloomkit.CountWindowFilter):
        f = kind(1000, 0.01)
        f.add_many(KEYS)
        for data in forms(f.to_bytes()):
            g = kind.from_bytes(data)
            assert type(g) is kind and all(g.contains_many(KEYS)), (kind, type(data))
    for data in forms(bloomkit.TimeWindowFilter(60, 1000, 0.01).to_bytes()):
        assert type(bloomkit.Filter.from_bytes(data)) is bloomkit.TimeWindowFilter
    for cls in (bloomkit.Bitmap, bloomkit.TwoBitMap):
        b = cls(0, 1000)
        b.add_many([3, 30, 300])
        for data in forms(b.to_bytes()):
            c = cls.from_bytes(data)
            assert type(c) is cls and [v for v in range(1000) if v in c] == [3, 30, 300]
    guava = bloomkit.BloomFilter(1000, 0.01, preset="guava")
    guava.add_many(KEYS)
    for data in forms(guava.to_guava()):
        assert bloomkit.BloomFilter.from_guava(data).to_guava() == guava.to_guava()
    go = bloomkit.BloomFilter(1000, 0.01, preset="go")
    go.add_many(KEYS)
    for data in forms(go.to_go()):
        assert bloomkit.BloomFilter.from_go(data).to_go() == go.to_go()
    for data in forms(go.to_go_json().encode()):
        assert bloomkit.BloomFilter.from_go_json(data).to_go() == go.to_go()
    # Damaged data is still a ValueError, whatever holds it.
    with pytest.raises(ValueError):
        bloomkit.BloomFilter.from_bytes(bytearray(b"hello world" * 20))
    # Other types are refused by name, as CPython refuses them.
    for call in (bloomkit.BloomFilter.from_bytes, bloomkit.Bitmap.from_bytes,
                 bloomkit.BloomFilter.from_guava, bloomkit.BloomFilter.from_go):
        with pytest.raises(TypeError, match="a bytes-like object is required, not 'str'"):
            call("not bytes")
        with pytest.raises(TypeError, match="a bytes-like object is required, not 'list'"):
            call([1, 2, 3])
    with pytest.raises(TypeError, match="a bytes-like object is required, not 'list'"):
        bloomkit.BloomFilter.from_go_json([1, 2, 3])
