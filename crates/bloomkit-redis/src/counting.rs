//! [`CountingRedisFilter`]: a counting Bloom filter in Redis, shared by every process that opens
//! it: 4-bit saturating counters, so elements can be removed across processes.
//!
//! ## Layout
//! `m` counters of 4 bits are split into equal segments (one Redis string each, at most
//! `max_segment_bits / 4` counters); counter `j` of a segment is the field `u4 #j` of
//! `BITFIELD` (bits `4j .. 4j+3`, most significant first). An element lives in one segment,
//! `reduce(reverse_bits(h2), segments)`, and inside it at the `k` counters of the core library's
//! classic probing over the segment's counters: the [`Spec`] of an in-memory filter of that
//! size with the scheme the layout's stored name fixes. With one segment (up to 2²⁵ counters by
//! default) the layout is the classic counting filter's.
//!
//! - [`COUNTING_MIXED_SCHEME`] (`counters4-mixed`), every new filter: [`Scheme::MixedDouble`],
//!   the in-memory default.
//! - [`COUNTING_SCHEME`] (`counters4`), filters made before it: [`Scheme::EnhancedDouble`], the
//!   in-memory default when the layout was made. They keep opening with it and keep their
//!   positions. That scheme adds about `2/(m·k)` to the FPR (its probes collapse onto a few
//!   counters when the step lands near a simple fraction of `m`), which matters for small
//!   filters at low rates: measured 3.6× the target at `n = 20, p = 10⁻⁴` (`m` = 449,
//!   `k` = 7) and 2.5× at `n = 200, p = 10⁻⁵` (`m` = 5521, `k` = 9), where
//!   `counters4-mixed` matches the theory (test `small_counting_filters_at_low_rates` in
//!   `tests/counting.rs`).
//!
//! Sizing is the core library's classic model ([`bloomkit::math::bits_for_hashes`]): the
//! smallest `k` whose counter count is within 20 % of the smallest over all `k` (each counter
//! costs a `BITFIELD` subcommand; at 1 %: `k = 4`, 10.5 counters per element, where `k = 7`
//! needs 9.6).
//!
//! ## Operations
//! - **insert**: per segment and 256 elements, `MULTI; EXISTS <segment>; BITFIELD <segment>
//!   OVERFLOW SAT INCRBY u4 #j 1 …; EXEC`: atomic, counters stop at 15. If the segment did not
//!   exist (the filter was deleted, or its keys lost), the client deletes the key the
//!   `BITFIELD` created and fails with [`Error::Gone`]. On a cluster, a script does the same
//!   with the check first (the identity guard of plain filters), getting the counters `#j`
//!   one argument each. An element is
//!   new if one of its counters was 0, and reports saturation if one is now 15.
//! - **remove**: one script per segment and 256 elements. It first decrements everything with
//!   `OVERFLOW FAIL` (a counter at 0 is left alone and answers nil); if no counter refused and
//!   none was saturated, that is the result. Otherwise it undoes those decrements and replays
//!   the elements one by one on the counters' values: an element is removed only if each of its
//!   counters is saturated or at least the number of its probes on it; else it is refused and
//!   changes nothing. Check and decrement happen in the one script: atomic.
//! - **contains**: `BITFIELD_RO … GET u4 <4j> …` per segment and 256 counters, or, where a
//!   batch's counters lie close together, `GETRANGE` of the bytes that hold them (as the
//!   plain filter's checks), pipelined with `EXISTS` of the segment key (gone:
//!   [`Error::Gone`]).
//!
//! See [`bloomkit::counting`] for why removing an element that was never inserted can cause
//! false negatives: remove only what you know you inserted.

use crate::conn::{script_cmd, Connection};
use crate::error::{Error, Result};
use crate::filter::{delete_meta, new_id, FilterOptions};
use crate::keys::{self, SegmentKeys};
use crate::meta::{
    check_segment_count, create_with_byte_segments, head_fields, incompatible, Meta, Stored,
};
use crate::reads::{self, Field};
use crate::segments::{self, Keyspace};
use bloomkit::math::Params;
use bloomkit::probe::register::RegisterLayout;
use bloomkit::probe::{reduce, Digest, Scheme};
use bloomkit::{Hashing, Incompatibility, Key, Spec};
use futures_util::future::try_join_all;
use redis::Script;
use std::sync::LazyLock;

/// The `kind` field of a counting filter's metadata.
pub const COUNTING_KIND: &str = "counting";

/// The layout name (the metadata's `scheme` field) of counting filters made before
/// [`COUNTING_MIXED_SCHEME`]: their counters are probed with [`Scheme::EnhancedDouble`]. Such
/// filters keep opening with it and keep their positions; new filters get
/// [`COUNTING_MIXED_SCHEME`].
pub const COUNTING_SCHEME: &str = "counters4";

/// The layout name (the metadata's `scheme` field) of new counting filters: the segments and
/// 4-bit counters of [`COUNTING_SCHEME`], probed with [`Scheme::MixedDouble`] (the in-memory
/// default), which holds the FPR target of small filters at low rates, where
/// [`Scheme::EnhancedDouble`] adds about `2/(m·k)` (see the module docs).
pub const COUNTING_MIXED_SCHEME: &str = "counters4-mixed";

/// The layout names this version opens and their probing schemes; new filters get the first.
const COUNTING_LAYOUTS: [(&str, Scheme); 2] = [
    (COUNTING_MIXED_SCHEME, Scheme::MixedDouble),
    (COUNTING_SCHEME, Scheme::EnhancedDouble),
];

/// A counter's largest value: it saturates there.
pub const COUNTER_MAX: i64 = 15;

/// The most hash functions sizing considers.
const MAX_COUNTING_HASHES: u32 = 24;

/// Lua function `counters(op, value, list)`: runs `BITFIELD KEYS[1] <op> u4 <list[x]> <value>
/// ...` (`op` = `INCRBY` or `SET`; `value` a string, or a table indexed like `list`), or
/// `BITFIELD_RO ... GET u4 <list[x]> ...` for `op` = `GET`, in slices of 1,500 subcommands
/// (Lua's `unpack` limit is about 8,000 values), and returns the replies. Only the remove
/// script's rare path (a refusal or a saturated counter) builds subcommands in Lua: every value
/// Lua builds costs Redis a conversion back.
macro_rules! counters_fn {
    () => {
        r#"
local function counters(op, value, list)
  local n = #list
  local out = {}
  local i = 1
  while i <= n do
    local j = math.min(n, i + 1499)
    local t = {}
    local c = 0
    for x = i, j do
      if op == 'GET' then
        t[c + 1] = 'GET'; t[c + 2] = 'u4'; t[c + 3] = list[x]; c = c + 3
      else
        local v = value
        if type(value) == 'table' then v = value[x] end
        t[c + 1] = op; t[c + 2] = 'u4'; t[c + 3] = list[x]; t[c + 4] = v; c = c + 4
      end
    end
    local r = redis.call(op == 'GET' and 'BITFIELD_RO' or 'BITFIELD', KEYS[1], unpack(t))
    for x = 1, #r do out[#out + 1] = r[x] end
    i = j + 1
  end
  return out
end
"#
    };
}

/// `KEYS[1]` = segment; `ARGV[1]` = guard flag; `ARGV[2..]` = `INCRBY u4 #<j> 1` per counter.
/// Runs them with `OVERFLOW SAT` (saturating at 15) and returns the new values.
static ADD_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(crate::segments::guarded_script!(concat!(
        crate::segments::bitfield_fn!(),
        "return bitfield('BITFIELD', KEYS[1], ARGV, 2, 'SAT')\n"
    )))
});

/// Counters per `BITFIELD` call in the remove script: its subcommands are written out in the
/// script's source (no table built per call), and with the command name, key and `OVERFLOW
/// FAIL` they make 4 + 4·7 = 32 arguments, as many as Redis 7.0 converts from Lua into cached
/// objects (more go through an allocation each).
const REMOVE_CHUNK: usize = 7;

/// `KEYS[1]` = segment; `ARGV[1]` = guard flag; `ARGV[2]` = k; `ARGV[3..]` = counters `#<j>`,
/// `k` per element. Returns one byte per element: '1' removed, '0' refused (and nothing of it
/// changed). See the module docs.
///
/// Decrements [`REMOVE_CHUNK`] counters per `BITFIELD` call with their subcommands spelled out
/// in the source: measured about 35 % less server time than one `BITFIELD` of all counters
/// built in a Lua table or unpacked from `ARGV` (Redis 7.0 converts every argument from Lua
/// into a new object unless it is among a call's first 32, and interns every string it
/// pushes into Lua).
static REMOVE_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(&remove_script()));

/// The source of [`REMOVE_SCRIPT`].
fn remove_script() -> String {
    let chunk: Vec<String> = (0..REMOVE_CHUNK)
        .map(|d| format!("'INCRBY', 'u4', ARGV[i + {d}], '-1'"))
        .collect();
    format!(
        r#"{guard}{counters}
local k = tonumber(ARGV[2])
local first = 3
local n = #ARGV
local i = first
local failed = nil
local r
while i <= n do
  if i + {last} <= n then
    r = redis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'FAIL', {chunk})
  else
    local t = {{}}
    for x = i, n do
      t[#t + 1] = 'INCRBY'; t[#t + 1] = 'u4'; t[#t + 1] = ARGV[x]; t[#t + 1] = '-1'
    end
    r = redis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'FAIL', unpack(t))
  end
  for x = 1, #r do
    if r[x] == false or r[x] == 14 then failed = i break end
  end
  if failed then break end
  i = i + #r
end
local total = n - first + 1
if not failed then return string.rep('1', total / k) end
-- A counter at 0 refused, or a saturated one (15) went down: undo the decrements that
-- happened (+1 restores each exactly), then replay the elements one by one.
local undo = {{}}
for x = first, failed - 1 do undo[#undo + 1] = ARGV[x] end
for x = 1, #r do
  if r[x] ~= false then undo[#undo + 1] = ARGV[failed + x - 1] end
end
if #undo > 0 then counters('INCRBY', '1', undo) end
local function at(c) return ARGV[first + c - 1] end
local list = {{}}
for c = 1, total do list[c] = at(c) end
local vals = counters('GET', nil, list)
local cur = {{}}
for c = 1, total do
  if cur[at(c)] == nil then cur[at(c)] = vals[c] end
end
local out = {{}}
local changed = {{}}
for e = 0, total / k - 1 do
  local need = {{}}
  for c = 1, k do
    local o = at(e * k + c)
    need[o] = (need[o] or 0) + 1
  end
  local ok = true
  for o, m in pairs(need) do
    if cur[o] ~= 15 and cur[o] < m then ok = false end
  end
  if ok then
    for o, m in pairs(need) do
      if cur[o] ~= 15 then cur[o] = cur[o] - m; changed[o] = true end
    end
    out[e + 1] = '1'
  else
    out[e + 1] = '0'
  end
end
local set = {{}}
local values = {{}}
for o, _ in pairs(changed) do
  set[#set + 1] = o
  values[#set] = cur[o]
end
if #set > 0 then counters('SET', values, set) end
return table.concat(out)
"#,
        guard = crate::segments::guarded_script!(""),
        counters = counters_fn!(),
        last = REMOVE_CHUNK - 1,
        chunk = chunk.join(", "),
    )
}

/// The shape of a counting filter in Redis: segments of 4-bit counters and `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CountingLayout {
    segments: u32,
    segment_counters: u64,
    hashes: u32,
}

impl CountingLayout {
    /// The layout for `n` elements at FPR `p` with segments of at most `max_segment_bits` bits
    /// (see the module docs for the choice of `k`).
    pub fn for_capacity(n: u64, p: f64, max_segment_bits: u64) -> Result<Self> {
        let sizes: Vec<(u32, u64)> = (1..=MAX_COUNTING_HASHES)
            .filter_map(|k| Some((k, bloomkit::math::bits_for_hashes(n, p, k).ok()?)))
            .collect();
        let best = sizes.iter().map(|&(_, m)| m).min().ok_or_else(|| {
            Error::Core(bloomkit::math::check_fpp(p).err().unwrap_or(
                bloomkit::Error::InvalidParameters(format!("no counting layout reaches p = {p}")),
            ))
        })?;
        let (k, m) = sizes
            .into_iter()
            .find(|&(_, m)| m as f64 <= 1.2 * best as f64)
            .expect("the smallest size is within 20 % of itself");
        Self::new(m, k, max_segment_bits)
    }

    /// At least `counters` counters (rounded up to equal segments of at most
    /// `max_segment_bits / 4` counters) and `hashes` counters per element.
    pub fn new(counters: u64, hashes: u32, max_segment_bits: u64) -> Result<Self> {
        // The register layout checks the same limits (segment size, k, non-zero size).
        let words = RegisterLayout::new(counters.div_ceil(16), hashes, max_segment_bits)?;
        let per_segment = max_segment_bits / 4;
        let segments = u32::try_from(counters.div_ceil(per_segment)).map_err(|_| {
            bloomkit::Error::TooLarge {
                bits: counters.saturating_mul(4),
                limit: "more than 2^32 segments",
            }
        })?;
        Self::from_shape(
            segments,
            counters.div_ceil(u64::from(segments)),
            words.hashes(),
        )
    }

    /// A layout from its stored shape.
    pub fn from_shape(segments: u32, segment_counters: u64, hashes: u32) -> Result<Self> {
        if segments == 0 || segment_counters == 0 {
            return Err(bloomkit::Error::ZeroBits.into());
        }
        if segment_counters.saturating_mul(4) > bloomkit::probe::register::MAX_SEGMENT_BITS {
            return Err(bloomkit::Error::TooLarge {
                bits: segment_counters.saturating_mul(4),
                limit: "a segment holds at most 2^32 bits",
            }
            .into());
        }
        if hashes == 0 {
            return Err(bloomkit::Error::ZeroHashes.into());
        }
        if hashes > MAX_COUNTING_HASHES {
            return Err(bloomkit::Error::TooManyHashes {
                hashes: hashes.into(),
                max: MAX_COUNTING_HASHES,
            }
            .into());
        }
        Ok(CountingLayout {
            segments,
            segment_counters,
            hashes,
        })
    }

    /// Number of segments.
    pub fn segments(&self) -> u32 {
        self.segments
    }

    /// Counters per segment.
    pub fn segment_counters(&self) -> u64 {
        self.segment_counters
    }

    /// Counters in all, `m`.
    pub fn counters(&self) -> u64 {
        u64::from(self.segments) * self.segment_counters
    }

    /// Counters per element, `k`.
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// Bytes in Redis when every segment is fully grown (`m / 2`).
    pub fn bytes(&self) -> u64 {
        u64::from(self.segments) * self.segment_counters.div_ceil(2)
    }

    /// The modelled FPR after `n` distinct elements (the classic formula).
    pub fn expected_fpp(&self, n: u64) -> f64 {
        bloomkit::math::expected_fpp(self.counters(), self.hashes, n)
    }
}

/// Where an element's counters are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountingProbe {
    /// Segment index.
    pub segment: u32,
    /// Counter indices inside the segment, `k` of them (a counter may repeat).
    pub counters: Vec<u64>,
}

/// What [`CountingRedisFilter::insert_batch_report`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inserted {
    /// Per element: one of its counters was 0 before (it was new).
    pub new: Vec<bool>,
    /// Per element: one of its counters is now saturated at 15 (its count is "at least 15"
    /// from now on, and that counter never decreases again).
    pub saturated: Vec<bool>,
}

/// What [`CountingRedisFilter::info`] reports.
#[derive(Debug, Clone, PartialEq)]
pub struct CountingInfo {
    /// The filter's name.
    pub name: String,
    /// Hash function id.
    pub hashing: String,
    /// The filter id.
    pub id: String,
    /// The layout.
    pub layout: CountingLayout,
    /// The capacity it was sized for.
    pub capacity: u64,
    /// The target FPR it was sized for.
    pub fpp: f64,
    /// Counters that are not 0.
    pub nonzero_counters: u64,
    /// Counters saturated at 15.
    pub saturated_counters: u64,
    /// Estimated number of distinct elements present.
    pub estimated_count: f64,
    /// Estimated FPR now, from the non-zero counters.
    pub estimated_fpp: f64,
}

/// A batch's counters (`k` per element, flat) and its elements grouped by segment.
struct Batch {
    k: usize,
    counters: Vec<u64>,
    /// Each element's segment.
    segs: Vec<u32>,
    groups: Vec<(u32, Vec<usize>)>,
}

impl Batch {
    /// Element `i`'s counters.
    fn of(&self, i: usize) -> &[u64] {
        &self.counters[i * self.k..(i + 1) * self.k]
    }

    /// Writes `<before…> #<j> <after…>` for every counter `j` of the elements `idx`.
    fn write_each(&self, cmd: &mut redis::Cmd, idx: &[usize], before: &[&str], after: &[&str]) {
        let mut at = Vec::with_capacity(24);
        for &i in idx {
            for &c in self.of(i) {
                at.clear();
                at.push(b'#');
                segments::push_decimal(&mut at, c);
                for a in before {
                    cmd.arg(*a);
                }
                cmd.arg(&at[..]);
                for a in after {
                    cmd.arg(*a);
                }
            }
        }
    }

    /// Writes `INCRBY u4 #<j> <by>` for every counter of the elements `idx`.
    fn write_ops(&self, cmd: &mut redis::Cmd, idx: &[usize], by: &str) {
        self.write_each(cmd, idx, &["INCRBY", "u4"], &[by]);
    }

    /// Writes `#<j>` for every counter of the elements `idx`.
    fn write_counters(&self, cmd: &mut redis::Cmd, idx: &[usize]) {
        self.write_each(cmd, idx, &[], &[]);
    }
}

/// A counting Bloom filter in Redis (async API). See the module docs.
#[derive(Clone)]
pub struct CountingRedisFilter {
    conn: Connection,
    name: String,
    layout: CountingLayout,
    spec: Spec,
    capacity: u64,
    fpp: f64,
    id: String,
    keys: SegmentKeys,
    layout_name: &'static str,
}

debug_fields!(CountingRedisFilter {
    name,
    layout,
    layout_name
});

impl CountingRedisFilter {
    /// Creates the counting filter `name` for `n` elements at FPR `p` (or opens it if it
    /// exists with the same parameters, keeping its layout name: a [`COUNTING_SCHEME`]
    /// filter stays one), hashing with XXH3. New filters get [`COUNTING_MIXED_SCHEME`].
    pub async fn create(conn: &Connection, name: &str, n: u64, p: f64) -> Result<Self> {
        Self::create_with(conn, name, n, p, FilterOptions::default()).await
    }

    /// [`create`](Self::create) with options (hashing and segment size).
    pub async fn create_with(
        conn: &Connection,
        name: &str,
        n: u64,
        p: f64,
        options: FilterOptions,
    ) -> Result<Self> {
        keys::check_name(name)?;
        let layout = CountingLayout::for_capacity(n, p, options.max_segment_bits)?;
        check_segment_count(layout.segments(), layout.counters().saturating_mul(4))?;
        let id = new_id()?;
        let mut fields = head_fields(COUNTING_KIND, &id, COUNTING_LAYOUTS[0].0, &options);
        fields.extend([
            ("segments".into(), layout.segments().to_string()),
            (
                "segment_counters".into(),
                layout.segment_counters().to_string(),
            ),
            ("hashes".into(), layout.hashes().to_string()),
            ("capacity".into(), n.to_string()),
            ("fpp".into(), p.to_string()),
        ]);
        // The segment keys exist from creation on (one zero byte; the identity guard).
        let created =
            create_with_byte_segments(conn, name, &id, &fields, layout.segments()).await?;
        let f = Self::open_with(conn, name, options.hashing.clone()).await?;
        if !created && f.layout != layout {
            return Err(incompatible(Incompatibility::Bits(
                f.layout.counters(),
                layout.counters(),
            )));
        }
        Ok(f)
    }

    /// Opens an existing counting filter by name.
    pub async fn open(conn: &Connection, name: &str) -> Result<Self> {
        crate::meta::open(conn, name, None).await
    }

    /// Opens an existing counting filter with this hash function (it must match the stored
    /// hashing id).
    pub async fn open_with(conn: &Connection, name: &str, hashing: Hashing) -> Result<Self> {
        crate::meta::open(conn, name, Some(hashing)).await
    }

    /// The filter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The filter id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The layout.
    pub fn layout(&self) -> &CountingLayout {
        &self.layout
    }

    /// The stored layout name (the metadata's `scheme` field), which fixes the probing:
    /// [`COUNTING_MIXED_SCHEME`] for filters made by this version, [`COUNTING_SCHEME`] for
    /// older ones.
    pub fn layout_name(&self) -> &'static str {
        self.layout_name
    }

    /// The probing scheme over a segment's counters: [`Scheme::MixedDouble`] for
    /// [`COUNTING_MIXED_SCHEME`], [`Scheme::EnhancedDouble`] for [`COUNTING_SCHEME`].
    pub fn scheme(&self) -> Scheme {
        self.spec.scheme()
    }

    /// The key of segment `s`.
    pub fn segment_key(&self, s: u32) -> String {
        self.keys.segment(s)
    }

    fn key_of(&self) -> impl Fn(u32) -> String + Sync + '_ {
        move |s| self.keys.segment(s)
    }

    /// Where an element's counters are.
    pub fn probe<K: Key + ?Sized>(&self, key: &K) -> CountingProbe {
        let mut counters = Vec::with_capacity(self.layout.hashes() as usize);
        let segment = self.probe_into(key, &mut counters);
        CountingProbe { segment, counters }
    }

    /// Appends the element's `k` counters to `counters`; returns its segment.
    fn probe_into<K: Key + ?Sized>(&self, key: &K, counters: &mut Vec<u64>) -> u32 {
        let d: Digest = self.spec.digest(key);
        self.spec.for_each_position(&d, |i| {
            counters.push(i);
            true
        });
        reduce(d.h2.reverse_bits(), u64::from(self.layout.segments())) as u32
    }

    /// Every element's segment and counters (`k` per element, flat), and the elements
    /// grouped by segment, at most [`MAX_PER_COMMAND`](segments::MAX_PER_COMMAND) per group.
    fn probe_batch<K: Key>(&self, keys: &[K]) -> Batch {
        let k = self.layout.hashes() as usize;
        let mut counters = Vec::with_capacity(keys.len() * k);
        let segs: Vec<u32> = keys
            .iter()
            .map(|key| self.probe_into(key, &mut counters))
            .collect();
        let groups = segments::groups_by(segs.len(), |i| segs[i]);
        Batch {
            k,
            counters,
            segs,
            groups,
        }
    }

    /// Adds one occurrence of an element; `true` if it was new (a counter was 0).
    pub async fn insert<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.insert_batch(&[key]).await?[0])
    }

    /// Adds one occurrence of each element; returns whether each was new.
    pub async fn insert_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        Ok(self.insert_batch_report(keys).await?.new)
    }

    /// Adds one occurrence of each element (one atomic command per segment and 256 elements,
    /// all pipelined); reports which were new and which reached a saturated counter.
    pub async fn insert_batch_report<K: Key>(&self, keys: &[K]) -> Result<Inserted> {
        let b = self.probe_batch(keys);
        let futs = b
            .groups
            .iter()
            .map(|(seg, idx)| self.add_group(&b, *seg, idx));
        let replies = segments::join_writes(futs).await?;
        let mut new = vec![false; keys.len()];
        let mut saturated = vec![false; keys.len()];
        for ((_, idx), values) in b.groups.iter().zip(replies) {
            if values.len() != idx.len() * b.k {
                return Err(segments::unexpected("BITFIELD reply length"));
            }
            for (&i, v) in idx.iter().zip(values.chunks_exact(b.k)) {
                new[i] = v.contains(&1);
                saturated[i] = v.contains(&COUNTER_MAX);
            }
        }
        Ok(Inserted { new, saturated })
    }

    /// Adds one to the counters of the elements `idx` of segment `seg`; the new values.
    ///
    /// Standalone: `MULTI; EXISTS <segment>; BITFIELD <segment> OVERFLOW SAT INCRBY u4 #j 1 …;
    /// EXEC` (atomic, and no Lua: a script costs Redis about twice the `BITFIELD`'s own time,
    /// converting every argument into Lua and back). If the segment did not exist, the
    /// `BITFIELD` just created it for a deleted (or lost) filter: the key is deleted again and
    /// the add fails with [`Error::Gone`], as the guarded script would. On a cluster (where
    /// a transaction's keys must share a slot, which they do, but a failed `EXISTS` cannot be
    /// undone by another node's client) the guarded [`ADD_SCRIPT`].
    async fn add_group(&self, b: &Batch, seg: u32, idx: &[usize]) -> Result<Vec<i64>> {
        let key = self.segment_key(seg);
        let args = 4 * b.k * idx.len();
        if self.conn.is_cluster() {
            let mut cmd = script_cmd(&ADD_SCRIPT, &[&key], 1 + args);
            cmd.arg("1");
            b.write_ops(&mut cmd, idx, "1");
            return self
                .conn
                .eval(&ADD_SCRIPT, &cmd)
                .await
                .map_err(|e| e.about(&self.name));
        }
        let mut bf = redis::Cmd::with_capacity(4 + args, 64 + 4 * args);
        bf.arg("BITFIELD").arg(&key).arg("OVERFLOW").arg("SAT");
        b.write_ops(&mut bf, idx, "1");
        segments::write_if_exists(&self.conn, &key, &self.name, bf).await
    }

    /// Removes one occurrence of an element; refused with
    /// [`bloomkit::Error::NotPresent`] (as [`Error::Core`]), changing nothing, when one of its
    /// counters is 0 (it was certainly never inserted, or already removed).
    pub async fn remove<K: Key + ?Sized>(&self, key: &K) -> Result<()> {
        if self.remove_batch(&[key]).await?[0] {
            Ok(())
        } else {
            Err(Error::Core(bloomkit::Error::NotPresent))
        }
    }

    /// Removes one occurrence of each element, in order; returns for each whether it was
    /// removed (`false`: refused, nothing of it changed; see [`remove`](Self::remove)).
    /// Each segment's part of the batch is one atomic script.
    pub async fn remove_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let b = &self.probe_batch(keys);
        let futs = b.groups.iter().map(|(seg, idx)| async move {
            let key = self.segment_key(*seg);
            let mut cmd = script_cmd(&REMOVE_SCRIPT, &[&key], 2 + b.k * idx.len());
            cmd.arg("1").arg(b.k);
            b.write_counters(&mut cmd, idx);
            let flags: Vec<u8> = self
                .conn
                .eval(&REMOVE_SCRIPT, &cmd)
                .await
                .map_err(|e| e.about(&self.name))?;
            if flags.len() != idx.len() {
                return Err(segments::unexpected("remove script reply length"));
            }
            Ok(flags.into_iter().map(|f| f == b'1').collect())
        });
        let flags = try_join_all(futs).await?;
        Ok(segments::ungroup(&b.groups, flags, keys.len()))
    }

    /// Reads every element's counters, `k` per element, flat: one pipeline per segment with
    /// the reads the plain filter's checks use (`BITFIELD_RO GET u4` per counter, or byte
    /// ranges where the batch's counters lie close together) and `EXISTS` of the segment.
    async fn read_counters<K: Key>(&self, keys: &[K]) -> Result<(usize, Vec<i64>)> {
        let b = &self.probe_batch(keys);
        let by_segment = segments::by_segment(keys.len(), |i| b.segs[i]);
        let futs = by_segment.iter().map(|(seg, idx)| async move {
            let key = self.segment_key(*seg);
            // Field `t·k + j`: counter `j` of element `idx[t]`.
            let fields: Vec<Field> = idx
                .iter()
                .flat_map(|&i| b.of(i))
                .map(|&c| Field {
                    offset: 4 * c,
                    width: 4,
                })
                .collect();
            let mut exists = redis::cmd("EXISTS");
            exists.arg(&key);
            let mut values = vec![0i64; fields.len()];
            let exists = reads::read_then(&self.conn, &key, &fields, Some(exists), |f, value| {
                values[f] = value as i64
            })
            .await?;
            if segments::parse::<i64>(exists.unwrap_or(redis::Value::Nil))? == 0 {
                return Err(Error::Gone(self.name.clone()));
            }
            Ok(values)
        });
        let replies = try_join_all(futs).await?;
        let mut out = vec![0; keys.len() * b.k];
        for ((_, idx), values) in by_segment.iter().zip(replies) {
            for (&i, v) in idx.iter().zip(values.chunks_exact(b.k)) {
                out[i * b.k..(i + 1) * b.k].copy_from_slice(v);
            }
        }
        Ok((b.k, out))
    }

    /// Whether the element may be present (all its counters non-zero).
    pub async fn contains<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.contains_batch(&[key]).await?[0])
    }

    /// Checks a batch.
    pub async fn contains_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let (k, counters) = self.read_counters(keys).await?;
        Ok(counters
            .chunks_exact(k)
            .map(|c| c.iter().all(|&v| v > 0))
            .collect())
    }

    /// The estimated number of occurrences of each element: the minimum of its counters
    /// (15 means "at least 15").
    pub async fn count_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<u8>> {
        let (k, counters) = self.read_counters(keys).await?;
        Ok(counters
            .chunks_exact(k)
            .map(|c| c.iter().copied().min().unwrap_or(0).clamp(0, COUNTER_MAX) as u8)
            .collect())
    }

    /// Parameters and fill (reads every segment, 4 MiB per command).
    pub async fn info(&self) -> Result<CountingInfo> {
        const CHUNK: u64 = 4 << 20;
        let (mut nonzero, mut saturated) = (0u64, 0u64);
        let seg_bytes = self.layout.segment_counters().div_ceil(2);
        for s in 0..self.layout.segments() {
            let key = self.segment_key(s);
            let mut off = 0;
            while off < seg_bytes {
                let end = (off + CHUNK).min(seg_bytes) - 1;
                let mut pipe = redis::pipe();
                pipe.cmd("GETRANGE")
                    .arg(&key)
                    .arg(off)
                    .arg(end)
                    .cmd("EXISTS")
                    .arg(&key);
                let (bytes, exists): (Vec<u8>, i64) = self.conn.pipe(&pipe).await?;
                if exists == 0 {
                    return Err(Error::Gone(self.name.clone()));
                }
                for b in bytes {
                    for nibble in [b >> 4, b & 15] {
                        nonzero += u64::from(nibble != 0);
                        saturated += u64::from(i64::from(nibble) == COUNTER_MAX);
                    }
                }
                off = end + 1;
            }
        }
        let m = self.layout.counters();
        let k = self.layout.hashes();
        Ok(CountingInfo {
            name: self.name.clone(),
            hashing: self.spec.hashing().id(),
            id: self.id.clone(),
            layout: self.layout,
            capacity: self.capacity,
            fpp: self.fpp,
            nonzero_counters: nonzero,
            saturated_counters: saturated,
            estimated_count: bloomkit::math::estimate_count(m, k, nonzero),
            estimated_fpp: bloomkit::math::fpp_from_fill(nonzero as f64 / m as f64, k),
        })
    }

    /// Removes every element (each segment back to one zero byte; a segment deleted
    /// meanwhile stays deleted).
    pub async fn clear(&self) -> Result<()> {
        let key_of = self.key_of();
        let shape = RegisterLayout::from_shape(self.layout.segments(), 1, 1)?;
        segments::clear(&self.keyspace(&key_of), &shape).await
    }

    fn keyspace<'a>(&'a self, key_of: &'a (dyn Fn(u32) -> String + Sync)) -> Keyspace<'a> {
        Keyspace::new(&self.conn, &self.name, key_of, true)
    }

    /// The segment keys.
    pub(crate) fn segment_keys(&self) -> Vec<String> {
        (0..self.layout.segments())
            .map(|s| self.segment_key(s))
            .collect()
    }

    /// Deletes the filter: its metadata (only if it is still this filter, else
    /// [`Error::Gone`]), then its segments.
    pub async fn delete(self) -> Result<()> {
        delete_meta(&self.conn, &self.name, Some(&self.id)).await?;
        let key_of = self.key_of();
        segments::delete(&self.keyspace(&key_of), self.layout.segments()).await
    }

    /// The connection.
    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }
}

impl Stored for CountingRedisFilter {
    fn from_meta(m: &Meta<'_>) -> Result<Self> {
        let (hashing, i) = m.head_among(COUNTING_KIND, &COUNTING_LAYOUTS.map(|(name, _)| name))?;
        let (layout_name, scheme) = COUNTING_LAYOUTS[i];
        let (id, keys, segments) = m.layout2("a counting filter")?;
        let layout =
            CountingLayout::from_shape(segments, m.num("segment_counters")?, m.num("hashes")?)
                .map_err(|e| m.corrupt(e))?;
        let spec = Spec::new(
            Params {
                bits: layout.segment_counters(),
                hashes: layout.hashes(),
            },
            scheme,
            hashing,
        )?;
        Ok(CountingRedisFilter {
            conn: m.conn.clone(),
            name: m.name.into(),
            layout,
            spec,
            capacity: m.num("capacity")?,
            fpp: m.fpp()?,
            id,
            keys,
            layout_name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_prefers_fewer_counters_per_element() {
        let l = CountingLayout::for_capacity(1_000_000, 0.01, 1 << 27).unwrap();
        assert_eq!(l.hashes(), 4);
        let per_element = l.counters() as f64 / 1e6;
        assert!(per_element > 9.6 && per_element < 11.0, "{per_element}");
        assert!(l.expected_fpp(1_000_000) <= 0.01);
        let big = CountingLayout::for_capacity(10_000_000, 0.01, 1 << 20).unwrap();
        assert!(big.segments() > 1 && big.segment_counters() * 4 <= 1 << 20);
        assert!(CountingLayout::for_capacity(10, 1.5, 1 << 27).is_err());
        assert!(CountingLayout::from_shape(1, 1 << 31, 3).is_err());
        assert!(CountingLayout::from_shape(1, 10, 0).is_err());
    }
}
