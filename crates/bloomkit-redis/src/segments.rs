//! The commands that read and write a register-blocked filter's segments; shared by the plain
//! ([`crate::RedisFilter`]) and the scalable ([`crate::ScalableRedisFilter`]) filters.
//!
//! Words are in Redis bit order (see [`bloomkit::probe::register`]): a word's 8 bytes read
//! big-endian give the integer that the element masks are tested against.

use crate::conn::{script_cmd, Connection};
use crate::error::{Error, Result};
use crate::reads::{self, Field};
use bloomkit::probe::register::{RegisterLayout, RegisterProbe};
use futures_util::future::try_join_all;
use redis::Script;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Elements per command: bounds a command's size and the time the server spends on it. A batch
/// of 1,000 is split into 4 commands sent at once, so the client encodes and decodes one while
/// the server executes another.
pub const MAX_PER_COMMAND: usize = 256;

/// Bytes per upload command of the bulk path.
const UPLOAD_CHUNK: usize = 4 << 20;

/// How online adds reach the server. Both are atomic per element (each runs as one server-side
/// command or script over a whole group of elements); both report which elements were new.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AddMethod {
    /// One EVALSHA per segment and group; the script ORs each element's mask into its word
    /// (one `BITFIELD_RO ... GET u32` and one `BITFIELD ... SET u32` for the whole group).
    /// Measured slower than [`AddMethod::Bitfield`]: Redis's Lua spends microseconds per
    /// element building the argument tables (docs/REDIS.md).
    Script,
    /// One `BITFIELD key SET u1 <offset> 1 ...` per segment and group, `k` subcommands per
    /// element. The default: measured fastest (docs/REDIS.md).
    #[default]
    Bitfield,
}

/// The segment keys of one filter (or of one layer of a scalable filter) and how its commands
/// are guarded.
#[derive(Clone, Copy)]
pub(crate) struct Keyspace<'a> {
    /// The connection.
    pub conn: &'a Connection,
    /// The filter's name (for errors).
    pub name: &'a str,
    /// Segment index → key name.
    pub key_of: &'a (dyn Fn(u32) -> String + Sync),
    /// Layout 2: the segment keys (named after the filter's id) exist from creation on, every
    /// write refuses to run on a missing one and every read reports it, so a client whose filter
    /// was deleted or re-created gets [`Error::Gone`] and never creates or writes a key of the
    /// new filter. Layout-1 filters (no id) are written unguarded, as they always were.
    pub guarded: bool,
}

impl<'a> Keyspace<'a> {
    /// The keyspace of filter `name` whose segment `i` is the key `key_of(i)`.
    pub fn new(
        conn: &'a Connection,
        name: &'a str,
        key_of: &'a (dyn Fn(u32) -> String + Sync),
        guarded: bool,
    ) -> Self {
        Keyspace {
            conn,
            name,
            key_of,
            guarded,
        }
    }

    fn key(&self, segment: u32) -> String {
        (self.key_of)(segment)
    }

    fn guard_arg(&self) -> &'static str {
        if self.guarded {
            "1"
        } else {
            "0"
        }
    }
}

/// The guard every write script starts with: with `ARGV[1]` = '1', a missing segment key
/// (`KEYS[1]`) makes the script fail with the `BLOOMKIT_GONE` code before writing anything.
macro_rules! guarded_script {
    ($body:expr) => {
        concat!(
            "if ARGV[1] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then\n",
            "  return redis.error_reply('BLOOMKIT_GONE the filter was deleted or re-created')\n",
            "end\n",
            $body
        )
    };
}
pub(crate) use guarded_script;

/// `KEYS[1]` = segment; `ARGV[1]` = guard flag; `ARGV[2]` = records of 12 bytes (4-byte big-endian
/// word index, 8-byte big-endian mask). Reads every touched word with one
/// `BITFIELD_RO ... GET u32` (two 32-bit halves per word: Lua numbers are doubles and its bit
/// library works on 32 bits), ORs the masks in Lua (elements sharing a word see each other's
/// bits), writes the changed words back with `BITFIELD ... SET u32`, and returns one byte per
/// record, '1' if the element was new. The script runs atomically. (A first version did
/// `GETRANGE`/`SETRANGE` per element: ~14 µs of server time per element, slower than
/// `BITFIELD SET u1`; see docs/REDIS.md.)
pub(crate) static ADD_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(guarded_script!(
        r#"
local key = KEYS[1]
local recs = ARGV[2]
local n = #recs / 12
local get = {'BITFIELD_RO', key}
local slot_of = {}
local words = {}
local el = {}
for i = 1, n do
  local w, mh, ml = struct.unpack('>I4I4I4', recs, (i - 1) * 12 + 1)
  local s = slot_of[w]
  if not s then
    s = #words + 1
    slot_of[w] = s
    words[s] = w
    local g = #get
    get[g + 1] = 'GET'; get[g + 2] = 'u32'; get[g + 3] = '#' .. (2 * w)
    get[g + 4] = 'GET'; get[g + 5] = 'u32'; get[g + 6] = '#' .. (2 * w + 1)
  end
  el[i] = s; el[n + i] = mh; el[2 * n + i] = ml
end
local vals = redis.call(unpack(get))
local dirty = {}
local out = {}
for i = 1, n do
  local s = el[i]
  local oh, ol = vals[2 * s - 1], vals[2 * s]
  local h, l = bit.bor(oh, el[n + i]), bit.bor(ol, el[2 * n + i])
  if h < 0 then h = h + 4294967296 end
  if l < 0 then l = l + 4294967296 end
  if h ~= oh or l ~= ol then
    vals[2 * s - 1] = h; vals[2 * s] = l
    dirty[s] = true
    out[i] = '1'
  else
    out[i] = '0'
  end
end
-- Lua's unpack() takes at most ~8,000 values: write at most 512 words per BITFIELD.
local set = {'BITFIELD', key}
for s, _ in pairs(dirty) do
  local w = words[s]
  local g = #set
  set[g + 1] = 'SET'; set[g + 2] = 'u32'; set[g + 3] = '#' .. (2 * w); set[g + 4] = vals[2 * s - 1]
  set[g + 5] = 'SET'; set[g + 6] = 'u32'; set[g + 7] = '#' .. (2 * w + 1); set[g + 8] = vals[2 * s]
  if #set >= 2 + 8 * 512 then
    redis.call(unpack(set))
    set = {'BITFIELD', key}
  end
end
if #set > 2 then redis.call(unpack(set)) end
return table.concat(out)
"#
    ))
});

/// Lua function `bitfield(cmd, key, args, first, overflow)`: runs `cmd key [OVERFLOW overflow]`
/// (`BITFIELD` or `BITFIELD_RO`) with the subcommands `args[first..]` in slices of 3,996
/// arguments (Lua's `unpack` limit is about 8,000; 3,996 is a multiple of both 3 and 4, the
/// argument counts of `GET` and `SET`/`INCRBY` subcommands) and returns the concatenated
/// replies (`false` where `OVERFLOW FAIL` refused a subcommand).
macro_rules! bitfield_fn {
    () => {
        r#"
local function bitfield(cmd, key, args, first, overflow)
  local n = #args
  local out = {}
  local i = first
  while i <= n do
    local j = math.min(n, i + 3995)
    local r
    if overflow then
      r = redis.call(cmd, key, 'OVERFLOW', overflow, unpack(args, i, j))
    else
      r = redis.call(cmd, key, unpack(args, i, j))
    end
    if i == first and j == n then return r end
    for x = 1, #r do out[#out + 1] = r[x] end
    i = j + 1
  end
  return out
end
"#
    };
}
pub(crate) use bitfield_fn;

/// Lua that runs `BITFIELD KEYS[1]` with the subcommands `ARGV[first..]` and returns the
/// concatenated replies (see [`bitfield_fn`]).
macro_rules! bitfield_from {
    ($first:literal) => {
        concat!(
            bitfield_fn!(),
            "return bitfield('BITFIELD', KEYS[1], ARGV, ",
            $first,
            ")\n"
        )
    };
}

/// `KEYS[1]` = segment; `ARGV[1]` = guard flag; `ARGV[2..]` = `BITFIELD` subcommands of 4 arguments
/// each (`SET u1 <offset> 1`, or `INCRBY u8 #<byte> 0` to grow the string): the guarded form
/// of one `BITFIELD` command.
pub(crate) static BITFIELD_SCRIPT: LazyLock<Script> =
    LazyLock::new(|| Script::new(guarded_script!(bitfield_from!("2"))));

/// `KEYS[1]` = a Redisson bitmap, `KEYS[2]` = its config hash (same slot); `ARGV[1]` = `size`,
/// `ARGV[2]` = `hashIterations`, `ARGV[3]` = `bloomkitId` ('' if the filter has none);
/// `ARGV[4..]` = `BITFIELD` subcommands. Fails with `BLOOMKIT_GONE` before writing anything if
/// the config is gone or describes another filter.
pub(crate) static REDISSON_ADD_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        r#"
local c = redis.call('HMGET', KEYS[2], 'size', 'hashIterations', 'bloomkitId')
if c[1] ~= ARGV[1] or c[2] ~= ARGV[2] or (ARGV[3] ~= '' and c[3] ~= ARGV[3]) then
  return redis.error_reply('BLOOMKIT_GONE the filter was deleted or re-created')
end
"#,
        bitfield_from!("4")
    ))
});

/// `KEYS[1]` = segment, `KEYS[2]` = its temporary key (same slot); `ARGV[1]` = guard flag,
/// `ARGV[2]` = byte offset, `ARGV[3]` = bytes. Returns the segment's bytes at that range before
/// the merge, then ORs the bytes into the segment with `BITOP OR` through the temporary key,
/// which is created with an expiry in the same step and deleted before the script returns (so
/// it exists only while the script runs; the expiry covers an error in between).
pub(crate) static MERGE_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(guarded_script!(
        r#"
local off = tonumber(ARGV[2])
local old = redis.call('GETRANGE', KEYS[1], off, off + #ARGV[3] - 1)
redis.call('SETRANGE', KEYS[2], off, ARGV[3])
redis.call('PEXPIRE', KEYS[2], 60000)
local ok, err = pcall(redis.call, 'BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
redis.call('DEL', KEYS[2])
if not ok then return err end
return old
"#
    ))
});

/// Puts the per-group answers back in the order of the `len` probes that [`groups`] grouped.
pub(crate) fn ungroup(
    groups: &[(u32, Vec<usize>)],
    results: Vec<Vec<bool>>,
    len: usize,
) -> Vec<bool> {
    let mut out = vec![false; len];
    for ((_, idx), flags) in groups.iter().zip(results) {
        for (&i, f) in idx.iter().zip(flags) {
            out[i] = f;
        }
    }
    out
}

/// Groups the probes' indices by segment and splits each group into commands of at most
/// [`MAX_PER_COMMAND`] elements.
pub(crate) fn groups(probes: &[RegisterProbe]) -> Vec<(u32, Vec<usize>)> {
    groups_by(probes.len(), |i| probes[i].segment)
}

/// Groups the indices `0..len` by their segment `segment(i)` and splits each group into
/// commands of at most [`MAX_PER_COMMAND`] elements.
pub(crate) fn groups_by(len: usize, segment: impl Fn(usize) -> u32) -> Vec<(u32, Vec<usize>)> {
    let mut out = Vec::new();
    for (seg, idx) in by_segment(len, segment) {
        for chunk in idx.chunks(MAX_PER_COMMAND) {
            out.push((seg, chunk.to_vec()));
        }
    }
    out
}

/// The indices `0..len` by their segment `segment(i)`, in increasing order within a segment.
pub(crate) fn by_segment(len: usize, segment: impl Fn(usize) -> u32) -> Vec<(u32, Vec<usize>)> {
    let all: Vec<usize> = (0..len).collect();
    if len == 0 || all.iter().all(|&i| segment(i) == segment(0)) {
        // One segment (the usual case for filters up to 2^27 bits): no map needed.
        return if len == 0 {
            Vec::new()
        } else {
            vec![(segment(0), all)]
        };
    }
    let mut by_segment: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in all {
        by_segment.entry(segment(i)).or_default().push(i);
    }
    by_segment.into_iter().collect()
}

/// Runs `BITFIELD key <subcommands>` on segment `seg`, the `args` subcommand arguments written
/// by `write`, refusing a missing segment when the keyspace is guarded.
///
/// Guarded on a standalone server: `MULTI; EXISTS key; BITFIELD key …; EXEC`, atomic. If the
/// key did not exist, the `BITFIELD` has just created it for a filter that was deleted or
/// re-created: the key is named after the old filter's id, so no other filter can be using it;
/// it is deleted again and the write fails with [`Error::Gone`], acknowledging nothing. This
/// costs the server about half of the same guard as a script ([`BITFIELD_SCRIPT`]), which
/// converts every argument into Lua and back. On a cluster the script is kept, as for the
/// counting filter: its check and write cannot be undone by a client that loses the node in
/// between. Unguarded (layout 1): the plain command.
async fn bitfield(
    ks: &Keyspace<'_>,
    seg: u32,
    args: usize,
    write: impl Fn(&mut redis::Cmd),
) -> Result<Vec<i64>> {
    let key = ks.key(seg);
    if ks.guarded && ks.conn.is_cluster() {
        let mut cmd = script_cmd(&BITFIELD_SCRIPT, &[&key], 1 + args);
        cmd.arg(ks.guard_arg());
        write(&mut cmd);
        return ks
            .conn
            .eval(&BITFIELD_SCRIPT, &cmd)
            .await
            .map_err(|e| e.about(ks.name));
    }
    let mut cmd = redis::Cmd::with_capacity(2 + args, 16 * args);
    cmd.arg("BITFIELD").arg(&key);
    write(&mut cmd);
    if !ks.guarded {
        return ks.conn.query(&cmd).await;
    }
    write_if_exists(ks.conn, &key, ks.name, cmd).await
}

/// Runs `cmd`, a `BITFIELD` write of segment `key` of filter `name`, as `MULTI; EXISTS key;
/// cmd; EXEC` (atomic). If the key did not exist, `cmd` has just created it for a deleted
/// filter (its name carries that filter's id, which no other filter uses): it is deleted
/// again and the write fails with [`Error::Gone`].
pub(crate) async fn write_if_exists(
    conn: &Connection,
    key: &str,
    name: &str,
    cmd: redis::Cmd,
) -> Result<Vec<i64>> {
    Ok(write_if_guard_exists(conn, key, key, name, cmd, Vec::new())
        .await?
        .0)
}

/// Runs `MULTI; EXISTS guard; cmd; then…; EXEC` (atomic), where `cmd` is a `BITFIELD` write of
/// `key` (the guard itself, or a key in its slot named after the same filter id) and `then`
/// are commands with integer replies. Returns the replies of `cmd` and of `then`. If `guard`
/// did not exist, the filter was deleted: `cmd` may have created `key` again, under the
/// deleted filter's id, which no other filter uses; it is deleted and the write fails with
/// [`Error::Gone`].
pub(crate) async fn write_if_guard_exists(
    conn: &Connection,
    guard: &str,
    key: &str,
    name: &str,
    cmd: redis::Cmd,
    then: Vec<redis::Cmd>,
) -> Result<(Vec<i64>, Vec<i64>)> {
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("EXISTS").arg(guard).add_command(cmd);
    for c in then {
        pipe.add_command(c);
    }
    let replies: Vec<redis::Value> = conn.pipe(&pipe).await?;
    let mut it = replies.into_iter();
    let mut next = || {
        it.next()
            .ok_or_else(|| unexpected("transaction reply length"))
    };
    let exists: i64 = parse(next()?)?;
    let values: Vec<i64> = parse(next()?)?;
    let rest = it.map(parse).collect::<Result<Vec<i64>>>()?;
    if exists == 0 {
        let _: i64 = conn.query(redis::cmd("DEL").arg(key)).await?;
        return Err(Error::Gone(name.to_string()));
    }
    Ok((values, rest))
}

/// Runs every write of `futs` to the end, then returns their results, or the first error.
/// Unlike `try_join_all`, a failed write does not cancel the others half-way: a guarded write
/// that found its filter deleted must still delete the key its transaction wrote
/// ([`write_if_guard_exists`]).
pub(crate) async fn join_writes<T>(
    futs: impl IntoIterator<Item = impl std::future::Future<Output = Result<T>>>,
) -> Result<Vec<T>> {
    futures_util::future::join_all(futs)
        .await
        .into_iter()
        .collect()
}

/// A reply as `T`.
pub(crate) fn parse<T: redis::FromRedisValue>(v: redis::Value) -> Result<T> {
    redis::from_redis_value(v).map_err(|e| unexpected(&e.to_string()))
}

/// Sets each element's bits; returns whether each element was new (had a bit unset).
pub(crate) async fn add(
    ks: &Keyspace<'_>,
    probes: &[RegisterProbe],
    method: AddMethod,
) -> Result<Vec<bool>> {
    let groups = groups(probes);
    let futs = groups.iter().map(|(seg, idx)| async move {
        match method {
            AddMethod::Script => {
                let mut recs = Vec::with_capacity(idx.len() * 12);
                for &i in idx {
                    let p = &probes[i];
                    let off = u32::try_from(p.word).map_err(|_| {
                        Error::Core(bloomkit::Error::TooLarge {
                            bits: p.word * 64,
                            limit: "a segment holds at most 2^32 bits",
                        })
                    })?;
                    recs.extend_from_slice(&off.to_be_bytes());
                    recs.extend_from_slice(&p.mask.to_be_bytes());
                }
                let key = ks.key(*seg);
                let flags: Vec<u8> = ks
                    .conn
                    .script(&ADD_SCRIPT, &[&key], &[ks.guard_arg().as_bytes(), &recs])
                    .await
                    .map_err(|e| e.about(ks.name))?;
                if flags.len() != idx.len() {
                    return Err(unexpected("add script reply length"));
                }
                Ok(flags.into_iter().map(|f| f == b'1').collect::<Vec<_>>())
            }
            AddMethod::Bitfield => {
                let bits = set_bits_args(probes, idx);
                let old = bitfield(ks, *seg, bits, |cmd| write_set_bits(cmd, probes, idx)).await?;
                new_from_old_bits(probes, idx, old)
            }
        }
    });
    Ok(ungroup(&groups, join_writes(futs).await?, probes.len()))
}

/// The number of arguments [`write_set_bits`] writes.
pub(crate) fn set_bits_args(probes: &[RegisterProbe], idx: &[usize]) -> usize {
    4 * idx
        .iter()
        .map(|&i| probes[i].mask.count_ones() as usize)
        .sum::<usize>()
}

/// Writes `SET u1 <offset> 1` for every bit of the elements `idx` (an online add).
pub(crate) fn write_set_bits(cmd: &mut redis::Cmd, probes: &[RegisterProbe], idx: &[usize]) {
    let mut num = Vec::with_capacity(20);
    for &i in idx {
        for off in probes[i].bit_offsets() {
            num.clear();
            push_decimal(&mut num, off);
            cmd.arg("SET").arg("u1").arg(&num[..]).arg("1");
        }
    }
}

/// Whether each element of `idx` was new, from the old bits a `BITFIELD SET u1` of its bits
/// returned (new: one of them was 0).
pub(crate) fn new_from_old_bits(
    probes: &[RegisterProbe],
    idx: &[usize],
    old: Vec<i64>,
) -> Result<Vec<bool>> {
    let mut it = old.into_iter();
    let mut out = Vec::with_capacity(idx.len());
    for &i in idx {
        let mut new = false;
        for _ in 0..probes[i].mask.count_ones() {
            new |= it.next().ok_or_else(|| unexpected("BITFIELD reply"))? == 0;
        }
        out.push(new);
    }
    Ok(out)
}

/// Whether each element's bits are all set: one pipeline per touched segment with the reads
/// [`reads::plan`] chooses: per element the span of its word from its first to its last bit
/// with one `BITFIELD_RO` subcommand, or, where a batch's words lie close
/// together, one `GETRANGE` of the bytes that hold them; the client tests the masks.
///
/// Reading the span rather than the whole word is measured faster: Redis extracts a field bit
/// by bit, and a shorter field also makes a shorter reply to send and parse (the span of `k = 3`
/// random bits covers half the word on average).
pub(crate) async fn check(ks: &Keyspace<'_>, probes: &[RegisterProbe]) -> Result<Vec<bool>> {
    let spans: Vec<Span> = probes.iter().map(Span::of).collect();
    let segments = by_segment(probes.len(), |i| probes[i].segment);
    let futs = segments.iter().map(|(seg, idx)| {
        let spans = &spans;
        async move {
            let key = ks.key(*seg);
            let fields: Vec<Field> = idx.iter().map(|&i| spans[i].field()).collect();
            // `EXISTS` after the reads on the same connection: a segment key, once gone, never
            // comes back (writes never create it), so if it exists after the reads it existed
            // during them.
            let guard = ks.guarded.then(|| {
                let mut c = redis::cmd("EXISTS");
                c.arg(&key);
                c
            });
            let mut present = vec![false; idx.len()];
            let exists = reads::read_then(ks.conn, &key, &fields, guard, |f, value| {
                let m = spans[idx[f]].mask;
                present[f] = value & m == m;
            })
            .await?;
            if let Some(v) = exists {
                if parse::<i64>(v)? == 0 {
                    return Err(Error::Gone(ks.name.to_string()));
                }
            }
            Ok(present)
        }
    });
    let answers = try_join_all(futs).await?;
    Ok(ungroup(&segments, answers, probes.len()))
}

/// The part of an element's word that holds its bits, from its first to its last bit in Redis
/// order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// Bit offset of the first bit inside the segment.
    pub offset: u64,
    /// Bits in the span, `1..=64`.
    pub width: u32,
    /// The element's bits within the span's value (the span's last bit is the value's bit 0).
    pub mask: u64,
}

impl Span {
    /// The span as a field to read.
    pub(crate) fn field(&self) -> Field {
        Field {
            offset: self.offset,
            width: self.width,
        }
    }

    pub(crate) fn of(p: &RegisterProbe) -> Span {
        // A mask is never empty (k ≥ 1); the `min`s keep an empty one from overflowing.
        let first = p.mask.leading_zeros().min(63);
        let shift = p.mask.trailing_zeros().min(63 - first);
        Span {
            offset: p.word * 64 + u64::from(first),
            width: 64 - first - shift,
            mask: p.mask >> shift,
        }
    }
}

/// Bulk add: builds each touched segment's bits locally and merges the touched byte range into
/// the segment with [`MERGE_SCRIPT`] (one atomic script per [`UPLOAD_CHUNK`] bytes), which also
/// returns the range's bytes from before the merge. Returns whether each element was new:
/// whether some bit of it was unset before this call's merge or an earlier element of this call
/// (the same answer as adding the elements one by one), so concurrent writers each count their
/// own new elements.
pub(crate) async fn add_bulk(
    ks: &Keyspace<'_>,
    layout: &RegisterLayout,
    probes: &[RegisterProbe],
) -> Result<Vec<bool>> {
    let mut by_segment: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, p) in probes.iter().enumerate() {
        by_segment.entry(p.segment).or_default().push(i);
    }
    let mut new = vec![false; probes.len()];
    for (seg, idx) in by_segment {
        let lo = idx.iter().map(|&i| probes[i].word).min().unwrap_or(0);
        let hi = idx.iter().map(|&i| probes[i].word).max().unwrap_or(0);
        debug_assert!(hi < layout.segment_words());
        let len = usize::try_from(hi - lo + 1).map_err(|_| unexpected("segment too large"))?;
        let mut words = bloomkit::storage::BitVec::zeros(len as u64 * 64)?.into_words();
        for &i in &idx {
            words[(probes[i].word - lo) as usize] |= probes[i].mask;
        }
        let mut bytes = Vec::with_capacity(len * 8);
        for w in &words {
            bytes.extend_from_slice(&w.to_be_bytes());
        }
        let key = ks.key(seg);
        let tmp = crate::keys::temp(&key);
        let mut old = Vec::with_capacity(bytes.len());
        for (c, chunk) in bytes.chunks(UPLOAD_CHUNK).enumerate() {
            let offset = lo * 8 + (c * UPLOAD_CHUNK) as u64;
            let offset = offset.to_string();
            let mut before: Vec<u8> = ks
                .conn
                .script(
                    &MERGE_SCRIPT,
                    &[&key, &tmp],
                    &[ks.guard_arg().as_bytes(), offset.as_bytes(), chunk],
                )
                .await
                .map_err(|e| e.about(ks.name))?;
            // A lazily grown segment may end before the range: the rest reads as zeros.
            before.resize(chunk.len(), 0);
            old.extend_from_slice(&before);
        }
        // Replay the elements in order on the old words: new if a bit was unset.
        for (w, b) in words.iter_mut().zip(old.chunks_exact(8)) {
            *w = u64::from_be_bytes(b.try_into().expect("8 bytes"));
        }
        for &i in &idx {
            let w = &mut words[(probes[i].word - lo) as usize];
            new[i] = *w & probes[i].mask != probes[i].mask;
            *w |= probes[i].mask;
        }
    }
    Ok(new)
}

/// At most this many segment commands are in flight at once for whole-filter operations
/// (count, delete, create), so memory does not grow with the number of segments.
pub(crate) const IN_FLIGHT: u32 = 64;

/// Number of set bits over the segments.
pub(crate) async fn count_ones(ks: &Keyspace<'_>, segments: u32) -> Result<u64> {
    let mut total = 0;
    for start in (0..segments).step_by(IN_FLIGHT as usize) {
        let end = start.saturating_add(IN_FLIGHT).min(segments);
        let futs = (start..end).map(|s| async move {
            let key = ks.key(s);
            if ks.guarded {
                let mut pipe = redis::pipe();
                pipe.cmd("BITCOUNT").arg(&key).cmd("EXISTS").arg(&key);
                let (n, exists): (u64, i64) = ks.conn.pipe(&pipe).await?;
                if exists == 0 {
                    return Err(Error::Gone(ks.name.to_string()));
                }
                Ok(n)
            } else {
                ks.conn.query(redis::cmd("BITCOUNT").arg(&key)).await
            }
        });
        total += try_join_all(futs).await?.into_iter().sum::<u64>();
    }
    Ok(total)
}

/// Runs `cmd(key)` on every segment key, [`IN_FLIGHT`] at a time.
pub(crate) async fn each_segment(
    ks: &Keyspace<'_>,
    segments: u32,
    cmd: impl Fn(&str) -> redis::Cmd + Sync,
) -> Result<()> {
    for start in (0..segments).step_by(IN_FLIGHT as usize) {
        let end = start.saturating_add(IN_FLIGHT).min(segments);
        let futs = (start..end).map(|s| {
            let cmd = cmd(&ks.key(s));
            async move { ks.conn.query::<redis::Value>(&cmd).await }
        });
        try_join_all(futs).await?;
    }
    Ok(())
}

/// Deletes the segment keys.
pub(crate) async fn delete(ks: &Keyspace<'_>, segments: u32) -> Result<()> {
    each_segment(ks, segments, |k| {
        let mut c = redis::cmd("DEL");
        c.arg(k);
        c
    })
    .await
}

/// Creates the segment keys of a new layout-2 filter (one zero byte each, `SET NX`), then grows
/// large ones (see [`pre_grow`]).
pub(crate) async fn create(ks: &Keyspace<'_>, layout: &RegisterLayout) -> Result<()> {
    each_segment(ks, layout.segments(), |k| {
        let mut c = redis::cmd("SET");
        c.arg(k).arg(&[0u8][..]).arg("NX");
        c
    })
    .await?;
    pre_grow(ks, layout).await
}

/// Empties every segment. Layout 2: replaces each value with one zero byte (`SET XX`: a key
/// deleted meanwhile stays deleted); layout 1: deletes the keys.
pub(crate) async fn clear(ks: &Keyspace<'_>, layout: &RegisterLayout) -> Result<()> {
    if ks.guarded {
        each_segment(ks, layout.segments(), |k| {
            let mut c = redis::cmd("SET");
            c.arg(k).arg(&[0u8][..]).arg("XX");
            c
        })
        .await?;
    } else {
        delete(ks, layout.segments()).await?;
    }
    pre_grow(ks, layout).await
}

/// Segments grow lazily: the first write at a high offset makes Redis allocate the string up to
/// it. Segments larger than this are pre-grown in steps of this size at creation, so that no
/// single command makes the server allocate (and zero) more than 16 MiB at once.
pub const GROW_STEP_BYTES: u64 = 16 << 20;

/// Pre-grows large segments in [`GROW_STEP_BYTES`] steps (see there).
pub(crate) async fn pre_grow(ks: &Keyspace<'_>, layout: &RegisterLayout) -> Result<()> {
    let seg_bytes = layout.segment_words() * 8;
    if seg_bytes <= GROW_STEP_BYTES {
        return Ok(());
    }
    for s in 0..layout.segments() {
        let mut end = GROW_STEP_BYTES.min(seg_bytes);
        loop {
            // `INCRBY u8 ... 0` extends the string to `end` bytes without changing any bit, so it
            // is safe while other clients are already adding.
            let at = format!("#{}", end - 1);
            let _ = bitfield(ks, s, 4, |cmd| {
                cmd.arg("INCRBY").arg("u8").arg(&at).arg(0);
            })
            .await?;
            if end == seg_bytes {
                break;
            }
            end = (end + GROW_STEP_BYTES).min(seg_bytes);
        }
    }
    Ok(())
}

pub(crate) fn unexpected(what: &str) -> Error {
    Error::Server(redis::RedisError::from((
        redis::ErrorKind::Client,
        "unexpected reply",
        what.to_string(),
    )))
}

/// Appends the decimal digits of `x` (cheaper than `format!` in the per-element loop).
pub(crate) fn push_decimal(out: &mut Vec<u8>, x: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::Span;
    use bloomkit::probe::register::RegisterProbe;

    /// Testing an element against its span gives the same answer as testing it against the
    /// whole word, and the span starts at the element's first bit offset and ends at its last.
    #[test]
    fn span_test_equals_word_test() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..20_000 {
            let bits = 1 + case % 4;
            let mut mask = 0u64;
            for _ in 0..bits {
                mask |= 1 << (next() % 64);
            }
            if case % 1000 == 0 {
                mask = 1 << 63 | 1; // the whole word
            }
            let p = RegisterProbe {
                segment: 0,
                word: next() % 1000,
                mask,
            };
            let s = Span::of(&p);
            let offsets: Vec<u64> = p.bit_offsets().collect();
            assert_eq!(s.offset, offsets[0]);
            assert_eq!(s.offset + u64::from(s.width) - 1, *offsets.last().unwrap());
            for _ in 0..4 {
                // Words from sparse to dense, and the element's own bits.
                let word = match next() % 4 {
                    0 => next() & next(),
                    1 => next(),
                    2 => next() | next() | mask,
                    _ => next() | next(),
                };
                // What Redis returns for `GET u<width> <offset>`: the span's bits, the first
                // (most significant in Redis order) on top.
                let shift = 64 - (s.offset - p.word * 64) as u32 - s.width;
                let value = if s.width == 64 {
                    word
                } else {
                    (word >> shift) & ((1u64 << s.width) - 1)
                };
                assert_eq!(
                    value & s.mask == s.mask,
                    word & mask == mask,
                    "{mask:x} {word:x}"
                );
            }
        }
    }

    #[test]
    fn decimal() {
        for x in [0u64, 7, 10, 12345, u64::MAX] {
            let mut v = Vec::new();
            super::push_decimal(&mut v, x);
            assert_eq!(v, x.to_string().as_bytes());
        }
    }
}
