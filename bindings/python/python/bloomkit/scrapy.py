"""A Scrapy duplicate filter backed by a bloomkit Bloom filter.

Enable it in the project's settings::

    DUPEFILTER_CLASS = "bloomkit.scrapy.BloomDupeFilter"

It remembers request fingerprints (Scrapy's ``REQUEST_FINGERPRINTER_CLASS``) in a Bloom filter
instead of a Python set: about 2 bytes per request at the default false-positive rate instead
of about 100, and state that survives the process or is shared between processes.

Where the filter lives (settings, Scrapy style):

``BLOOMKIT_DUPEFILTER_REDIS_URL``
    e.g. ``"redis://127.0.0.1:6379/"``: the filter is kept in Redis, and every crawler
    process, on any machine, that uses the same URL and key shares it (each request is fetched
    by one of them). ``BLOOMKIT_DUPEFILTER_REDIS_KEY`` names it (default
    ``"%(spider)s-dupefilter"``, formatted with the spider's name).
``BLOOMKIT_DUPEFILTER_PATH``
    a local file (bloomkit's native format; the ``bloomkit`` CLI reads it). It is loaded at
    start if it exists, saved atomically when the spider closes and every
    ``BLOOMKIT_DUPEFILTER_SAVE_INTERVAL`` seconds (default 60) while new requests arrive, so a
    paused or interrupted crawl resumes without fetching again what it fetched before the
    last save. Default: ``requests.bloom`` in ``JOBDIR`` when that is set. One crawl
    process per file: processes that run at once share a filter through Redis.

Without either, the filter lives in memory for one crawl.

Sizing: ``BLOOMKIT_DUPEFILTER_CAPACITY`` (default 1,000,000 requests),
``BLOOMKIT_DUPEFILTER_FPP`` (default 0.0001: the probability that a new request is taken for a
duplicate and skipped), ``BLOOMKIT_DUPEFILTER_KIND``: ``"blocked"`` (default, fastest),
``"classic"`` or ``"scalable"`` (grows past the capacity, keeping the FPR). ``DUPEFILTER_DEBUG``
logs every filtered request, as Scrapy's own filter does.
"""

from __future__ import annotations

import logging
import os
import time

from scrapy.dupefilters import BaseDupeFilter
from scrapy.utils.job import job_dir
from scrapy.utils.request import referer_str

import bloomkit
import bloomkit.redis

logger = logging.getLogger(__name__)

_LOCAL_KINDS = {
    "blocked": bloomkit.BlockedBloomFilter,
    "classic": bloomkit.BloomFilter,
    "scalable": bloomkit.ScalableBloomFilter,
}


class BloomDupeFilter(BaseDupeFilter):
    """Scrapy ``DUPEFILTER_CLASS`` keeping request fingerprints in a bloomkit filter (in a
    local file, in Redis, or in memory; see the module documentation for the settings)."""

    def __init__(
        self,
        *,
        fingerprinter,
        capacity: int = 1_000_000,
        fpp: float = 0.0001,
        kind: str = "blocked",
        path: str | None = None,
        save_interval: float = 60.0,
        redis_url: str | None = None,
        redis_key: str = "scrapy-dupefilter",
        debug: bool = False,
        stats=None,
    ) -> None:
        self.fingerprinter = fingerprinter
        self.path = path
        self.save_interval = save_interval
        self.debug = debug
        self.logdupes = True
        self.stats = stats
        self._dirty = False
        self._last_save = time.monotonic()
        if redis_url:
            if kind == "scalable":
                self.filter = bloomkit.redis.ScalableRedisFilter(redis_url, redis_key, capacity, fpp)
            else:
                self.filter = bloomkit.redis.RedisFilter(redis_url, redis_key, capacity, fpp)
            self.path = None
        else:
            if kind not in _LOCAL_KINDS:
                raise ValueError(
                    f"BLOOMKIT_DUPEFILTER_KIND must be one of {', '.join(_LOCAL_KINDS)}, got {kind!r}"
                )
            if path and os.path.exists(path):
                self.filter = bloomkit.load(path)
                logger.info("Resuming with %d requests seen before, from %s", len(self.filter), path)
            else:
                self.filter = _LOCAL_KINDS[kind](capacity, fpp)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        path = settings.get("BLOOMKIT_DUPEFILTER_PATH")
        jobdir = job_dir(settings)
        if not path and jobdir:
            path = os.path.join(jobdir, "requests.bloom")
        spider = getattr(crawler, "spider", None)
        spider_name = getattr(spider, "name", None) or "scrapy"
        key = settings.get("BLOOMKIT_DUPEFILTER_REDIS_KEY", "%(spider)s-dupefilter")
        return cls(
            fingerprinter=crawler.request_fingerprinter,
            capacity=settings.getint("BLOOMKIT_DUPEFILTER_CAPACITY", 1_000_000),
            fpp=settings.getfloat("BLOOMKIT_DUPEFILTER_FPP", 0.0001),
            kind=settings.get("BLOOMKIT_DUPEFILTER_KIND", "blocked"),
            path=path,
            save_interval=settings.getfloat("BLOOMKIT_DUPEFILTER_SAVE_INTERVAL", 60.0),
            redis_url=settings.get("BLOOMKIT_DUPEFILTER_REDIS_URL"),
            redis_key=key % {"spider": spider_name},
            debug=settings.getbool("DUPEFILTER_DEBUG"),
            stats=crawler.stats,
        )

    def request_seen(self, request) -> bool:
        """Whether the request was (probably) seen before; records it if not."""
        if self.filter.check_and_add(self.fingerprinter.fingerprint(request)):
            return True
        if self.path:
            self._dirty = True
            if time.monotonic() - self._last_save >= self.save_interval:
                try:
                    self.save()
                except OSError as e:
                    # The file keeps its previous contents (saves are atomic); the crawl goes
                    # on and the next interval (or the close) tries again.
                    logger.error("Could not save the duplicate filter to %s: %s", self.path, e)
        return False

    def save(self) -> None:
        """Writes the filter to its file now (atomically), if it has one."""
        self._last_save = time.monotonic()
        if self.path and self._dirty:
            self.filter.save(self.path)
            self._dirty = False

    def close(self, reason: str) -> None:
        self.save()

    def log(self, request, spider) -> None:
        if self.debug:
            logger.debug(
                "Filtered duplicate request: %(request)s (referer: %(referer)s)",
                {"request": request, "referer": referer_str(request)},
                extra={"spider": spider},
            )
        elif self.logdupes:
            logger.debug(
                "Filtered duplicate request: %(request)s - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)",
                {"request": request},
                extra={"spider": spider},
            )
            self.logdupes = False
        stats = self.stats or getattr(getattr(spider, "crawler", None), "stats", None)
        if stats is not None:
            stats.inc_value("dupefilter/filtered")
