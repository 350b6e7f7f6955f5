#!/bin/bash
# The measurement behind docs/CLI.md, "The default kind": add / check / dedup with classic
# and blocked file filters, in memory (a 12 MiB filter, 10 million lines) and large (a
# 1.6-1.7 GiB filter, 2 million lines), warm and cold (page cache dropped: needs root).
# Prints elapsed and CPU seconds and page faults. Uses about 2.5 GB in $DIR, deleted at the end.
#
#   cargo build --release -p bloomkit-cli
#   bash crates/bloomkit-cli/measure/default_kind.sh small|large
set -euo pipefail
B=${B:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release/bloomkit}
DIR=${DIR:-$(mktemp -d)}
cd "$DIR"
trap 'rm -f "$DIR"/*.bloom "$DIR"/keys*.txt "$DIR"/time.out "$DIR"/err.out' EXIT
if [ ! -f keys.txt ]; then
  python3 -c '
import random
random.seed(7)
with open("keys.txt", "w") as f:
    for i in range(10_000_000):
        f.write("https://host%d.example/path/%016x\n" % (i % 1000, random.getrandbits(64)))
'
  head -2000000 keys.txt > keys2m.txt
fi
t() {
  local label=$1; shift
  /usr/bin/time -f "%e %U %S %F %R" -o time.out "$@" >/dev/null 2>err.out || true
  read -r e u s maj min < <(tail -1 time.out)
  echo "$label elapsed=${e}s cpu=$(echo "$u + $s" | bc)s majflt=$maj minflt=$min $(head -c 200 err.out)"
}
cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }
small() {
  for kind in classic blocked; do
    rm -f s.bloom d.bloom
    $B create s.bloom -n 1e7 -p 0.01 --kind $kind -q
    t "mem $kind add-10M" $B add s.bloom -q -f keys.txt
    t "mem $kind check-10M" $B check -c s.bloom -f keys.txt
    t "mem $kind dedup-10M" sh -c "$B dedup d.bloom -n 1e7 -p 0.01 --kind $kind -q < keys.txt"
  done
}
large() {
  for kind in classic blocked; do
    rm -f l.bloom
    $B create l.bloom -n 1.4e9 -p 0.01 --kind $kind -q
    $B info l.bloom > /dev/null; sync
    t "large-warm $kind add-2M" $B add l.bloom -q -f keys2m.txt
    t "large-warm $kind check-2M" $B check -c l.bloom -f keys2m.txt
    t "large-warm $kind dedup-2M" sh -c "$B dedup l.bloom -q < keys2m.txt"
    cold; t "large-cold $kind check-2M" $B check -c l.bloom -f keys2m.txt
    cold; t "large-cold $kind add-2M" $B add l.bloom -q -f keys2m.txt
    cold; t "large-cold $kind dedup-2M" sh -c "$B dedup l.bloom -q < keys2m.txt"
    rm -f l.bloom
  done
}
"$@"
