"""bloomkit against the Bloom filters on PyPI, all in one process.

    python bindings/python/bench/bench.py [--n 1000000] [--fpp 0.01] [--repeat 3] [--scrapy N]

For n URL strings (about 45 bytes each) at the given FPR it measures, per contender, the
nanoseconds per element of single `add` and `in` calls in a Python loop, of the batch calls
where the library has them, the bits of memory per element and the false-positive rate
measured on n absent URLs. Times are the process's CPU time (`time.process_time`), the median
of `--repeat` interleaved rounds (each round runs every contender's every operation once): on
a machine shared with other work they count only this process's running time, not the time it
waited for a CPU. The load average is printed with the results. Contenders that are not
installed are left out (install them with `pip install rbloom fastbloom-rs pybloom-live
pybloomfiltermmap3`). Prints a Markdown table.

Note: rbloom hashes with Python's `hash()`, which is randomized per process (PYTHONHASHSEED),
unless it is given a hash function; so its filters cannot be shared between processes or
saved for another run. bloomkit's hashing is fixed: its files and Redis filters are shared.
"""

import argparse
import gc
import os
import platform
import statistics
import sys
import time


def urls(n, salt):
    return [f"https://www.example.{salt}/articles/{i:08d}.html" for i in range(n)]


def timed(run, state, items):
    """ns per element of one run(state, items), in this process's CPU time."""
    gc.collect()
    start = time.process_time()
    run(state, items)
    return (time.process_time() - start) * 1e9 / len(items)


def loop_add(f, items):
    add = f.add
    for x in items:
        add(x)


def loop_in(f, items):
    for x in items:
        x in f  # noqa: B015


def contenders(n, p):
    """(name, make, add_batch, contains_batch, bits) for every importable library."""
    out = []
    import bloomkit

    out.append(("bloomkit BloomFilter", lambda: bloomkit.BloomFilter(n, p),
                lambda f, xs: f.add_many(xs), lambda f, xs: f.contains_many(xs),
                lambda f: f.bits))
    out.append(("bloomkit BlockedBloomFilter", lambda: bloomkit.BlockedBloomFilter(n, p),
                lambda f, xs: f.add_many(xs), lambda f, xs: f.contains_many(xs),
                lambda f: f.bits))
    try:
        import rbloom

        out.append(("rbloom", lambda: rbloom.Bloom(n, p), lambda f, xs: f.update(xs), None,
                    lambda f: f.size_in_bits))
    except ImportError:
        pass
    try:
        from fastbloom_rs import BloomFilter as FastBloom

        class FastAdapter:
            """Its str methods directly (its generic `add` dispatches on type in Python)."""

            def __init__(self):
                self.f = FastBloom(n, p)
                self.add = self.f._py_bloom.add_str
                self.__contains = self.f._py_bloom.contains_str

            def __contains__(self, x):
                return self.__contains(x)

        out.append(("fastbloom-rs", FastAdapter, lambda f, xs: f.f.add_str_batch(xs),
                    lambda f, xs: f.f.contains_str_batch(xs), lambda f: f.f.config().size()))
    except ImportError:
        pass
    try:
        import pybloomfilter

        out.append(("pybloomfiltermmap3", lambda: pybloomfilter.BloomFilter(n, p),
                    lambda f, xs: f.update(xs), None, lambda f: f.num_bits))
    except ImportError:
        pass
    try:
        import pybloom_live

        out.append(("pybloom-live", lambda: pybloom_live.BloomFilter(n, p), None, None,
                    lambda f: f.num_bits))
    except ImportError:
        pass
    out.append(("Python set", set, lambda f, xs: f.update(xs), None,
                lambda f: sys.getsizeof(f) * 8 + sum(sys.getsizeof(x) for x in f) * 8))
    return out


def scrapy_bench(n, repeat, seen=2):
    """Scrapy's default duplicate filter (a set of fingerprints) against BloomDupeFilter:
    per-request cost of request_seen over n requests (each seen `seen` times), and memory for 10^7
    requests (the set measured with tracemalloc at n and scaled; the filter's bits)."""
    import tracemalloc

    from scrapy.dupefilters import RFPDupeFilter
    from scrapy.http import Request
    from scrapy.utils.test import get_crawler

    import bloomkit
    from bloomkit.scrapy import BloomDupeFilter

    import os
    import tempfile

    crawler = get_crawler()
    addresses = urls(n, "scrapy")
    rows = []
    scratch = tempfile.mkdtemp(prefix="bloomkit-bench-")
    shared_files = iter(os.path.join(scratch, f"{i}.bloom") for i in range(repeat))
    filters = [
        ("Scrapy RFPDupeFilter (set)", lambda: RFPDupeFilter.from_crawler(crawler)),
        ("bloomkit BloomDupeFilter (blocked, p = 1e-4, 10^7 capacity)",
         lambda: BloomDupeFilter(fingerprinter=crawler.request_fingerprinter,
                                 capacity=10_000_000)),
        ("bloomkit BloomDupeFilter, shared local file (same filter, in place under the "
         "file's lock)",
         lambda: BloomDupeFilter(fingerprinter=crawler.request_fingerprinter,
                                 capacity=10_000_000, path=next(shared_files))),
    ]
    times, last = {name: [] for name, _ in filters}, {}
    for _ in range(repeat):  # interleaved rounds, as in the main table
        for name, make in filters:
            dupefilter = last[name] = make()
            # New request objects each run: Scrapy caches a request's fingerprint.
            requests = [Request(u) for u in addresses] * seen
            gc.collect()
            start = time.process_time()
            for r in requests:
                dupefilter.request_seen(r)
            times[name].append((time.process_time() - start) * 1e9 / len(requests))
    for name, _ in filters:
        dupefilter = last[name]
        if isinstance(getattr(dupefilter, "filter", None), bloomkit.MappedFilter):
            dupefilter.close("finished")
            # In the page cache (shared by every process that maps the file), not the heap.
            per_request = os.path.getsize(dupefilter.path) / 10_000_000
        elif hasattr(dupefilter, "filter"):
            per_request = dupefilter.filter.memory_bytes / 10_000_000
        else:
            fingerprints = [crawler.request_fingerprinter.fingerprint(Request(u))
                            for u in addresses]
            fingerprints = [bytes(f) for f in fingerprints]  # fresh objects, as the filter keeps
            tracemalloc.start()
            held = set(fingerprints)
            size, _ = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            # The set's table plus the fingerprint objects it keeps alive.
            per_request = (size + sum(sys.getsizeof(f) for f in held)) / n
        rows.append((name, statistics.median(times[name]), per_request))
    for leftover in os.listdir(scratch):
        os.remove(os.path.join(scratch, leftover))
    os.rmdir(scratch)
    print(f"\nScrapy duplicate filters: {n:,} requests, each seen {seen} times; median of {repeat} "
          f"interleaved rounds; "
          f"load average {load()}\n")
    print("| duplicate filter | ns per request_seen | bytes per request | memory for 10^7 |")
    print("|---|---|---|---|")
    for name, ns, per in rows:
        print(f"| {name} | {ns:,.0f} | {per:.1f} | {per * 1e7 / 2**20:,.0f} MiB |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--fpp", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-slow", action="store_true", help="leave out pybloom-live")
    parser.add_argument("--scrapy", type=float, default=0,
                        help="also compare Scrapy duplicate filters over this many requests")
    parser.add_argument("--scrapy-seen", type=int, default=2,
                        help="how many times each of those requests is seen (default 2)")
    parser.add_argument("--scrapy-only", action="store_true",
                        help="only the Scrapy comparison, not the table of filters")
    args = parser.parse_args()
    n, p = int(args.n), args.fpp
    if args.scrapy:
        scrapy_bench(int(args.scrapy), args.repeat, args.scrapy_seen)
    if args.scrapy_only:
        return
    present, absent = urls(n, "a"), urls(n, "b")
    print(f"n = {n:,} URLs (~{sum(map(len, present)) // n} bytes), p = {p}, "
          f"Python {platform.python_version()}, median of {args.repeat} interleaved rounds, "
          f"load average {load()}\n")
    chosen = [c for c in contenders(n, p) if not (args.skip_slow and c[0] == "pybloom-live")]
    # Each contender's filter filled once (queries and the FPR use it), then interleaved
    # rounds: every contender's every operation once per round, so that a busy moment of the
    # shared machine falls on all of them alike.
    full = {}
    for name, make, *_ in chosen:
        full[name] = make()
        loop_add(full[name], present)
    times = {name: {} for name, *_ in chosen}
    for _ in range(args.repeat):
        for name, make, add_batch, contains_batch, _ in chosen:
            ops = {"add": (loop_add, make), "in": (loop_in, lambda: full[name]),
                   "batch add": (add_batch, make), "batch in": (contains_batch, lambda: full[name])}
            for op, (run, state) in ops.items():
                if run is not None:
                    times[name].setdefault(op, []).append(timed(run, state(), present))
    print("| contender | add (loop) | in (loop) | batch add | batch contains | bits/elem "
          "| measured FPR |")
    print("|---|---|---|---|---|---|---|")
    for name, make, add_batch, contains_batch, bits in chosen:
        f = full.pop(name)
        fp = sum(x in f for x in absent) / n
        cell = (lambda op: f"{statistics.median(times[name][op]):,.0f} ns"
                if op in times[name] else "—")
        print(f"| {name} | {cell('add')} | {cell('in')} | {cell('batch add')} "
              f"| {cell('batch in')} | {bits(f) / n:.2f} | {fp:.4%} |")
        del f
    print(f"\nload average at the end: {load()}")


def load():
    """The 1-, 5- and 15-minute load averages (the machine is shared: say how busy it was)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
