"""bloomkit against the Bloom filters on PyPI, all in one process.

    python bindings/python/bench/bench.py [--n 1000000] [--fpp 0.01] [--repeat 3] [--scrapy N]

For n URL strings (about 45 bytes each) at the given FPR it measures, per contender, the
nanoseconds per element of single `add` and `in` calls in a Python loop, of the batch calls
where the library has them, the bits of memory per element and the false-positive rate
measured on n absent URLs. Times are the process's CPU time (`time.process_time`, best of
`--repeat` runs): on a machine shared with other work they count only this process's running
time, not the time it waited for a CPU. Contenders that are not installed are left out (install them with
`pip install rbloom fastbloom-rs pybloom-live pybloomfiltermmap3`). Prints a Markdown table.

Note: rbloom hashes with Python's `hash()`, which is randomized per process (PYTHONHASHSEED),
unless it is given a hash function; so its filters cannot be shared between processes or
saved for another run. bloomkit's hashing is fixed: its files and Redis filters are shared.
"""

import argparse
import gc
import platform
import sys
import time


def urls(n, salt):
    return [f"https://www.example.{salt}/articles/{i:08d}.html" for i in range(n)]


def per_element(fn, items, repeat):
    """Best of `repeat` runs of fn(items), in ns per element. fn gets a fresh state each time."""
    best = float("inf")
    for _ in range(repeat):
        state = fn.setup()
        gc.collect()
        start = time.process_time()
        fn(state, items)
        best = min(best, time.process_time() - start)
    return best * 1e9 / len(items)


class Op:
    def __init__(self, setup, run):
        self.setup = setup
        self.run = run

    def __call__(self, state, items):
        self.run(state, items)


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


def scrapy_bench(n, repeat):
    """Scrapy's default duplicate filter (a set of fingerprints) against BloomDupeFilter:
    per-request cost of request_seen over n requests (each seen twice), and memory for 10^7
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
    for name, make in [
        ("Scrapy RFPDupeFilter (set)", lambda: RFPDupeFilter.from_crawler(crawler)),
        ("bloomkit BloomDupeFilter (blocked, p = 1e-4, 10^7 capacity)",
         lambda: BloomDupeFilter(fingerprinter=crawler.request_fingerprinter,
                                 capacity=10_000_000)),
        ("bloomkit BloomDupeFilter, shared local file (same filter, in place under the "
         "file's lock)",
         lambda: BloomDupeFilter(fingerprinter=crawler.request_fingerprinter,
                                 capacity=10_000_000, path=next(shared_files))),
    ]:
        best = float("inf")
        for _ in range(repeat):
            dupefilter = make()
            # New request objects each run: Scrapy caches a request's fingerprint.
            requests = [Request(u) for u in addresses] * 2
            gc.collect()
            start = time.process_time()
            for r in requests:
                dupefilter.request_seen(r)
            best = min(best, time.process_time() - start)
        if isinstance(getattr(dupefilter, "filter", None), bloomkit.MappedFilter):
            dupefilter.close("finished")
            # In the page cache (shared by every process that maps the file), not the heap.
            per_request = os.path.getsize(dupefilter.path) / 10_000_000
        elif hasattr(dupefilter, "filter"):
            per_request = dupefilter.filter.memory_bytes / 10_000_000
        else:
            fingerprints = [crawler.request_fingerprinter.fingerprint(r) for r in requests[:n]]
            fingerprints = [bytes(f) for f in fingerprints]  # fresh objects, as the filter keeps
            tracemalloc.start()
            held = set(fingerprints)
            size, _ = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            # The set's table plus the fingerprint objects it keeps alive.
            per_request = (size + sum(sys.getsizeof(f) for f in held)) / n
        rows.append((name, best * 1e9 / len(requests), per_request))
    for leftover in os.listdir(scratch):
        os.remove(os.path.join(scratch, leftover))
    os.rmdir(scratch)
    print(f"\nScrapy duplicate filters: {n:,} requests, each seen twice; best of {repeat}\n")
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
    args = parser.parse_args()
    n, p = int(args.n), args.fpp
    if args.scrapy:
        scrapy_bench(int(args.scrapy), args.repeat)
    present, absent = urls(n, "a"), urls(n, "b")
    print(f"n = {n:,} URLs (~{sum(map(len, present)) // n} bytes), p = {p}, "
          f"Python {platform.python_version()}, best of {args.repeat}\n")
    print("| contender | add (loop) | in (loop) | batch add | batch contains | bits/elem "
          "| measured FPR |")
    print("|---|---|---|---|---|---|---|")
    for name, make, add_batch, contains_batch, bits in contenders(n, p):
        if args.skip_slow and name == "pybloom-live":
            continue

        def filled():
            f = make()
            loop_add(f, present)
            return f

        add = per_element(Op(make, loop_add), present, args.repeat)
        full = filled()
        query = per_element(Op(lambda: full, loop_in), present, args.repeat)
        batch_add = (per_element(Op(make, add_batch), present, args.repeat)
                     if add_batch else None)
        batch_in = (per_element(Op(lambda: full, contains_batch), present, args.repeat)
                    if contains_batch else None)
        fp = sum(x in full for x in absent) / n
        cell = (lambda v: f"{v:,.0f} ns" if v is not None else "—")
        print(f"| {name} | {cell(add)} | {cell(query)} | {cell(batch_add)} | {cell(batch_in)} "
              f"| {bits(full) / n:.2f} | {fp:.4%} |")
        del full


if __name__ == "__main__":
    main()
