"""bloomkit: Bloom filters backed by Rust.

Filters answer "definitely not added" or "probably added" in far less memory than a set.
Elements are ``str``, ``bytes`` (or ``bytearray``) and ``int`` (a signed 64-bit value),
encoded exactly as the Rust library's ``Key`` does, so a filter built here answers the same
in Rust, in the ``bloomkit`` command-line tool and in Redis::

    import bloomkit
    seen = bloomkit.BloomFilter(1_000_000, 0.01)
    seen.add("https://example.com/")
    assert "https://example.com/" in seen
    seen.save("seen.bloom")   # the CLI reads it: bloomkit check seen.bloom URL

Kinds: ``BloomFilter`` (classic; Guava/Go/Redisson presets), ``BlockedBloomFilter``
(fastest), ``AtomicBloomFilter`` and ``AtomicBlockedBloomFilter`` (lock-free adds from many
threads), ``CountingBloomFilter`` and ``DLeftCountingFilter`` (``remove``),
``ScalableBloomFilter`` (grows), ``CountWindowFilter`` and ``TimeWindowFilter`` (forget: the
last N insertions, the last span of time). ``Bitmap`` and ``TwoBitMap`` are exact sets of
the integers of a range.
``bloomkit.redis`` has filters shared through Redis, ``bloomkit.scrapy`` a Scrapy duplicate
filter.
"""

from ._bloomkit import (
    AtomicBlockedBloomFilter,
    AtomicBloomFilter,
    Bitmap,
    BlockedBloomFilter,
    BloomFilter,
    CountingBloomFilter,
    CountWindowFilter,
    DLeftCountingFilter,
    Filter,
    MappedFilter,
    RedisError,
    ScalableBloomFilter,
    TimeWindowFilter,
    TwoBitMap,
    load,
)

__all__ = [
    "AtomicBlockedBloomFilter",
    "AtomicBloomFilter",
    "Bitmap",
    "BlockedBloomFilter",
    "BloomFilter",
    "CountingBloomFilter",
    "CountWindowFilter",
    "DLeftCountingFilter",
    "Filter",
    "MappedFilter",
    "RedisError",
    "ScalableBloomFilter",
    "TimeWindowFilter",
    "TwoBitMap",
    "load",
]
