"""Cross-language answers: files written from Python are read by the real `bloomkit` CLI
binary, and files the CLI wrote are read from Python, with the same answers."""

import pytest

import bloomkit
from conftest import run_cli

PRESENT = [f"https://example.com/item/{i}" for i in range(2000)]
ABSENT = [f"https://example.org/other/{i}" for i in range(2000)]

PY_KINDS = {
    "classic": lambda: bloomkit.BloomFilter(10_000, 0.001),
    "blocked": lambda: bloomkit.BlockedBloomFilter(10_000, 0.001),
    "counting": lambda: bloomkit.CountingBloomFilter(10_000, 0.001),
    "scalable": lambda: bloomkit.ScalableBloomFilter(500, 0.001),
    "atomic-classic": lambda: bloomkit.AtomicBloomFilter(10_000, 0.001),
}


def cli_check(cli, path, items, *extra):
    """The items the CLI says are probably present (read from standard input)."""
    proc = run_cli(cli, "check", path, *extra, input="\n".join(items).encode() + b"\n")
    return set(proc.stdout.decode().splitlines())


@pytest.mark.parametrize("kind", sorted(PY_KINDS))
def test_the_cli_answers_like_python_for_a_python_file(cli, tmp_path, kind):
    f = PY_KINDS[kind]()
    f.add_many(PRESENT)
    path = tmp_path / "py.bloom"
    f.save(path)
    probe = PRESENT + ABSENT
    expected = {item for item, yes in zip(probe, f.contains_many(probe)) if yes}
    assert set(PRESENT) <= expected
    assert cli_check(cli, path, probe) == expected


@pytest.mark.parametrize("kind", ["classic", "blocked", "counting", "scalable"])
def test_python_answers_like_the_cli_for_a_cli_file(cli, tmp_path, kind):
    path = tmp_path / "cli.bloom"
    run_cli(cli, "-q", "create", path, "-n", "10000", "-p", "0.001", "--kind", kind)
    run_cli(cli, "-q", "add", path, input="\n".join(PRESENT).encode() + b"\n")
    f = bloomkit.BloomFilter.load(path) if kind == "classic" else bloomkit.load(path)
    assert f.kind == kind
    assert (f.capacity, f.fpp) == (10_000, 0.001) or kind == "scalable"
    probe = PRESENT + ABSENT
    answers = f.contains_many(probe)
    assert answers[: len(PRESENT)] == [True] * len(PRESENT)
    assert {item for item, yes in zip(probe, answers) if yes} == cli_check(cli, path, probe)


def test_int_elements_match_the_cli_i64_items(cli, tmp_path):
    path = tmp_path / "ints.bloom"
    f = bloomkit.BloomFilter(1000, 0.0001)
    f.add_many([-5, 0, 42, 2**63 - 1])
    f.save(path)
    found = cli_check(cli, path, ["-5", "0", "42", str(2**63 - 1), "7", "43"], "--items", "i64")
    assert found == {"-5", "0", "42", str(2**63 - 1)}


def test_bytes_elements_match_the_cli_hex_items(cli, tmp_path):
    path = tmp_path / "bytes.bloom"
    run_cli(cli, "-q", "create", path, "-n", "1000", "-p", "0.0001")
    run_cli(cli, "-q", "add", path, "--items", "hex", "00ff10", "deadbeef")
    f = bloomkit.load(path)  # the CLI's default kind
    assert bytes.fromhex("00ff10") in f and bytes.fromhex("deadbeef") in f
    assert b"\x00\xff" not in f


@pytest.mark.parametrize("scheme,fmt", [("guava", "guava"), ("go", "go")])
def test_foreign_exports_are_identical_to_the_cli_exports(cli, tmp_path, scheme, fmt):
    path = tmp_path / "s.bloom"
    run_cli(cli, "-q", "create", path, "-n", "5000", "-p", "0.01", "--scheme", scheme)
    run_cli(cli, "-q", "add", path, input="\n".join(PRESENT).encode() + b"\n")
    out = tmp_path / "export.bin"
    run_cli(cli, "-q", "export", path, "--format", fmt, "-o", out)
    f = bloomkit.BloomFilter(5000, 0.01, preset=scheme)
    f.add_many(PRESENT)
    ours = f.to_guava() if fmt == "guava" else f.to_go()
    assert ours == out.read_bytes()
    # And the CLI imports what Python exported.
    imported = tmp_path / "imported.bloom"
    (tmp_path / "py.bin").write_bytes(ours)
    run_cli(cli, "-q", "import", tmp_path / "py.bin", "--format", fmt, imported)
    assert cli_check(cli, imported, PRESENT[:50] + ABSENT[:50]) >= set(PRESENT[:50])
