"""A real Scrapy crawl of a local HTTP server whose pages link to each other with many
duplicates, with bloomkit.scrapy.BloomDupeFilter as DUPEFILTER_CLASS."""

import collections
import shutil
import http.server
import json
import subprocess
import sys
import threading
import uuid

import pytest

import scrapy  # noqa: E402  (installed by test.sh; a missing Scrapy fails loudly)
from scrapy.http import Request  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

import bloomkit  # noqa: E402
from bloomkit.scrapy import BloomDupeFilter, FilterFileBusyError  # noqa: E402

PAGES = 150


def links(i):
    """Each page links to five others, itself and page 0, several of them twice."""
    targets = [(i + 1) % PAGES, (i * 7) % PAGES, (i * 13 + 5) % PAGES, 0, i, (i + 1) % PAGES]
    return targets + [(i * 7) % PAGES, (i + 2) % PAGES]


class Site:
    """A threaded HTTP server on a free loopback port that counts the fetches of each path."""

    def __init__(self):
        self.fetches = collections.Counter()
        lock = threading.Lock()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with lock:
                    site.fetches[self.path] += 1
                if not self.path.startswith("/page/"):
                    self.send_error(404)
                    return
                i = int(self.path.rsplit("/", 1)[1])
                body = "".join(f'<a href="/page/{j}">page {j}</a>\n' for j in links(i))
                data = f"<html><body>{body}</body></html>".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site():
    s = Site()
    yield s
    s.close()


CRAWL = '''
import json, sys
import scrapy
from scrapy.crawler import CrawlerProcess

start_url, settings_json, stats_path = sys.argv[1:4]


class Pages(scrapy.Spider):
    name = "pages"

    async def start(self):
        # dont_filter=False: the start page goes through the duplicate filter too, so a
        # resumed crawl fetches nothing it fetched before.
        yield scrapy.Request(start_url, dont_filter=False)

    def start_requests(self):  # Scrapy before 2.13
        yield scrapy.Request(start_url, dont_filter=False)

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)


settings = {
    "DUPEFILTER_CLASS": "bloomkit.scrapy.BloomDupeFilter",
    "ROBOTSTXT_OBEY": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "CONCURRENT_REQUESTS": 8,
    "RETRY_ENABLED": False,
}
settings.update(json.loads(settings_json))
process = CrawlerProcess(settings)
crawler = process.create_crawler(Pages)
process.crawl(crawler)
process.start()
with open(stats_path, "w") as out:
    json.dump(crawler.stats.get_stats(), out, default=str)
'''


def crawl(tmp_path, start_url, settings):
    """Runs a real crawl in a new process (Twisted's reactor runs once per process); returns
    the crawl's Scrapy stats."""
    script = tmp_path / "crawl.py"
    script.write_text(CRAWL)
    stats = tmp_path / f"stats-{uuid.uuid4().hex}.json"
    proc = subprocess.run(
        [sys.executable, str(script), start_url, json.dumps(settings), str(stats)],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(stats.read_text())


def page_paths():
    return {f"/page/{i}" for i in range(PAGES)}


# PAGES = 150 distinct requests at FPR 1e-6: the chance that any new page is wrongly taken
# for a duplicate (and not fetched) is at most 150 * 1e-6.
FPP = 1e-6


def test_a_file_backed_crawl_fetches_each_page_once_and_nothing_after_a_restart(site, tmp_path):
    path = tmp_path / "seen.bloom"
    settings = {"BLOOMKIT_DUPEFILTER_PATH": str(path), "BLOOMKIT_DUPEFILTER_FPP": FPP,
                "BLOOMKIT_DUPEFILTER_CAPACITY": 10_000}
    stats = crawl(tmp_path, site.url + "/page/0", settings)
    assert set(site.fetches) == page_paths()
    assert set(site.fetches.values()) == {1}, "some page was fetched twice"
    # Every page links to 8 pages, so almost all of the 150 * 8 requests were duplicates.
    assert stats["dupefilter/filtered"] >= PAGES * 8 - PAGES
    assert path.exists()
    saved = bloomkit.load(path)
    assert type(saved) is bloomkit.BlockedBloomFilter
    assert 140 <= len(saved) <= 160

    site.fetches.clear()
    crawl(tmp_path, site.url + "/page/0", settings)
    assert sum(site.fetches.values()) == 0, f"fetched again after restart: {dict(site.fetches)}"
    # A crawl that starts elsewhere on the same site still fetches nothing already seen.
    crawl(tmp_path, site.url + "/page/77", settings)
    assert sum(site.fetches.values()) == 0


def test_jobdir_keeps_the_filter_by_default(site, tmp_path):
    jobdir = tmp_path / "job"
    settings = {"JOBDIR": str(jobdir), "BLOOMKIT_DUPEFILTER_FPP": FPP,
                "BLOOMKIT_DUPEFILTER_KIND": "scalable", "BLOOMKIT_DUPEFILTER_CAPACITY": 20}
    crawl(tmp_path, site.url + "/page/3", settings)
    assert set(site.fetches) == page_paths() and set(site.fetches.values()) == {1}
    assert type(bloomkit.load(jobdir / "requests.bloom")) is bloomkit.ScalableBloomFilter
    site.fetches.clear()
    crawl(tmp_path, site.url + "/page/3", settings)
    assert sum(site.fetches.values()) == 0


def test_crawlers_sharing_a_redis_filter_fetch_each_page_once(site, tmp_path, redis_url):
    settings = {"BLOOMKIT_DUPEFILTER_REDIS_URL": redis_url, "BLOOMKIT_DUPEFILTER_FPP": FPP,
                "BLOOMKIT_DUPEFILTER_CAPACITY": 10_000,
                "BLOOMKIT_DUPEFILTER_REDIS_KEY": "crawl-" + uuid.uuid4().hex}
    # Two crawler processes at once, from different start pages.
    threads = [threading.Thread(target=crawl, args=(tmp_path, site.url + f"/page/{s}", settings))
               for s in (0, 100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(site.fetches) == page_paths()
    assert set(site.fetches.values()) == {1}, "some page was fetched by both crawlers"
    site.fetches.clear()
    crawl(tmp_path, site.url + "/page/42", settings)
    assert sum(site.fetches.values()) == 0


def test_crawlers_sharing_a_local_file_fetch_each_page_once(site, tmp_path):
    path = tmp_path / "shared.bloom"
    settings = {"BLOOMKIT_DUPEFILTER_PATH": str(path), "BLOOMKIT_DUPEFILTER_FPP": FPP,
                "BLOOMKIT_DUPEFILTER_CAPACITY": 10_000}
    # Two crawler processes at once on one file (which neither finds: both try to create
    # it), from different start pages.
    errors = []

    def run(start):
        try:
            crawl(tmp_path, site.url + f"/page/{start}", settings)
        except BaseException as e:  # reported below: a thread's exception is otherwise lost
            errors.append(e)

    threads = [threading.Thread(target=run, args=(s,)) for s in (0, 100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert set(site.fetches) == page_paths()
    assert set(site.fetches.values()) == {1}, "some page was fetched by both crawlers"
    # Both closed cleanly: the file is sealed (its checksum verifies) and holds every page.
    shared = bloomkit.load(path)
    assert type(shared) is bloomkit.BlockedBloomFilter and 140 <= len(shared) <= 160
    site.fetches.clear()
    crawl(tmp_path, site.url + "/page/42", settings)
    assert sum(site.fetches.values()) == 0


def test_a_second_process_on_a_scalable_filter_file_is_refused(tmp_path):
    path = tmp_path / "scalable.bloom"
    crawler = get_crawler(settings_dict={"BLOOMKIT_DUPEFILTER_PATH": str(path),
                                         "BLOOMKIT_DUPEFILTER_KIND": "scalable"})
    first = BloomDupeFilter.from_crawler(crawler)
    assert first.request_seen(Request("http://a.example/1")) is False
    # Another user of the file (a lock is per open file, so this stands for a second process).
    with pytest.raises(FilterFileBusyError, match="another crawl process"):
        BloomDupeFilter.from_crawler(crawler)
    first.close("finished")
    second = BloomDupeFilter.from_crawler(crawler)
    assert second.request_seen(Request("http://a.example/1")) is True
    second.close("finished")


def test_a_blocked_filter_file_is_shared_in_place(tmp_path):
    path = tmp_path / "in-place.bloom"
    crawler = get_crawler(settings_dict={"BLOOMKIT_DUPEFILTER_PATH": str(path)})
    first = BloomDupeFilter.from_crawler(crawler)
    second = BloomDupeFilter.from_crawler(crawler)
    assert isinstance(first.filter, bloomkit.MappedFilter) and first.filter.writable
    assert first.request_seen(Request("http://a.example/1")) is False
    # In the file at once: the other user sees it, before any save.
    assert second.request_seen(Request("http://a.example/1")) is True
    assert second.request_seen(Request("http://a.example/2")) is False
    assert first.request_seen(Request("http://a.example/2")) is True
    first.close("finished")
    second.close("finished")
    assert not bloomkit.BloomFilter.open_mmap(path).dirty
    bloomkit.load(path)  # sealed: the checksum verifies


@pytest.mark.parametrize("kind", ["blocked", "classic", "scalable"])
def test_a_file_made_smaller_than_the_capacity_setting_is_named_in_a_warning(tmp_path, caplog, kind):
    path = str(tmp_path / "small.bloom")
    settings = {"BLOOMKIT_DUPEFILTER_PATH": path, "BLOOMKIT_DUPEFILTER_KIND": kind,
                "BLOOMKIT_DUPEFILTER_CAPACITY": 1000}
    BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings)).close("finished")
    assert "fewer than BLOOMKIT_DUPEFILTER_CAPACITY" not in caplog.text
    settings["BLOOMKIT_DUPEFILTER_CAPACITY"] = 10**6
    BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings)).close("finished")
    warned = "was made for 1000 requests, fewer than BLOOMKIT_DUPEFILTER_CAPACITY" in caplog.text
    assert warned == (kind != "scalable")  # a scalable filter grows by itself


def test_the_filter_is_saved_at_the_interval_while_crawling(tmp_path):
    path = tmp_path / "interval.bloom"
    crawler = get_crawler(settings_dict={
        "BLOOMKIT_DUPEFILTER_PATH": str(path),
        "BLOOMKIT_DUPEFILTER_SAVE_INTERVAL": 0,  # save on every new request
    })
    dupefilter = BloomDupeFilter.from_crawler(crawler)
    assert dupefilter.request_seen(Request("http://a.example/1")) is False
    assert path.exists()  # before close
    assert dupefilter.request_seen(Request("http://a.example/1")) is True
    assert dupefilter.request_seen(Request("http://a.example/1#fragment")) is True  # same fingerprint
    assert dupefilter.request_seen(Request("http://a.example/2")) is False
    reopened = BloomDupeFilter.from_crawler(crawler)
    assert reopened.request_seen(Request("http://a.example/2")) is True


def test_a_failing_periodic_save_does_not_stop_the_crawl(tmp_path, caplog):
    directory = tmp_path / "removed-dir"
    directory.mkdir()
    path = directory / "seen.bloom"
    crawler = get_crawler(settings_dict={
        "BLOOMKIT_DUPEFILTER_PATH": str(path),
        "BLOOMKIT_DUPEFILTER_KIND": "scalable",  # saved whole
        "BLOOMKIT_DUPEFILTER_SAVE_INTERVAL": 0,
    })
    dupefilter = BloomDupeFilter.from_crawler(crawler)
    shutil.rmtree(directory)  # every save fails from here on
    assert dupefilter.request_seen(Request("http://a.example/1")) is False
    assert "Could not save the duplicate filter" in caplog.text
    assert dupefilter.request_seen(Request("http://a.example/1")) is True
    directory.mkdir()
    dupefilter.close("finished")  # the close saves what the failed saves could not
    assert bloomkit.load(path).contains_many(
        [crawler.request_fingerprinter.fingerprint(Request("http://a.example/1"))]) == [True]


def test_bad_settings_are_refused(tmp_path):
    crawler = get_crawler(settings_dict={"BLOOMKIT_DUPEFILTER_KIND": "nope"})
    with pytest.raises(ValueError, match="BLOOMKIT_DUPEFILTER_KIND"):
        BloomDupeFilter.from_crawler(crawler)
    crawler = get_crawler(settings_dict={"BLOOMKIT_DUPEFILTER_FPP": 2})
    with pytest.raises(ValueError):
        BloomDupeFilter.from_crawler(crawler)


@pytest.mark.parametrize("setting,value", [
    ("BLOOMKIT_DUPEFILTER_CAPACITY", 0),
    ("BLOOMKIT_DUPEFILTER_CAPACITY", -5),
    ("BLOOMKIT_DUPEFILTER_CAPACITY", "many"),
    ("BLOOMKIT_DUPEFILTER_CAPACITY", "1e6"),
    ("BLOOMKIT_DUPEFILTER_FPP", "low"),
    ("BLOOMKIT_DUPEFILTER_FPP", 0),
    ("BLOOMKIT_DUPEFILTER_FPP", 1),
    ("BLOOMKIT_DUPEFILTER_FPP", -0.1),
    ("BLOOMKIT_DUPEFILTER_FPP", "nan"),
    ("BLOOMKIT_DUPEFILTER_SAVE_INTERVAL", -1),
    ("BLOOMKIT_DUPEFILTER_SAVE_INTERVAL", "nan"),
    ("BLOOMKIT_DUPEFILTER_SAVE_INTERVAL", "1 minute"),
])
@pytest.mark.parametrize("kind", ["blocked", "scalable"])
def test_bad_sizing_settings_are_refused_at_startup_naming_the_setting(tmp_path, setting, value, kind):
    # With a file or without: the crawl does not start (a NaN interval would never save, a
    # negative one would save on every request; a scalable file would only fail at its first save).
    for path in (None, tmp_path / "f.bloom"):
        settings = {setting: value, "BLOOMKIT_DUPEFILTER_KIND": kind}
        if path:
            settings["BLOOMKIT_DUPEFILTER_PATH"] = str(path)
        with pytest.raises(ValueError, match=f"^{setting} must be"):
            BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings))
        assert path is None or not path.exists()


def test_a_bad_kind_is_refused_before_connecting_to_redis():
    # Port 9 (discard) on loopback: nothing listens there, and the kind is checked first.
    crawler = get_crawler(settings_dict={"BLOOMKIT_DUPEFILTER_KIND": "nope",
                                         "BLOOMKIT_DUPEFILTER_REDIS_URL": "redis://127.0.0.1:9/"})
    with pytest.raises(ValueError, match="BLOOMKIT_DUPEFILTER_KIND"):
        BloomDupeFilter.from_crawler(crawler)


def test_a_path_that_cannot_hold_the_filter_is_refused_at_startup(tmp_path):
    directory = tmp_path / "a-directory.bloom"
    directory.mkdir()
    for kind in ("blocked", "classic", "scalable"):
        crawler = get_crawler(settings_dict={"BLOOMKIT_DUPEFILTER_PATH": str(directory),
                                             "BLOOMKIT_DUPEFILTER_KIND": kind})
        with pytest.raises(OSError):
            BloomDupeFilter.from_crawler(crawler)
        crawler = get_crawler(settings_dict={
            "BLOOMKIT_DUPEFILTER_PATH": str(tmp_path / "missing-dir" / "f.bloom"),
            "BLOOMKIT_DUPEFILTER_KIND": kind})
        with pytest.raises(OSError):
            BloomDupeFilter.from_crawler(crawler)
