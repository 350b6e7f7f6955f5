"""README.md's Python section runs as written."""

import re

from scrapy.utils.test import get_crawler

import bloomkit
from bloomkit.scrapy import BloomDupeFilter
from conftest import ROOT, run_cli


def python_blocks():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Python"):]
    section = section[: section.index("\n## ", 1)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_quick_start_runs_and_the_cli_reads_its_file(tmp_path, monkeypatch, cli):
    quick_start, _ = python_blocks()
    monkeypatch.chdir(tmp_path)
    exec(compile(quick_start, "README.md", "exec"), {})
    assert "https://example.com/" in bloomkit.BloomFilter.load("seen.bloom")
    proc = run_cli(cli, "check", "seen.bloom", "https://example.com/")
    assert proc.stdout.decode().strip() == "https://example.com/"


def test_the_scrapy_settings_configure_the_duplicate_filter(tmp_path, monkeypatch):
    _, settings_block = python_blocks()
    settings = {}
    exec(compile(settings_block, "README.md", "exec"), settings)
    settings.pop("__builtins__")
    monkeypatch.chdir(tmp_path)
    crawler = get_crawler(settings_dict=settings)
    assert crawler.settings["DUPEFILTER_CLASS"] == "bloomkit.scrapy.BloomDupeFilter"
    dupefilter = BloomDupeFilter.from_crawler(crawler)
    assert dupefilter.path == "seen-requests.bloom"
    assert dupefilter.request_seen(scrapy_request()) is False
    dupefilter.close("finished")
    assert (tmp_path / "seen-requests.bloom").exists()


def scrapy_request():
    from scrapy.http import Request

    return Request("https://example.com/")


def test_the_package_docstring_example_runs(tmp_path, monkeypatch):
    doc = bloomkit.__doc__
    after = doc[doc.index("::\n") + 3:].lstrip("\n")
    block = after[: after.index("\n\n")]
    code = "\n".join(line[4:] for line in block.splitlines())
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "bloomkit/__init__.py", "exec"), {})
    assert "https://example.com/" in bloomkit.load("seen.bloom")
