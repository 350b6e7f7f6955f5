"""Bloom filters kept in Redis and shared by every process that opens them by name.

- ``RedisFilter``: bloomkit's register-blocked layout (one 64-bit word per element: one
  round trip per add or check, batches per segment). The ``bloomkit`` CLI opens the same
  filter as ``redis://HOST:PORT/NAME``.
- ``ScalableRedisFilter``: grows by layers; concurrent clients agree on the layers.
- ``RedissonFilter``: bit-exact with Java Redisson's ``RBloomFilter``.
- ``CountingRedisFilter``: 4-bit counters, so ``remove`` works (the CLI's ``--kind counting``).
- ``TimeWindowRedisFilter``: what was added within the last ``window`` seconds, in
  generations that Redis expires by itself (the CLI's ``--window``).

All are blocking; network waits release the GIL. Failures of the server or the network raise
``bloomkit.RedisError``; bad parameters ``ValueError``.
"""

from ._bloomkit import (
    CountingRedisFilter,
    RedisError,
    RedisFilter,
    RedissonFilter,
    ScalableRedisFilter,
    SharedFilter,
    TimeWindowRedisFilter,
)

__all__ = [
    "CountingRedisFilter",
    "RedisError",
    "RedisFilter",
    "RedissonFilter",
    "ScalableRedisFilter",
    "SharedFilter",
    "TimeWindowRedisFilter",
]
