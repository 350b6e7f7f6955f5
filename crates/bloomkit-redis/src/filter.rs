//! [`RedisFilter`]: a named, register-blocked Bloom filter in plain Redis (async API).

use crate::conn::Connection;
use crate::error::{Error, Result};
use crate::keys::{self, SegmentKeys};
use crate::meta::{incompatible, segment_count, Meta, Stored};
use crate::segments::{self, AddMethod, Keyspace};
use bloomkit::probe::register::{RegisterLayout, RegisterProbe, MAX_SEGMENT_BITS};
use bloomkit::{Digest, Hashing, Incompatibility, Key};
use std::collections::HashMap;
use std::sync::Arc;

/// The layout version written to the metadata; a client refuses versions it does not know.
/// Version 2 adds the filter id (segment keys named after it, every command checking it);
/// version-1 filters stay readable and writable, without that protection.
pub const LAYOUT_VERSION: u32 = 2;

/// The most segment keys a filter may have (with the default 16 MiB segments: 1 TiB). Metadata
/// claiming more is corrupt; nothing is allocated in proportion to it.
pub const MAX_SEGMENTS: u32 = 1 << 16;

/// The default largest segment: 2²⁷ bits (16 MiB). Smaller segments spread a filter over more
/// cluster nodes and bound the allocation of a segment's lazy growth; the hard limit is 2³².
pub const DEFAULT_SEGMENT_BITS: u64 = 1 << 27;

/// The probing scheme name stored in the metadata for the register-blocked layout.
pub const REGISTER_SCHEME: &str = "register64";

/// How to size and lay out a new filter.
#[derive(Debug, Clone)]
pub struct FilterOptions {
    /// The hash function. Stored by name in the metadata; `Hashing::Xxh3` (default),
    /// `Murmur3` and `Highway` can be reopened by name, keyed or custom hashes must be passed
    /// again to [`RedisFilter::open_with`].
    pub hashing: Hashing,
    /// Largest segment in bits (64 ..= 2³²). Default [`DEFAULT_SEGMENT_BITS`].
    pub max_segment_bits: u64,
    /// How online adds are sent (default [`AddMethod::Bitfield`]).
    pub add_method: AddMethod,
    /// With keyed hashing ([`Hashing::SipHash13`]): store the key in the metadata (field
    /// `hash_key`), so that [`RedisFilter::open`] needs no key. Anyone who can read the
    /// filter's keys in Redis can then read the key too; it still keeps someone who only
    /// knows the software from crafting false positives offline (docs/REDIS.md, "Keyed
    /// hashing"). Default `false`.
    pub store_key: bool,
}

impl Default for FilterOptions {
    fn default() -> Self {
        FilterOptions {
            hashing: Hashing::Xxh3,
            max_segment_bits: DEFAULT_SEGMENT_BITS,
            add_method: AddMethod::default(),
            store_key: false,
        }
    }
}

impl FilterOptions {
    /// Default options with keyed SipHash under a fresh random key stored in the metadata
    /// (see [`FilterOptions::store_key`]).
    pub fn random_key() -> Result<Self> {
        Ok(FilterOptions {
            hashing: Hashing::siphash(random_bytes()?),
            store_key: true,
            ..FilterOptions::default()
        })
    }
}

/// 16 bytes from the operating system's random source.
pub(crate) fn random_bytes() -> Result<[u8; 16]> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| {
        Error::Core(bloomkit::Error::InvalidParameters(format!(
            "no random numbers from the operating system: {e}"
        )))
    })?;
    Ok(b)
}

/// A new filter id: 16 random hex digits.
pub(crate) fn new_id() -> Result<String> {
    let b = random_bytes()?;
    Ok(hex(&b[..8]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex16(s: &str) -> Option<[u8; 16]> {
    if s.len() != 32 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The hashing a filter's metadata names: a built-in hash by id, or keyed SipHash with the key
/// stored in `hash_key`; [`Error::KeyRequired`] for a keyed or custom hash without it.
pub(crate) fn stored_hashing(name: &str, meta: &HashMap<String, String>) -> Result<Hashing> {
    let id = field(name, meta, "hashing")?;
    if let Some(h) = hashing_by_id(id) {
        return Ok(h);
    }
    if let Some(k) = meta.get("hash_key") {
        let key = unhex16(k).ok_or_else(|| Error::CorruptMetadata {
            name: name.into(),
            reason: "field hash_key is not 32 hex digits".into(),
        })?;
        let h = Hashing::siphash(key);
        if h.id() != id {
            return Err(Error::CorruptMetadata {
                name: name.into(),
                reason: "hash_key does not match the hashing id".into(),
            });
        }
        return Ok(h);
    }
    Err(Error::KeyRequired {
        name: name.into(),
        hashing: id.into(),
    })
}

/// The filter id and the segment key names, from the metadata's version and `id` fields.
pub(crate) fn segment_keys(
    name: &str,
    meta: &HashMap<String, String>,
) -> Result<(Option<String>, SegmentKeys)> {
    let version: u32 = num(name, meta, "version")?;
    match version {
        1 => Ok((None, SegmentKeys::legacy(name))),
        LAYOUT_VERSION => {
            let id = field(name, meta, "id")?;
            if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) || id.len() > 32 {
                return Err(Error::CorruptMetadata {
                    name: name.into(),
                    reason: "field id is not a hex id".into(),
                });
            }
            Ok((Some(id.to_string()), SegmentKeys::with_id(name, id)))
        }
        v => Err(Error::CorruptMetadata {
            name: name.into(),
            reason: format!("unknown layout version {v}"),
        }),
    }
}

/// The metadata hash of filter `name` ([`Error::NotFound`] if there is none).
pub(crate) async fn read_meta(conn: &Connection, name: &str) -> Result<HashMap<String, String>> {
    let meta: HashMap<String, String> = conn
        .query(redis::cmd("HGETALL").arg(keys::meta(name)))
        .await?;
    if meta.is_empty() {
        return Err(Error::NotFound(name.into()));
    }
    Ok(meta)
}

/// The fields of the metadata hash as script arguments.
pub(crate) fn field_args(fields: &[(String, String)]) -> Vec<Vec<u8>> {
    fields
        .iter()
        .flat_map(|(k, v)| [k.as_bytes().to_vec(), v.as_bytes().to_vec()])
        .collect()
}

/// Writes the metadata hash if no filter of that name exists; `Ok(true)` if written.
pub(crate) async fn create_meta(
    conn: &Connection,
    name: &str,
    fields: &[(String, String)],
) -> Result<bool> {
    create_hash(conn, &keys::meta(name), fields).await
}

/// Writes the hash `key` with these fields if it does not exist; `Ok(true)` if written.
pub(crate) async fn create_hash(
    conn: &Connection,
    key: &str,
    fields: &[(String, String)],
) -> Result<bool> {
    let args = field_args(fields);
    let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    let created: i64 = conn.script(&CREATE_SCRIPT, &[key], &refs).await?;
    Ok(created == 1)
}

/// Creates the segment keys of a new filter (or of a new scalable layer) named after id `id`,
/// then checks that the metadata still names that id. If another client deleted (or
/// re-created) the filter meanwhile, the segments are deleted again and [`Error::Gone`]
/// returned, so no orphan key is left: a deleting client removes the metadata before the
/// segments, so whichever of the two runs last removes them. (Also after a failed creation.)
pub(crate) async fn create_segments(
    ks: &Keyspace<'_>,
    id: &str,
    layout: &RegisterLayout,
) -> Result<()> {
    let made = segments::create(ks, layout).await;
    let now: Option<String> = ks
        .conn
        .query(redis::cmd("HGET").arg(keys::meta(ks.name)).arg("id"))
        .await?;
    if now.as_deref() != Some(id) {
        segments::delete(ks, layout.segments()).await?;
        return Err(Error::Gone(ks.name.into()));
    }
    made
}

/// What the metadata hash says about a filter (see docs/REDIS.md, "Metadata").
#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    /// The filter's name.
    pub name: String,
    /// `register` for plain filters.
    pub kind: String,
    /// Layout version.
    pub version: u32,
    /// Probing scheme ([`REGISTER_SCHEME`]).
    pub scheme: String,
    /// Hash function id ([`Hashing::id`]).
    pub hashing: String,
    /// Number of segment keys.
    pub segments: u32,
    /// 64-bit words per segment.
    pub segment_words: u64,
    /// Total bits.
    pub bits: u64,
    /// Bits per element (`k`).
    pub hashes: u32,
    /// The capacity it was sized for (0 if created from `(m, k)`).
    pub capacity: u64,
    /// The target FPR it was sized for (0 if created from `(m, k)`).
    pub fpp: f64,
    /// Bits currently set (at the time of the call).
    pub set_bits: u64,
    /// Estimated number of distinct elements.
    pub estimated_count: f64,
    /// Estimated current FPR, from the fill.
    pub estimated_fpp: f64,
    /// The filter id (layout 2; `None` for layout-1 filters).
    pub id: Option<String>,
}

/// A named Bloom filter stored in Redis, shared by every process that opens it by name.
///
/// Elements map to one 64-bit word each ([`bloomkit::probe::register`]): a check reads one word
/// per element, an add ORs one mask per element atomically on the server, and a batch costs one
/// command per touched segment (and per [`segments::MAX_PER_COMMAND`] elements).
///
/// ```no_run
/// # async fn demo() -> Result<(), bloomkit_redis::Error> {
/// use bloomkit_redis::{Connection, Options, RedisFilter};
/// let conn = Connection::open("redis://127.0.0.1:6379/", &Options::default()).await?;
/// let filter = RedisFilter::create(&conn, "users", 1_000_000, 0.01).await?;
/// filter.insert("alice").await?;
/// assert!(filter.contains("alice").await?);
/// // Any other process: RedisFilter::open(&conn, "users").await?
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisFilter {
    conn: Connection,
    name: String,
    layout: RegisterLayout,
    hashing: Hashing,
    capacity: u64,
    fpp: f64,
    add_method: AddMethod,
    id: Option<String>,
    key_of: Arc<dyn Fn(u32) -> String + Send + Sync>,
}

debug_fields!(RedisFilter {
    name,
    layout,
    hashing
});

/// Atomically writes the metadata hash if it does not exist: returns 1 if written, 0 if a
/// filter of that name already exists. (The one creation script of every bloomkit filter
/// kind.)
pub(crate) static CREATE_SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| {
        redis::Script::new(
            r#"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"#,
        )
    });

/// Where `key`'s bits are in `layout`, hashed with `hashing` (the register filter's and the
/// time-window filter's generations' probing).
pub(crate) fn register_probe<K: Key + ?Sized>(
    hashing: &Hashing,
    layout: &RegisterLayout,
    key: &K,
) -> RegisterProbe {
    key.with_bytes(|b| {
        let [h1, h2] = hashing.hash128(b);
        layout.probe(&Digest {
            h1,
            h2,
            ..Digest::default()
        })
    })
}

pub(crate) fn hashing_by_id(id: &str) -> Option<Hashing> {
    [Hashing::Xxh3, Hashing::Murmur3, Hashing::Highway]
        .into_iter()
        .find(|h| h.id() == id)
}

pub(crate) fn field<'a>(name: &str, meta: &'a HashMap<String, String>, f: &str) -> Result<&'a str> {
    meta.get(f)
        .map(String::as_str)
        .ok_or_else(|| Error::CorruptMetadata {
            name: name.into(),
            reason: format!("missing field {f}"),
        })
}

pub(crate) fn num<T: std::str::FromStr>(
    name: &str,
    meta: &HashMap<String, String>,
    f: &str,
) -> Result<T> {
    field(name, meta, f)?
        .parse()
        .map_err(|_| Error::CorruptMetadata {
            name: name.into(),
            reason: format!("field {f} is not a number"),
        })
}

impl RedisFilter {
    /// Creates the filter `name` sized for `n` elements at false-positive rate `p` (measured
    /// FPR ≤ p, see [`RegisterLayout::for_capacity`]), or opens it if it already exists with
    /// the same parameters. A different existing filter gives [`bloomkit::Error::Incompatible`].
    pub async fn create(conn: &Connection, name: &str, n: u64, p: f64) -> Result<Self> {
        Self::create_with(conn, name, n, p, FilterOptions::default()).await
    }

    /// [`create`](Self::create) with options (hashing, segment size, add method).
    pub async fn create_with(
        conn: &Connection,
        name: &str,
        n: u64,
        p: f64,
        options: FilterOptions,
    ) -> Result<Self> {
        keys::check_name(name)?;
        let layout = RegisterLayout::for_capacity(n, p, options.max_segment_bits)?;
        Self::create_layout(conn, name, layout, n, p, options).await
    }

    /// Creates (or opens, if identical) a filter of at least `m` bits with `k` bits per
    /// element, rounded up to whole 64-bit words and equal segments.
    pub async fn create_with_bits(
        conn: &Connection,
        name: &str,
        m: u64,
        k: u32,
        options: FilterOptions,
    ) -> Result<Self> {
        keys::check_name(name)?;
        if m > MAX_SEGMENT_BITS.saturating_mul(u64::from(u32::MAX)) {
            return Err(bloomkit::Error::TooLarge {
                bits: m,
                limit: "more than 2^32 segments",
            }
            .into());
        }
        let layout = RegisterLayout::new(m.div_ceil(64), k, options.max_segment_bits)?;
        Self::create_layout(conn, name, layout, 0, 0.0, options).await
    }

    async fn create_layout(
        conn: &Connection,
        name: &str,
        layout: RegisterLayout,
        n: u64,
        p: f64,
        options: FilterOptions,
    ) -> Result<Self> {
        crate::meta::check_segment_count(layout.segments(), layout.bits())?;
        let id = new_id()?;
        let mut fields = crate::meta::head_fields("register", &id, REGISTER_SCHEME, &options);
        fields.extend([
            ("segments".into(), layout.segments().to_string()),
            ("segment_words".into(), layout.segment_words().to_string()),
            ("hashes".into(), layout.hashes().to_string()),
            ("capacity".into(), n.to_string()),
            ("fpp".into(), p.to_string()),
        ]);
        let keys = SegmentKeys::with_id(name, &id);
        let key_of = move |s| keys.segment(s);
        let created =
            crate::meta::create_with_segments(conn, name, &id, &fields, &key_of, &layout).await?;
        let filter = Self::open_with(conn, name, options.hashing.clone()).await?;
        if !created && filter.layout != layout {
            // Someone else's filter: it must be the same one.
            return Err(if filter.layout.hashes() != layout.hashes() {
                incompatible(Incompatibility::Hashes(
                    filter.layout.hashes(),
                    layout.hashes(),
                ))
            } else {
                incompatible(Incompatibility::Bits(filter.layout.bits(), layout.bits()))
            });
        }
        Ok(RedisFilter {
            add_method: options.add_method,
            ..filter
        })
    }

    /// Opens the existing filter `name`, reading its parameters from the metadata hash.
    pub async fn open(conn: &Connection, name: &str) -> Result<Self> {
        crate::meta::open(conn, name, None).await
    }

    /// Opens the existing filter `name` with this hash function (required for keyed or custom
    /// hashes); it must match the stored hashing id.
    pub async fn open_with(conn: &Connection, name: &str, hashing: Hashing) -> Result<Self> {
        crate::meta::open(conn, name, Some(hashing)).await
    }

    /// Chooses how online adds are sent (see [`AddMethod`]).
    pub fn set_add_method(&mut self, method: AddMethod) {
        self.add_method = method;
    }

    /// The filter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The filter id (a random generation written at creation; `None` for layout-1 filters).
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    fn keyspace(&self) -> Keyspace<'_> {
        Keyspace::new(&self.conn, &self.name, &*self.key_of, self.id.is_some())
    }

    /// The layout (segments, words, `k`).
    pub fn layout(&self) -> &RegisterLayout {
        &self.layout
    }

    /// Where an element's bits are.
    pub fn probe<K: Key + ?Sized>(&self, key: &K) -> RegisterProbe {
        register_probe(&self.hashing, &self.layout, key)
    }

    fn probes<K: Key>(&self, keys: &[K]) -> Vec<RegisterProbe> {
        keys.iter().map(|k| self.probe(k)).collect()
    }

    /// Adds one element; returns `true` if it was new (some bit was unset).
    pub async fn insert<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        let p = [self.probe(key)];
        Ok(segments::add(&self.keyspace(), &p, self.add_method).await?[0])
    }

    /// Adds a batch (one atomic server-side command per touched segment and per 256 elements,
    /// all pipelined); returns for each element whether it was new at the moment its command
    /// ran (the commands of one batch run in an unspecified order).
    pub async fn insert_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let p = self.probes(keys);
        segments::add(&self.keyspace(), &p, self.add_method).await
    }

    /// Adds a large batch through the bulk path: bits are built locally per segment and merged
    /// into the segment with `BITOP OR` by one atomic script per 4 MiB of the touched range.
    /// Returns for each element whether it was new: whether some bit of it was unset before
    /// this call's merge or an earlier element of this batch (so concurrent writers each count
    /// their own new elements).
    pub async fn insert_bulk<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let p = self.probes(keys);
        segments::add_bulk(&self.keyspace(), &self.layout, &p).await
    }

    /// Whether the element may be in the filter (`false`: certainly not).
    pub async fn contains<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        let p = [self.probe(key)];
        Ok(segments::check(&self.keyspace(), &p).await?[0])
    }

    /// Checks a batch: one pipeline per touched segment, reading the part of one 64-bit word
    /// that holds each element's bits (`BITFIELD_RO`, one per 256 elements), or, where the
    /// batch's words lie close together, the bytes that hold them (`GETRANGE`).
    pub async fn contains_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let p = self.probes(keys);
        segments::check(&self.keyspace(), &p).await
    }

    /// Estimated number of distinct elements added (from `BITCOUNT` of every segment).
    pub async fn count(&self) -> Result<f64> {
        let ones = segments::count_ones(&self.keyspace(), self.layout.segments()).await?;
        Ok(self.layout.estimate_count(ones))
    }

    /// Parameters and current fill.
    pub async fn info(&self) -> Result<Info> {
        let ones = segments::count_ones(&self.keyspace(), self.layout.segments()).await?;
        let est = self.layout.estimate_count(ones);
        Ok(Info {
            name: self.name.clone(),
            kind: "register".into(),
            version: LAYOUT_VERSION,
            scheme: REGISTER_SCHEME.into(),
            hashing: self.hashing.id(),
            segments: self.layout.segments(),
            segment_words: self.layout.segment_words(),
            bits: self.layout.bits(),
            hashes: self.layout.hashes(),
            capacity: self.capacity,
            fpp: self.fpp,
            set_bits: ones,
            estimated_count: est,
            estimated_fpp: self.layout.expected_fpp(est.round() as u64),
            id: self.id.clone(),
        })
    }

    /// Removes every element (empties the segment keys; the metadata stays).
    pub async fn clear(&self) -> Result<()> {
        segments::clear(&self.keyspace(), &self.layout).await
    }

    /// Deletes the filter: its metadata, then its segments (in this order, see
    /// docs/REDIS.md, "Filter identity"). Deletes only the filter this handle opened: if the
    /// name now holds another filter (re-created meanwhile), that one is left alone and
    /// [`Error::Gone`] returned.
    pub async fn delete(self) -> Result<()> {
        delete_meta(&self.conn, &self.name, self.id.as_deref()).await?;
        segments::delete(&self.keyspace(), self.layout.segments()).await
    }
}

impl Stored for RedisFilter {
    fn from_meta(m: &Meta<'_>) -> Result<Self> {
        let hashing = m.head("register", REGISTER_SCHEME)?;
        let (id, keys) = segment_keys(m.name, m.fields)?;
        Ok(RedisFilter {
            conn: m.conn.clone(),
            name: m.name.into(),
            layout: m.register_layout(segment_count(m.name, m.fields)?)?,
            hashing,
            capacity: m.num("capacity")?,
            fpp: m.fpp()?,
            add_method: AddMethod::default(),
            id,
            key_of: Arc::new(move |s| keys.segment(s)),
        })
    }
}

/// What is stored under a filter name (see [`stored_kind`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredKind {
    /// A [`RedisFilter`].
    Register,
    /// A [`crate::ScalableRedisFilter`].
    Scalable,
    /// A [`crate::RedissonFilter`] (a Redisson config hash).
    Redisson,
    /// A [`crate::CountingRedisFilter`].
    Counting,
    /// A [`crate::TimeWindowRedisFilter`].
    TimeWindow,
    /// bloomkit metadata of a kind this version does not know.
    Unknown(String),
}

/// What is stored under `name`, if anything: bloomkit metadata first, then a Redisson config.
pub async fn stored_kind(conn: &Connection, name: &str) -> Result<Option<StoredKind>> {
    keys::check_name(name)?;
    let kind: Option<String> = conn
        .query(redis::cmd("HGET").arg(keys::meta(name)).arg("kind"))
        .await?;
    if let Some(k) = kind {
        return Ok(Some(match k.as_str() {
            "register" => StoredKind::Register,
            "scalable" => StoredKind::Scalable,
            crate::counting::COUNTING_KIND => StoredKind::Counting,
            crate::window::TIME_WINDOW_KIND => StoredKind::TimeWindow,
            _ => StoredKind::Unknown(k),
        }));
    }
    let redisson: i64 = conn
        .query(redis::cmd("EXISTS").arg(keys::redisson_config(name)))
        .await?;
    Ok((redisson == 1).then_some(StoredKind::Redisson))
}

/// Deletes the bloomkit filter (plain or scalable) or Redisson filter named `name`, whatever
/// its hashing (no key is needed): the metadata, then every segment. `Ok(false)` if there was
/// none. Metadata too corrupt to list the segments: [`Error::CorruptMetadata`], nothing
/// deleted.
pub async fn delete_filter(conn: &Connection, name: &str) -> Result<bool> {
    match crate::kinds::AnyFilter::by_name(conn, name).await? {
        Some(f) => f.delete().await.map(|()| true),
        None => Ok(false),
    }
}

/// Deletes the metadata hash if it still names filter `id` (any, for layout 1):
/// [`Error::Gone`] if it names another.
pub(crate) async fn delete_meta(conn: &Connection, name: &str, id: Option<&str>) -> Result<()> {
    let deleted: i64 = conn
        .script(
            &DELETE_SCRIPT,
            &[&keys::meta(name)],
            &[id.unwrap_or("").as_bytes()],
        )
        .await?;
    if deleted == 0 {
        return Err(Error::Gone(name.into()));
    }
    Ok(())
}

/// `KEYS[1]` = meta; `ARGV[1]` = the filter id, or '' for any. Deletes the metadata if it names
/// that id; returns 1 if deleted, 0 if not (another filter, or none).
static DELETE_SCRIPT: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r#"
local id = redis.call('HGET', KEYS[1], 'id')
if ARGV[1] ~= '' and id ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"#,
    )
});

impl RedisFilter {
    /// Reopens this filter by name, reading its metadata again: the filter that now has the
    /// name (after [`Error::Gone`], the new one). Keeps this handle's hashing if the stored
    /// metadata does not name its own.
    pub async fn reopen(&self) -> Result<Self> {
        let meta = read_meta(&self.conn, &self.name).await?;
        let hashing = match stored_hashing(&self.name, &meta) {
            Ok(h) => h,
            Err(Error::KeyRequired { .. }) => self.hashing.clone(),
            Err(e) => return Err(e),
        };
        let f = Self::from_meta(&Meta {
            conn: &self.conn,
            name: &self.name,
            fields: &meta,
            hashing: Some(hashing),
        })?;
        Ok(RedisFilter {
            add_method: self.add_method,
            ..f
        })
    }
}

impl RedisFilter {
    /// The key of segment `s`.
    pub fn segment_key(&self, s: u32) -> String {
        (self.key_of)(s)
    }

    /// The connection.
    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }
}
