//! [`TimeWindowRedisFilter`]: a shared filter that remembers the last window of time (for
//! example 30 days), kept in Redis by generations whose keys expire on their own.
//!
//! ## Generations and the clock
//! The window `W` is cut into `G` generations of `L = ⌈W / G⌉` milliseconds, aligned on the
//! Unix epoch: generation `g` covers `[g·L, (g+1)·L)`. Every client computes the current
//! generation `c = ⌊now / L⌋` from its own [`Clock`], so no coordination is needed. A clock that
//! goes backwards is treated as no time passing (each handle never goes below the latest time
//! it has read).
//!
//! Every generation is a register-blocked filter of the same layout ([`RegisterLayout`],
//! sized by the core library for `⌈n / G⌉` elements at FPR `p / (G + 2)`), so an element's
//! probe is computed once and tested against each generation at the same word. Segment `i` of
//! generation `g` is the key `bloomkit:{E:ID:s<i>}:g<g>`, in the slot of segment `i`'s
//! **anchor** `bloomkit:{E:ID:s<i>}` (one zero byte, created with the filter, no expiry).
//!
//! - **insert**: sets the element's bits in generation `c`, per segment and 256 elements, on
//!   a standalone server with the transaction `MULTI; EXISTS <anchor>; BITFIELD <generation
//!   key> SET u1 …; PEXPIREAT <generation key> E; PTTL <anchor>; EXEC`, where
//!   `E = (c + G + 2)·L + L/2` is the same absolute time for every client. A missing anchor:
//!   the filter is gone, the generation key just written is deleted and the add fails with
//!   [`Error::Gone`]. An anchor with a time to live (the filter was given one, see
//!   [`crate::expire`]): the generation key must not outlive it, so `ADD_SCRIPT` (which
//!   sets `E` and caps it at the anchor's time to live, atomically) runs once more with no
//!   bits, and the handle uses the script for its later adds. On a cluster adds use the script
//!   (as the plain filter does). So Redis frees a generation by itself, whether or not any
//!   client is running.
//! - **contains**: tests the element in generations `c − G − 1 ..= c + 1` (the window, one
//!   more generation at each end for clock skew): one pipeline per batch, with the reads of
//!   each generation key the client knows to exist (`BITFIELD_RO` fields, or byte ranges where
//!   the batch's words lie close together; the plain filter's reads), one `EXISTS` per
//!   generation key it does not know yet, and `EXISTS` of the anchor (gone: [`Error::Gone`]). A generation
//!   that appeared since the client's last look (a new generation, once per generation and
//!   client) is read in a second round trip; a generation key that expired or was deleted
//!   reads as empty, no error.
//!
//! ## Clock skew
//! Tolerated: every client's clock within `L/2` of the Redis server's (so any two clients
//! within `L`). Then an element added within the last `W` is found by every client, and a
//! client forgets it at most `W + 2L` (plus the two clocks' difference) after it was added;
//! Redis frees its generation at most `W + 2.5·L` after. Tests drive clients with skewed
//! [`bloomkit::clock::ManualClock`]s.

use crate::conn::{script_cmd, Connection};
use crate::error::{Error, Result};
use crate::filter::{delete_meta, new_id, FilterOptions, REGISTER_SCHEME};
use crate::keys::{self, SegmentKeys};
use crate::meta::{
    check_segment_count, create_with_byte_segments, head_fields, incompatible, Meta, Stored,
};
use crate::reads::{self, Field, Read};
use crate::segments::{self, by_segment, groups, parse, Span};
use bloomkit::clock::{Clock, SystemClock};
use bloomkit::probe::register::{RegisterLayout, RegisterProbe};
use bloomkit::{Hashing, Incompatibility, Key};
use futures_util::future::{join, try_join_all};
use redis::{Script, Value};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

/// The `kind` field of a time-window filter's metadata.
pub const TIME_WINDOW_KIND: &str = "time-window";

/// The most generations a time-window filter may have.
pub const MAX_GENERATIONS: u32 = 1000;

/// `KEYS[1]` = anchor, `KEYS[2]` = generation key (same slot); `ARGV[1]` = expiry (ms since the
/// epoch), `ARGV[2..]` = `BITFIELD` subcommands (`SET u1 <offset> 1`). Fails with
/// `BLOOMKIT_GONE` without writing if the anchor is gone; otherwise writes, sets the
/// generation's expiry, caps it at the anchor's remaining time to live (if the filter has one),
/// and returns the old bits.
///
/// Kept beside the faster transaction ([`TimeWindowRedisFilter::insert_batch`]) because a
/// transaction cannot make the cap: `MULTI` commands cannot depend on each other's replies,
/// and `PEXPIRE … LT` needs the anchor's time to live as an argument. So the script runs
/// for filters whose anchors have a time to live, and on a cluster.
static ADD_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        r#"
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('BLOOMKIT_GONE the filter was deleted or re-created')
end
"#,
        crate::segments::bitfield_fn!(),
        r#"
local r = bitfield('BITFIELD', KEYS[2], ARGV, 2)
redis.call('PEXPIREAT', KEYS[2], ARGV[1])
local a = redis.call('PTTL', KEYS[1])
if a > 0 and redis.call('PTTL', KEYS[2]) > a then redis.call('PEXPIRE', KEYS[2], a) end
return r
"#
    ))
});

/// The window of a time-window filter and how it is sized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowParams {
    /// How long an element is remembered at least.
    pub window: Duration,
    /// Generations the window is cut into (1 ..= [`MAX_GENERATIONS`]).
    pub generations: u32,
    /// Expected insertions per window.
    pub capacity: u64,
    /// Target false-positive rate of a check (over every generation it reads).
    pub fpp: f64,
    /// Largest segment of a generation, bits.
    pub max_segment_bits: u64,
}

impl WindowParams {
    /// A window of `window` in `generations` generations, sized for `capacity` insertions per
    /// window at FPR `fpp`, default segments.
    pub fn new(window: Duration, generations: u32, capacity: u64, fpp: f64) -> Self {
        WindowParams {
            window,
            generations,
            capacity,
            fpp,
            max_segment_bits: crate::filter::DEFAULT_SEGMENT_BITS,
        }
    }

    /// The window in milliseconds (saturating).
    pub fn window_ms(&self) -> u64 {
        u64::try_from(self.window.as_millis()).unwrap_or(u64::MAX)
    }

    /// A generation's length `L = ⌈W / G⌉` in milliseconds.
    pub fn generation_ms(&self) -> u64 {
        self.window_ms()
            .div_ceil(u64::from(self.generations.max(1)))
    }

    /// Elements one generation is sized for: `⌈n / G⌉`.
    pub fn generation_capacity(&self) -> u64 {
        self.capacity.div_ceil(u64::from(self.generations.max(1)))
    }

    /// A generation's target FPR: `p / (G + 2)`, so that the `G + 2` generations a check can
    /// find filled (the window, and one more at its old end kept for clock skew) stay below
    /// `p` together.
    pub fn generation_fpp(&self) -> f64 {
        self.fpp / f64::from(self.generations.saturating_add(2))
    }

    /// Every generation's layout (the core library's register sizing).
    pub fn layout(&self) -> Result<RegisterLayout> {
        self.validate()?;
        Ok(RegisterLayout::for_capacity(
            self.generation_capacity(),
            self.generation_fpp(),
            self.max_segment_bits,
        )?)
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(bloomkit::Error::InvalidParameters(m).into());
        bloomkit::math::check_fpp(self.fpp)?;
        if self.window_ms() == 0 {
            return bad("the window must be at least 1 ms long".into());
        }
        if self.window_ms() > bloomkit::window::MAX_WINDOW_MS {
            return bad(format!(
                "a time window lasts at most 100 years, not {}",
                format_ms(self.window_ms())
            ));
        }
        if !(1..=MAX_GENERATIONS).contains(&self.generations) {
            return bad(format!(
                "a time window has 1 to {MAX_GENERATIONS} generations, not {}",
                self.generations
            ));
        }
        if self.window_ms() < u64::from(self.generations) {
            return bad(format!(
                "a window of {} cannot hold {} generations of at least 1 ms",
                format_ms(self.window_ms()),
                self.generations
            ));
        }
        if self.capacity < u64::from(self.generations) {
            return bad(format!(
                "more generations ({}) than expected insertions per window ({})",
                self.generations, self.capacity
            ));
        }
        Ok(())
    }

    /// `a window of 30d in 30 generations of 1d`.
    pub fn describe(&self) -> String {
        format!(
            "a window of {} in {} generations of {}",
            format_ms(self.window_ms()),
            self.generations,
            format_ms(self.generation_ms())
        )
    }
}

/// `90s`, `12h`, `30d`, or milliseconds when not a whole number of seconds.
pub fn format_ms(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1_000, "s"),
    ];
    for (size, unit) in UNITS {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// One generation as [`TimeWindowRedisFilter::info`] reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationInfo {
    /// Generation number `g` (it covers `[g·L, (g+1)·L)` in ms since the epoch).
    pub generation: u64,
    /// Bits set over its segments.
    pub set_bits: u64,
    /// Estimated distinct elements in it.
    pub estimated_count: f64,
    /// Milliseconds until Redis deletes it (`None`: no key, or no expiry).
    pub ttl_ms: Option<u64>,
}

/// What [`TimeWindowRedisFilter::info`] reports.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowInfo {
    /// The parameters.
    pub params: WindowParams,
    /// Hash function id.
    pub hashing: String,
    /// The filter id.
    pub id: String,
    /// Every generation's layout.
    pub layout: RegisterLayout,
    /// The current generation by this client's clock.
    pub current_generation: u64,
    /// The generations a check reads that have a key (oldest first).
    pub generations: Vec<GenerationInfo>,
    /// Bits over the generations listed.
    pub bits: u64,
    /// Bits set over the generations listed.
    pub set_bits: u64,
    /// Estimated distinct elements over the generations listed (an element seen in two
    /// generations counts twice).
    pub estimated_count: f64,
    /// Estimated FPR of a check now: `1 − Π(1 − fprᵍ)` over the generations listed.
    pub estimated_fpp: f64,
}

/// A generation key: (generation, segment).
type GenKey = (u64, u32);

/// A check batch: its elements' spans and, per touched segment, the reads that check them.
struct Round<'a> {
    spans: &'a [Span],
    plans: &'a [SegmentReads],
}

/// A segment's part of a check batch: its elements, their fields and the reads of those (the
/// same in every generation).
struct SegmentReads {
    segment: u32,
    idx: Vec<usize>,
    fields: Vec<Field>,
    reads: Vec<Read>,
}

/// How a round asks whether generation keys exist.
#[derive(Debug, Clone, Copy)]
enum Ask {
    /// One `EXISTS` of all of a segment's asked keys (how many exist), and the anchors'.
    Count,
    /// One `EXISTS` per asked key.
    Each,
}

/// What a check pipeline's reply means.
#[derive(Debug, Clone)]
enum Reply {
    /// Read `.1` of the plan of segment `.0` (indices into [`Round::plans`]) in some
    /// generation.
    Read(usize, usize),
    /// `EXISTS` of generation `g`'s key of segment `s`.
    Exists(u64, u32),
    /// `EXISTS` of several generation keys of one segment (this range of the round's `ask`):
    /// how many exist.
    Count(std::ops::Range<usize>),
    /// `EXISTS` of segment `s`'s anchor.
    Anchor,
}

/// A time-window filter in Redis (async API). See the module docs.
#[derive(Clone)]
pub struct TimeWindowRedisFilter {
    conn: Connection,
    name: String,
    params: WindowParams,
    layout: RegisterLayout,
    hashing: Hashing,
    id: String,
    keys: SegmentKeys,
    clock: Arc<dyn Clock>,
    latest_ms: Arc<AtomicU64>,
    /// Generation keys `(generation, segment)` this handle has seen exist.
    known: Arc<Mutex<BTreeSet<(u64, u32)>>>,
    /// Adds run `ADD_SCRIPT`: set once an add found that the anchors have a time to live.
    script_adds: Arc<AtomicBool>,
}

debug_fields!(TimeWindowRedisFilter {
    name,
    params,
    layout
});

impl TimeWindowRedisFilter {
    /// Creates the time-window filter `name` (or opens it if it exists with the same
    /// parameters), hashing with XXH3 and reading the system clock. An existing time-window
    /// filter with another window gives [`Error::WindowMismatch`] naming both.
    pub async fn create(conn: &Connection, name: &str, params: WindowParams) -> Result<Self> {
        Self::create_with(conn, name, params, FilterOptions::default()).await
    }

    /// [`create`](Self::create) with the hashing of `options` (and its
    /// [`store_key`](FilterOptions::store_key)); the segment size is `params`'.
    pub async fn create_with(
        conn: &Connection,
        name: &str,
        params: WindowParams,
        options: FilterOptions,
    ) -> Result<Self> {
        keys::check_name(name)?;
        let layout = params.layout()?;
        check_segment_count(layout.segments(), layout.bits())?;
        let id = new_id()?;
        let mut fields = head_fields(TIME_WINDOW_KIND, &id, REGISTER_SCHEME, &options);
        fields.extend([
            ("segments".into(), layout.segments().to_string()),
            ("segment_words".into(), layout.segment_words().to_string()),
            ("hashes".into(), layout.hashes().to_string()),
            ("capacity".into(), params.capacity.to_string()),
            ("fpp".into(), params.fpp.to_string()),
            ("window_ms".into(), params.window_ms().to_string()),
            ("generations".into(), params.generations.to_string()),
            ("generation_ms".into(), params.generation_ms().to_string()),
            (
                "max_segment_bits".into(),
                params.max_segment_bits.to_string(),
            ),
        ]);
        // The anchors: one zero byte per segment, never grown.
        let created =
            create_with_byte_segments(conn, name, &id, &fields, layout.segments()).await?;
        let f = Self::open_with(conn, name, options.hashing.clone()).await?;
        if !created {
            let (a, b) = (f.params, params);
            if (a.window_ms(), a.generations) != (b.window_ms(), b.generations) {
                return Err(Error::WindowMismatch {
                    name: name.into(),
                    stored: a.describe(),
                    requested: b.describe(),
                });
            }
            if (a.capacity, a.fpp, f.layout) != (b.capacity, b.fpp, layout) {
                return Err(incompatible(Incompatibility::Kind(
                    format!("time window for {} at {}", a.capacity, a.fpp),
                    format!("time window for {} at {}", b.capacity, b.fpp),
                )));
            }
        }
        Ok(f)
    }

    /// Opens an existing time-window filter by name (a keyed one needs its key stored in the
    /// metadata, else [`Error::KeyRequired`]).
    pub async fn open(conn: &Connection, name: &str) -> Result<Self> {
        crate::meta::open(conn, name, None).await
    }

    /// Opens an existing time-window filter with this hash function (it must match the stored
    /// hashing id).
    pub async fn open_with(conn: &Connection, name: &str, hashing: Hashing) -> Result<Self> {
        crate::meta::open(conn, name, Some(hashing)).await
    }

    /// The same handle reading time from `clock` (tests, simulations, skewed clients).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self.latest_ms = Arc::new(AtomicU64::new(0));
        self
    }

    /// The filter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The filter id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The connection.
    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The window parameters.
    pub fn params(&self) -> &WindowParams {
        &self.params
    }

    /// Every generation's layout.
    pub fn layout(&self) -> &RegisterLayout {
        &self.layout
    }

    /// Now by this handle's clock, never earlier than a time it read before.
    pub fn now_ms(&self) -> u64 {
        let now = self.clock.now_ms();
        self.latest_ms.fetch_max(now, Ordering::SeqCst).max(now)
    }

    /// The current generation, `⌊now / L⌋`.
    pub fn current_generation(&self) -> u64 {
        self.now_ms() / self.params.generation_ms()
    }

    /// When Redis deletes generation `g`: `(g + G + 2)·L + L/2` ms since the epoch.
    pub fn expires_at_ms(&self, g: u64) -> u64 {
        let l = self.params.generation_ms();
        g.saturating_add(u64::from(self.params.generations) + 2)
            .saturating_mul(l)
            .saturating_add(l / 2)
    }

    /// The generations a check at generation `c` reads: `c − G − 1 ..= c + 1`.
    pub fn read_range(&self, c: u64) -> std::ops::RangeInclusive<u64> {
        c.saturating_sub(u64::from(self.params.generations) + 1)..=c.saturating_add(1)
    }

    /// The key of segment `s` of generation `g`.
    pub fn generation_key(&self, g: u64, s: u32) -> String {
        self.keys.generation_segment(g, s)
    }

    /// The anchor key of segment `s`.
    pub fn anchor_key(&self, s: u32) -> String {
        self.keys.segment(s)
    }

    /// Where an element's bits are (in every generation).
    pub fn probe<K: Key + ?Sized>(&self, key: &K) -> RegisterProbe {
        crate::filter::register_probe(&self.hashing, &self.layout, key)
    }

    /// Adds one element to the current generation; `true` if it was not in the window before.
    pub async fn insert<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.insert_batch(&[key]).await?[0])
    }

    /// Adds a batch to the current generation (one transaction or script per segment and 256
    /// elements, see the module docs) while
    /// reading the other generations in the same round trip; returns for each element whether
    /// it was new: absent from every generation a check reads before this call. An element
    /// seen again is added again, so it is remembered for a window from its latest sighting.
    pub async fn insert_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let probes: Vec<RegisterProbe> = keys.iter().map(|k| self.probe(k)).collect();
        let c = self.current_generation();
        // `join`, not `try_join`: a failed read must not cancel the add half-way, between a
        // transaction that wrote into a deleted filter's generation key and the `DEL` of it.
        let (older, added) = join(
            self.read_generations(&probes, c, Some(c)),
            self.add_to(c, &probes),
        )
        .await;
        let added = added?;
        let older = older?;
        Ok(older.iter().zip(added).map(|(&o, a)| !o && a).collect())
    }

    /// Sets the probes' bits in generation `g`; whether each had a bit unset there.
    async fn add_to(&self, g: u64, probes: &[RegisterProbe]) -> Result<Vec<bool>> {
        let groups = groups(probes);
        let at = self.expires_at_ms(g);
        let futs = groups.iter().map(|(seg, idx)| async move {
            let old = self.add_group(g, *seg, at, probes, idx).await?;
            segments::new_from_old_bits(probes, idx, old)
        });
        let flags = segments::join_writes(futs).await?;
        self.lock_known()
            .extend(groups.iter().map(|(s, _)| (g, *s)));
        Ok(segments::ungroup(&groups, flags, probes.len()))
    }

    /// Sets the bits of the elements `idx` in segment `seg` of generation `g`, whose key
    /// expires at `at`; returns the old bits.
    ///
    /// The transaction's result equals the script's when the anchor has no time to live (its
    /// `PTTL`, read in the same transaction, is -1 or 0: the script caps only at a positive
    /// one). Otherwise the key has just got `at`, later than the anchor's expiry, and the
    /// script runs again with no bits to cap it, before the add is acknowledged. A client
    /// killed in between leaves the key to expire at `at`, up to `W + 2.5·L` after its anchor
    /// (memory only: no reader reaches a key of a gone filter). That happens at most once per
    /// handle, on its first add after the filter got a time to live.
    async fn add_group(
        &self,
        g: u64,
        seg: u32,
        at: u64,
        probes: &[RegisterProbe],
        idx: &[usize],
    ) -> Result<Vec<i64>> {
        let (anchor, gen) = (self.anchor_key(seg), self.generation_key(g, seg));
        if self.conn.is_cluster() || self.script_adds.load(Ordering::Relaxed) {
            return self.add_by_script(&anchor, &gen, at, probes, idx).await;
        }
        let args = segments::set_bits_args(probes, idx);
        let mut cmd = redis::Cmd::with_capacity(2 + args, 16 * args);
        cmd.arg("BITFIELD").arg(&gen);
        segments::write_set_bits(&mut cmd, probes, idx);
        let mut expire = redis::cmd("PEXPIREAT");
        expire.arg(&gen).arg(at);
        let mut anchor_ttl = redis::cmd("PTTL");
        anchor_ttl.arg(&anchor);
        let (old, then) = segments::write_if_guard_exists(
            &self.conn,
            &anchor,
            &gen,
            &self.name,
            cmd,
            vec![expire, anchor_ttl],
        )
        .await?;
        if then.get(1).is_some_and(|&ttl| ttl > 0) {
            self.script_adds.store(true, Ordering::Relaxed);
            if let Err(e) = self.add_by_script(&anchor, &gen, at, probes, &[]).await {
                if matches!(e, Error::Gone(_)) {
                    // The anchor expired meanwhile: so must the key.
                    let _: i64 = self.conn.query(redis::cmd("DEL").arg(&gen)).await?;
                }
                return Err(e);
            }
        }
        Ok(old)
    }

    /// `ADD_SCRIPT` with the bits of the elements `idx`; returns the old bits.
    async fn add_by_script(
        &self,
        anchor: &str,
        gen: &str,
        at: u64,
        probes: &[RegisterProbe],
        idx: &[usize],
    ) -> Result<Vec<i64>> {
        let args = segments::set_bits_args(probes, idx);
        let mut cmd = script_cmd(&ADD_SCRIPT, &[anchor, gen], 1 + args);
        cmd.arg(at);
        segments::write_set_bits(&mut cmd, probes, idx);
        self.conn
            .eval(&ADD_SCRIPT, &cmd)
            .await
            .map_err(|e| e.about(&self.name))
    }

    /// The same handle adding through `ADD_SCRIPT` always, as on a cluster (for the
    /// benchmark that compares it with the transaction).
    #[doc(hidden)]
    pub fn with_script_adds(mut self) -> Self {
        self.script_adds = Arc::new(AtomicBool::new(true));
        self
    }

    /// Whether the element is in the window.
    pub async fn contains<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.contains_batch(&[key]).await?[0])
    }

    /// Checks a batch against every generation of the window in one round trip (see the
    /// module docs).
    pub async fn contains_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let probes: Vec<RegisterProbe> = keys.iter().map(|k| self.probe(k)).collect();
        let c = self.current_generation();
        self.read_generations(&probes, c, None).await
    }

    fn lock_known(&self) -> std::sync::MutexGuard<'_, BTreeSet<(u64, u32)>> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether each probe is set in some generation of the read range at `c` (but `skip`).
    async fn read_generations(
        &self,
        probes: &[RegisterProbe],
        c: u64,
        skip: Option<u64>,
    ) -> Result<Vec<bool>> {
        let range = self.read_range(c);
        let spans: Vec<Span> = probes.iter().map(Span::of).collect();
        let plans: Vec<SegmentReads> = by_segment(probes.len(), |i| probes[i].segment)
            .into_iter()
            .map(|(segment, idx)| {
                let fields: Vec<Field> = idx.iter().map(|&i| spans[i].field()).collect();
                let reads = reads::plan(&fields);
                SegmentReads {
                    segment,
                    idx,
                    fields,
                    reads,
                }
            })
            .collect();
        let mut segs: Vec<u32> = plans.iter().map(|p| p.segment).collect();
        segs.sort_unstable();
        let wanted = |g: u64| range.contains(&g) && Some(g) != skip;
        // What to read: known generations; what to ask about: the others.
        let (read, ask): (Vec<GenKey>, Vec<GenKey>) = {
            let mut known = self.lock_known();
            known.retain(|&(g, _)| g >= *range.start());
            let mut read = Vec::new();
            let mut ask = Vec::new();
            for &s in &segs {
                for g in range.clone().filter(|&g| wanted(g)) {
                    if known.contains(&(g, s)) {
                        read.push((g, s));
                    } else {
                        ask.push((g, s));
                    }
                }
            }
            (read, ask)
        };
        let mut present = vec![false; probes.len()];
        let round = Round {
            spans: &spans,
            plans: &plans,
        };
        let found = self
            .read_round(&round, &read, &ask, Ask::Count, &mut present)
            .await?;
        if !found.is_empty() {
            // Generations that may have appeared since this handle last looked (a new
            // generation, once per generation and handle): read them, and learn which exist,
            // in a second round trip.
            let exist = self
                .read_round(&round, &found, &found, Ask::Each, &mut present)
                .await?;
            self.lock_known().extend(exist);
        }
        Ok(present)
    }

    /// One round trip: reads generations `read` and asks about `ask` (with [`Ask::Count`],
    /// one `EXISTS` of them all per segment, and the anchors' `EXISTS`; with [`Ask::Each`],
    /// one `EXISTS` each). ORs hits into `present`; returns the asked keys that exist (with
    /// [`Ask::Count`], all asked keys of a segment where some exist).
    async fn read_round(
        &self,
        round: &Round<'_>,
        read: &[GenKey],
        ask: &[GenKey],
        how: Ask,
        present: &mut [bool],
    ) -> Result<Vec<GenKey>> {
        // One pipeline on a standalone server (one round trip); on a cluster one per segment
        // (a pipeline must stay in one slot), sent concurrently.
        let cluster = self.conn.is_cluster();
        let slot = move |s: u32| if cluster { s } else { 0 };
        let mut per_seg: HashMap<u32, (redis::Pipeline, Vec<Reply>)> = HashMap::new();
        fn entry(
            m: &mut HashMap<u32, (redis::Pipeline, Vec<Reply>)>,
            s: u32,
        ) -> &mut (redis::Pipeline, Vec<Reply>) {
            m.entry(s).or_insert_with(|| (redis::pipe(), Vec::new()))
        }
        for (pi, plan) in round.plans.iter().enumerate() {
            let s = plan.segment;
            for &(g, _) in read.iter().filter(|(_, rs)| *rs == s) {
                let key = self.generation_key(g, s);
                let (p, r) = entry(&mut per_seg, slot(s));
                for (ri, one) in plan.reads.iter().enumerate() {
                    p.add_command(one.command(&key, &plan.fields));
                    r.push(Reply::Read(pi, ri));
                }
            }
        }
        match how {
            Ask::Each => {
                for &(g, s) in ask {
                    let (p, r) = entry(&mut per_seg, slot(s));
                    p.cmd("EXISTS").arg(self.generation_key(g, s));
                    r.push(Reply::Exists(g, s));
                }
            }
            Ask::Count => {
                // `ask` lists its keys segment by segment.
                let mut start = 0;
                while start < ask.len() {
                    let s = ask[start].1;
                    let end = start + ask[start..].iter().take_while(|k| k.1 == s).count();
                    let (p, r) = entry(&mut per_seg, slot(s));
                    p.cmd("EXISTS");
                    for &(g, s) in &ask[start..end] {
                        p.arg(self.generation_key(g, s));
                    }
                    r.push(Reply::Count(start..end));
                    start = end;
                }
                let segs: BTreeSet<u32> = round.plans.iter().map(|p| p.segment).collect();
                for s in segs {
                    let (p, r) = entry(&mut per_seg, slot(s));
                    p.cmd("EXISTS").arg(self.anchor_key(s));
                    r.push(Reply::Anchor);
                }
            }
        }
        let batches: Vec<(redis::Pipeline, Vec<Reply>)> = per_seg.into_values().collect();
        let results =
            try_join_all(batches.iter().map(|(p, _)| self.conn.pipe::<Vec<Value>>(p))).await?;
        let mut found = Vec::new();
        for ((_, replies), values) in batches.iter().zip(results) {
            if values.len() != replies.len() {
                return Err(segments::unexpected("pipeline reply length"));
            }
            for (reply, v) in replies.iter().zip(values) {
                match reply {
                    Reply::Read(pi, ri) => {
                        let plan = &round.plans[*pi];
                        plan.reads[*ri].decode(v, &plan.fields, |f, value| {
                            let i = plan.idx[f];
                            let m = round.spans[i].mask;
                            present[i] |= value & m == m;
                        })?;
                    }
                    Reply::Exists(g, s) => {
                        if parse::<i64>(v)? == 1 {
                            found.push((*g, *s));
                        }
                    }
                    Reply::Count(keys) => {
                        if parse::<i64>(v)? > 0 {
                            found.extend_from_slice(&ask[keys.clone()]);
                        }
                    }
                    Reply::Anchor => {
                        if parse::<i64>(v)? == 0 {
                            return Err(Error::Gone(self.name.clone()));
                        }
                    }
                }
            }
        }
        Ok(found)
    }

    /// Parameters and every generation a check reads now (`BITCOUNT` and `PTTL` per key).
    pub async fn info(&self) -> Result<WindowInfo> {
        let c = self.current_generation();
        let segments = self.layout.segments();
        let mut generations = Vec::new();
        let (mut bits, mut set, mut count, mut miss) = (0, 0, 0.0, 1.0);
        for g in self.read_range(c) {
            let futs = (0..segments).map(|s| async move {
                let key = self.generation_key(g, s);
                let mut p = redis::pipe();
                p.cmd("BITCOUNT").arg(&key).cmd("PTTL").arg(&key);
                self.conn.pipe::<(u64, i64)>(&p).await
            });
            let per_seg = try_join_all(futs).await?;
            let exists = per_seg.iter().any(|&(_, ttl)| ttl != -2);
            if !exists {
                continue;
            }
            let ones: u64 = per_seg.iter().map(|&(n, _)| n).sum();
            let ttl = per_seg
                .iter()
                .filter_map(|&(_, t)| u64::try_from(t).ok())
                .max();
            let est = self.layout.estimate_count(ones);
            miss *= 1.0 - self.layout.expected_fpp(est.round() as u64);
            bits += self.layout.bits();
            set += ones;
            count += est;
            generations.push(GenerationInfo {
                generation: g,
                set_bits: ones,
                estimated_count: est,
                ttl_ms: ttl,
            });
        }
        Ok(WindowInfo {
            params: self.params,
            hashing: self.hashing.id(),
            id: self.id.clone(),
            layout: self.layout,
            current_generation: c,
            generations,
            bits,
            set_bits: set,
            estimated_count: count,
            estimated_fpp: 1.0 - miss,
        })
    }

    /// Estimated distinct elements over the generations a check reads.
    pub async fn count(&self) -> Result<f64> {
        Ok(self.info().await?.estimated_count)
    }

    /// Every generation key that may exist now: one generation beyond the read range at each
    /// end (keys further away were written by clients whose clocks were off by more than the
    /// tolerated skew; they expire by themselves).
    pub(crate) fn generation_keys(&self) -> Vec<String> {
        let c = self.current_generation();
        let r = self.read_range(c);
        let (lo, hi) = (r.start().saturating_sub(1), r.end().saturating_add(1));
        let mut out = Vec::new();
        for g in lo..=hi {
            for s in 0..self.layout.segments() {
                out.push(self.generation_key(g, s));
            }
        }
        out
    }

    /// The anchors and the metadata.
    pub(crate) fn fixed_keys(&self) -> Vec<String> {
        let mut out: Vec<String> = (0..self.layout.segments())
            .map(|s| self.anchor_key(s))
            .collect();
        out.push(keys::meta(&self.name));
        out
    }

    /// Forgets every element (deletes the generation keys; the filter stays).
    pub async fn clear(&self) -> Result<()> {
        self.delete_keys(self.generation_keys()).await?;
        self.lock_known().clear();
        Ok(())
    }

    /// Deletes the filter: its metadata (only if it is still this filter, else
    /// [`Error::Gone`]), then the anchors (which stops every writer) and the generations.
    pub async fn delete(self) -> Result<()> {
        delete_meta(&self.conn, &self.name, Some(&self.id)).await?;
        let mut keys = self.fixed_keys();
        keys.pop(); // the metadata, already deleted
        keys.extend(self.generation_keys());
        self.delete_keys(keys).await
    }

    async fn delete_keys(&self, keys: Vec<String>) -> Result<()> {
        for chunk in keys.chunks(segments::IN_FLIGHT as usize) {
            try_join_all(
                chunk
                    .iter()
                    .map(|k| async move { self.conn.query::<i64>(redis::cmd("DEL").arg(k)).await }),
            )
            .await?;
        }
        Ok(())
    }
}

impl Stored for TimeWindowRedisFilter {
    fn from_meta(m: &Meta<'_>) -> Result<Self> {
        let hashing = m.head(TIME_WINDOW_KIND, REGISTER_SCHEME)?;
        let (id, keys, segments) = m.layout2("a time-window filter")?;
        let layout = m.register_layout(segments)?;
        let window_ms: u64 = m.num("window_ms")?;
        let params = WindowParams {
            window: Duration::from_millis(window_ms),
            generations: m.num("generations")?,
            capacity: m.num("capacity")?,
            fpp: m.num("fpp")?,
            max_segment_bits: m.num("max_segment_bits")?,
        };
        // `layout` validates the parameters, the segment size among them.
        params
            .layout()
            .map_err(|e| m.corrupt(format!("window parameters: {e}")))?;
        if m.num::<u64>("generation_ms")? != params.generation_ms() {
            return Err(m.corrupt("generation_ms is not ⌈window_ms / generations⌉"));
        }
        Ok(TimeWindowRedisFilter {
            conn: m.conn.clone(),
            name: m.name.into(),
            params,
            layout,
            hashing,
            id,
            keys,
            clock: Arc::new(SystemClock),
            latest_ms: Arc::new(AtomicU64::new(0)),
            known: Arc::new(Mutex::new(BTreeSet::new())),
            script_adds: Arc::new(AtomicBool::new(false)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_and_their_errors() {
        let day = Duration::from_secs(86_400);
        let p = WindowParams::new(30 * day, 30, 3_000_000, 0.01);
        assert_eq!(p.generation_ms(), 86_400_000);
        assert_eq!(p.generation_capacity(), 100_000);
        assert!((p.generation_fpp() - 0.01 / 32.0).abs() < 1e-12);
        assert_eq!(p.describe(), "a window of 30d in 30 generations of 1d");
        assert!(p.layout().is_ok());
        for bad in [
            WindowParams::new(Duration::ZERO, 3, 100, 0.01),
            WindowParams::new(day, 0, 100, 0.01),
            WindowParams::new(day, MAX_GENERATIONS + 1, 1 << 20, 0.01),
            WindowParams::new(Duration::from_millis(2), 3, 100, 0.01),
            WindowParams::new(day, 10, 9, 0.01),
            WindowParams::new(day, 10, 100, 1.5),
            WindowParams::new(36_526 * day, 30, 100, 0.01),
            WindowParams::new(Duration::MAX, 30, 100, 0.01),
        ] {
            assert!(bad.layout().is_err(), "{bad:?}");
        }
        assert!(WindowParams::new(36_525 * day, 30, 100, 0.01)
            .layout()
            .is_ok());
        assert_eq!(format_ms(90_000), "90s");
        assert_eq!(format_ms(43_200_000), "12h");
        assert_eq!(format_ms(1_500), "1500ms");
        assert_eq!(format_ms(120_000), "2m");
    }
}
