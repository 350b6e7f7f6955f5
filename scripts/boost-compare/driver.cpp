// The Boost.Bloom side of bloomkit's string-key comparison (scripts/boost-compare/run links it
// into the same process as bloomkit, which calls the two functions below). It only calls
// Boost.Bloom's public API; the headers come from outside the repository (see `run`).
//
// It makes the same keys as crates/bloomkit/benches/support/keys.rs (a line-for-line copy of
// its generator; `bb_setup` returns the checksum, which the caller compares with bloomkit's),
// each a separate std::string as C++ users hold them, and builds
// boost::bloom::filter<std::string, 1, fast_multiblock32<8>> with the caller's number of bits
// (bloomkit's for the same n and p), with two hashes: Boost's default boost::hash<std::string>,
// and XXH3-64 (bloomkit's), marked avalanching.
#include <boost/bloom.hpp>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

static std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static const char ALPHABET[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/";

static std::string url_key(std::uint64_t i) {
  std::uint64_t r = splitmix(i);
  std::size_t len = 20 + r % 81;
  std::string s;
  s.reserve(len);
  s += "https://";
  for (int shift = 7; shift >= 0; --shift) s += ALPHABET[((i >> (4 * shift)) & 15) + 26];
  s += '/';
  std::uint64_t state = r;
  while (s.size() < len) {
    state = splitmix(state);
    for (int j = 0; j < 10; ++j)
      if (s.size() < len) s += ALPHABET[(state >> (6 * j)) & 63];
  }
  return s;
}

static std::uint64_t checksum(const std::vector<std::string>& keys) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (auto& k : keys) {
    for (unsigned char b : k) h = (h ^ b) * 0x100000001b3ull;
    h = (h ^ 0) * 0x100000001b3ull;
  }
  return h;
}

struct Xxh3 {
  using is_avalanching = std::true_type;
  std::size_t operator()(const std::string& s) const { return XXH3_64bits(s.data(), s.size()); }
};

using clk = std::chrono::steady_clock;

using FB = boost::bloom::filter<std::string, 1, boost::bloom::fast_multiblock32<8>>;
using FX = boost::bloom::filter<std::string, 1, boost::bloom::fast_multiblock32<8>, 0, Xxh3>;

namespace {
std::vector<std::string> members, strangers;
FB* fb;
FB* fb_scratch;
FX* fx;
FX* fx_scratch;
}  // namespace

// Makes keys 0..min(n, 1e7) (members) and n..n + min(n, 1e7) (strangers), builds the filters
// of `bits` bits and adds keys 0..n. Returns the checksum of the first 1000 members; writes the
// measured FPR (XXH3 filter, on every stranger) to *fpr.
extern "C" std::uint64_t bb_setup(std::uint64_t n, std::uint64_t bits, double* fpr) {
  std::uint64_t pool = std::min<std::uint64_t>(n, 10000000);
  members.reserve(pool);
  strangers.reserve(pool);
  for (std::uint64_t i = 0; i < pool; ++i) members.push_back(url_key(i));
  for (std::uint64_t i = n; i < n + pool; ++i) strangers.push_back(url_key(i));
  fb = new FB(bits);
  fb_scratch = new FB(bits);
  fx = new FX(bits);
  fx_scratch = new FX(bits);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i < pool) {
      fb->insert(members[i]);
      fx->insert(members[i]);
    } else {
      std::string k = url_key(i);
      fb->insert(k);
      fx->insert(k);
    }
  }
  std::uint64_t fp = 0;
  for (auto& k : strangers) fp += fx->may_contain(k);
  *fpr = double(fp) / double(strangers.size());
  std::vector<std::string> first(members.begin(),
                                 members.begin() + std::min<std::uint64_t>(pool, 1000));
  return checksum(first);
}

// Runs one timed operation and returns nanoseconds per key. `which`: 0 bulk boost::hash,
// 1 single boost::hash, 2 bulk XXH3, 3 single XXH3. `what`: 0 queries absent keys
// strangers[start..start + count], 1 present keys members[start..], 2 inserts members[0..count]
// into an emptied filter (the emptying is not timed). Bulk: may_contain(first, last, f) and
// insert(first, last); single: one call per key.
extern "C" double bb_run(int which, int what, std::uint64_t start, std::uint64_t count) {
  bool ins = what == 2;
  auto& keys = what == 0 ? strangers : members;
  auto b = keys.begin() + (ins ? 0 : start);
  auto e = b + count;
  if (ins) {
    if (which < 2) fb_scratch->clear();
    else fx_scratch->clear();
  }
  std::uint64_t c = 0;
  auto t = clk::now();
  switch (which) {
    case 0:
      if (ins) fb_scratch->insert(b, e);
      else fb->may_contain(b, e, [&](const std::string&, bool res) { c += res; });
      break;
    case 1:
      if (ins) for (auto it = b; it != e; ++it) fb_scratch->insert(*it);
      else for (auto it = b; it != e; ++it) c += fb->may_contain(*it);
      break;
    case 2:
      if (ins) fx_scratch->insert(b, e);
      else fx->may_contain(b, e, [&](const std::string&, bool res) { c += res; });
      break;
    default:
      if (ins) for (auto it = b; it != e; ++it) fx_scratch->insert(*it);
      else for (auto it = b; it != e; ++it) c += fx->may_contain(*it);
  }
  double dt = std::chrono::duration<double, std::nano>(clk::now() - t).count();
  asm volatile("" : : "r"(c) : "memory");
  return dt / double(count);
}
