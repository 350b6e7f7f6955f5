"""A Scrapy duplicate filter backed by a bloomkit Bloom filter.

Enable it in the project's settings::

    DUPEFILTER_CLASS = "bloomkit.scrapy.BloomDupeFilter"

It remembers request fingerprints (Scrapy's ``REQUEST_FINGERPRINTER_CLASS``) in a Bloom filter
instead of a Python set: about 3 bytes per request at the default false-positive rate instead
of about 100, and state that survives the process or is shared between processes.

Where the filter lives (settings, Scrapy style):

``BLOOMKIT_DUPEFILTER_REDIS_URL``
    e.g. ``"redis://127.0.0.1:6379/"``: the filter is kept in Redis, and every crawler
    process, on any machine, that uses the same URL and key shares it (each request is fetched
    by one of them). ``BLOOMKIT_DUPEFILTER_REDIS_KEY`` names it (default
    ``"%(spider)s-dupefilter"``, formatted with the spider's name).
``BLOOMKIT_DUPEFILTER_PATH``
    a local file (bloomkit's native format; the ``bloomkit`` CLI reads it), created if it does
    not exist. Default: ``requests.bloom`` in ``JOBDIR`` when that is set.

    With the ``blocked`` and ``classic`` kinds the file is used in place, memory-mapped and
    shared: each new request is recorded in the file under its lock before ``request_seen``
    answers (a request already in the file is answered from the mapping, without the lock),
    so any number of crawl processes on the machine can use one file at once (each request is
    fetched by one of them), and a crawl that stops, even by a crash, resumes without fetching
    again anything it fetched. The file's checksum is brought up to date when
    the spider closes and every ``BLOOMKIT_DUPEFILTER_SAVE_INTERVAL`` seconds (default 60).
    Its size is fixed: the capacity must cover every request of every crawl that uses it.

    A ``scalable`` filter (which grows, so cannot be changed in place) is loaded at start,
    saved atomically when the spider closes and every ``BLOOMKIT_DUPEFILTER_SAVE_INTERVAL``
    seconds while new requests arrive. One process at a time per file: a second one is
    refused with :class:`FilterFileBusyError` (processes that run at once share a scalable
    filter through Redis).

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

try:
    import fcntl
except ImportError:  # not on this system: the one-process rule is only documented there
    fcntl = None

from scrapy.dupefilters import BaseDupeFilter
from scrapy.utils.job import job_dir
from scrapy.utils.request import referer_str

import bloomkit
import bloomkit.redis

logger = logging.getLogger(__name__)
_monotonic = time.monotonic  # one lookup less per new request

class FilterFileBusyError(RuntimeError):
    """Another process uses this scalable filter's file (scalable filter files are used by one
    crawl process at a time; blocked and classic ones by any number)."""


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
        _check_settings(capacity, fpp, kind, save_interval)
        self.fingerprinter = fingerprinter
        self.path = path
        self.save_interval = save_interval
        self.debug = debug
        self.logdupes = True
        self.stats = stats
        self._dirty = False
        self._save_at = _monotonic() + save_interval  # when the next periodic save is due
        self._lock_file = None
        if redis_url:
            if kind == "scalable":
                self.filter = bloomkit.redis.ScalableRedisFilter(redis_url, redis_key, capacity, fpp)
            else:
                self.filter = bloomkit.redis.RedisFilter(redis_url, redis_key, capacity, fpp)
            self.path = None
            return
        if not path:
            self.filter = _LOCAL_KINDS[kind](capacity, fpp)
        elif kind == "scalable" or not _mappable(path):
            self._lock_whole_file(path)
            if os.path.exists(path):
                self.filter = bloomkit.load(path)
                logger.info("Resuming with %d requests seen before, from %s", len(self.filter), path)
                _warn_if_smaller(path, self.filter, capacity)
            else:
                self.filter = _LOCAL_KINDS[kind](capacity, fpp)
        else:
            # Blocked and classic files are changed in place, shared by every process that
            # maps them. Of several processes creating the file at once, one succeeds and the
            # others use its file.
            try:
                _LOCAL_KINDS[kind](capacity, fpp).save_new(path)
            except FileExistsError:
                pass
            self.filter = bloomkit.BloomFilter.open_mmap(path, writable=True)
            logger.info("Sharing %s (%s, about %d requests seen before)", path,
                        self.filter.kind, len(self.filter))
            _warn_if_smaller(path, self.filter, capacity)

    def _lock_whole_file(self, path: str) -> None:
        """Makes this process the only user of a scalable filter's file (the lock goes with the
        process, even if it dies): `FilterFileBusyError` if another one has it."""
        if fcntl is None:
            return
        self._lock_file = open(f"{path}.lock", "a+b")
        try:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            self._lock_file = None
            raise FilterFileBusyError(
                f"another crawl process uses the duplicate filter file {path}: a scalable filter "
                f"file is used by one process at a time (use the blocked or classic kind, which "
                f"many processes share in place, or a Redis filter)"
            ) from None

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
            capacity=_number(settings, "getint", "BLOOMKIT_DUPEFILTER_CAPACITY", 1_000_000),
            fpp=_number(settings, "getfloat", "BLOOMKIT_DUPEFILTER_FPP", 0.0001),
            kind=settings.get("BLOOMKIT_DUPEFILTER_KIND", "blocked"),
            path=path,
            save_interval=_number(settings, "getfloat", "BLOOMKIT_DUPEFILTER_SAVE_INTERVAL", 60.0),
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
            if _monotonic() >= self._save_at:
                try:
                    self.save()
                except OSError as e:
                    # The file keeps its previous contents (saves are atomic); the crawl goes
                    # on and the next interval (or the close) tries again.
                    logger.error("Could not save the duplicate filter to %s: %s", self.path, e)
        return False

    def save(self) -> None:
        """Writes the filter to its file now, if it has one: a whole-file save (atomic) for a
        scalable filter; for a shared one, whose requests are in the file already, the
        checksum is brought up to date and the changes flushed to disk."""
        self._save_at = _monotonic() + self.save_interval
        if self.path and self._dirty:
            if isinstance(self.filter, bloomkit.MappedFilter):
                self.filter.flush()
            else:
                self.filter.save(self.path)
            self._dirty = False

    def close(self, reason: str) -> None:
        try:
            self.save()
            if isinstance(self.filter, bloomkit.MappedFilter):
                self.filter.close()
        finally:
            if self._lock_file is not None:
                self._lock_file.close()  # releases the lock
                self._lock_file = None

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


def _number(settings, getter: str, name: str, default):
    """A numeric setting through Scrapy's `getint`/`getfloat`; a `ValueError` naming the setting
    when its value is not a number of that type (`"1e6"` for an integer, say)."""
    try:
        return getattr(settings, getter)(name, default)
    except (TypeError, ValueError):
        kind = "a whole number" if getter == "getint" else "a number"
        raise ValueError(f"{name} must be {kind}, got {settings.get(name)!r}") from None


def _warn_if_smaller(path: str, existing, capacity: int) -> None:
    """Warns when a filter file made earlier holds fewer requests than the capacity setting asks
    for now: a file keeps the size it was made with (a scalable one grows by itself)."""
    if isinstance(existing, bloomkit.ScalableBloomFilter):
        return
    made_for = existing.capacity
    if made_for is not None and made_for < capacity:
        logger.warning(
            "%s was made for %d requests, fewer than BLOOMKIT_DUPEFILTER_CAPACITY (%d): a filter "
            "file keeps its size, and its false-positive rate rises past %d requests (remove the "
            "file to start over with the new capacity, or use the scalable kind)",
            path, made_for, capacity, made_for)


def _check_settings(capacity, fpp, kind, save_interval) -> None:
    """Refuses bad sizing settings when the crawl starts (`ValueError` naming the setting), not
    when the first request arrives or the first save is due."""
    if kind not in _LOCAL_KINDS:
        raise ValueError(
            f"BLOOMKIT_DUPEFILTER_KIND must be one of {', '.join(_LOCAL_KINDS)}, got {kind!r}"
        )
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise ValueError(
            f"BLOOMKIT_DUPEFILTER_CAPACITY must be a whole number of requests of at least 1, "
            f"got {capacity!r}"
        )
    if not isinstance(fpp, (int, float)) or not 0 < fpp < 1:
        raise ValueError(
            f"BLOOMKIT_DUPEFILTER_FPP must be a probability between 0 and 1 (exclusive), "
            f"got {fpp!r}"
        )
    if not isinstance(save_interval, (int, float)) or not save_interval >= 0:
        raise ValueError(
            f"BLOOMKIT_DUPEFILTER_SAVE_INTERVAL must be a number of seconds of at least 0, "
            f"got {save_interval!r}"
        )


def _mappable(path: str) -> bool:
    """Whether the file at `path` can be shared in place (no file yet: it will be created of
    the configured kind; a file holding a scalable or counting filter cannot)."""
    try:
        bloomkit.BloomFilter.open_mmap(path).close()
    except FileNotFoundError:
        return True
    except ValueError:
        # Not a classic or blocked file, or a damaged one: loading it tells which (and raises
        # the error of a damaged one).
        return isinstance(bloomkit.load(path), (bloomkit.BloomFilter, bloomkit.BlockedBloomFilter))
    return True
