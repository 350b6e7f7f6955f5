#!/usr/bin/env bash
# A first real job for the bloomkit CLI, with no set-up: deduplicate a crawler's URL stream.
#
# Generates 200,000 URLs drawn from 50,000 distinct pages, pipes them through
# `bloomkit dedup` (a first-seen filter kept in a file), and compares the result with the
# exact answer from `sort -u`. Run from anywhere: bash crates/bloomkit-cli/demo.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z "${BLOOMKIT:-}" ]]; then
    cargo build -q -p bloomkit-cli
    BLOOMKIT="$(pwd)/target/debug/bloomkit"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

awk 'BEGIN { srand(42); for (i = 0; i < 200000; i++) printf "https://example.com/page/%d\n", int(rand() * 50000) }' \
    > "$work/urls.txt"
echo "+ bloomkit dedup seen.bloom --capacity 100000 --fpp 0.0001 < urls.txt > new-urls.txt"
"$BLOOMKIT" dedup "$work/seen.bloom" --capacity 100000 --fpp 0.0001 < "$work/urls.txt" > "$work/new-urls.txt"

kept=$(wc -l < "$work/new-urls.txt")
exact=$(sort -u "$work/urls.txt" | wc -l)
echo "kept $kept first-seen URLs out of $(wc -l < "$work/urls.txt"); sort -u finds $exact distinct"
echo "(a Bloom filter never keeps a repeat; it may drop a new URL with probability <= 0.0001)"
echo "+ bloomkit info seen.bloom"
"$BLOOMKIT" info "$work/seen.bloom"
echo "+ bloomkit check seen.bloom https://example.com/page/7 https://example.com/never-crawled"
"$BLOOMKIT" check "$work/seen.bloom" https://example.com/page/7 https://example.com/never-crawled || true
