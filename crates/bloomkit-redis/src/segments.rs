//! The commands that read and write a register-blocked filter's segments; shared by the plain
//! ([`crate::RedisFilter`]) and the scalable ([`crate::ScalableRedisFilter`]) filters.
//!
//! Words are in Redis bit order (see [`bloomkit::probe::register`]): a word's 8 bytes read
//! big-endian give the integer that the element masks are tested against.

use crate::conn::Connection;
use crate::error::{Error, Result};
use bloomkit::probe::register::{RegisterLayout, RegisterProbe};
use futures_util::future::try_join_all;
use redis::Script;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

/// Elements per command: bounds a command's size and the time the server spends on it.
pub const MAX_PER_COMMAND: usize = 1024;

/// Bytes per upload command of the bulk path.
const UPLOAD_CHUNK: usize = 4 << 20;

/// How online adds reach the server. Both are atomic per element (each runs as one server-side
/// command or script over a whole group of elements); both report which elements were new.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AddMethod {
    /// One EVALSHA per segment and batch; the script ORs each element's mask into its word
    /// (`GETRANGE` + `SETRANGE` of 8 bytes). The default: measured fastest (docs/REDIS.md).
    #[default]
    Script,
    /// One `BITFIELD key SET u1 <offset> 1 ...` per segment and batch, `k` subcommands per
    /// element.
    Bitfield,
}

/// KEYS[1] = segment; ARGV[1] = records of 12 bytes (4-byte big-endian byte offset, 8-byte
/// mask). ORs each mask into its word; returns one byte per record, '1' if any bit was new.
pub(crate) static ADD_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local key = KEYS[1]
local recs = ARGV[1]
local out = {}
local n = #recs / 12
for i = 0, n - 1 do
  local p = i * 12
  local off = struct.unpack('>I4', recs, p + 1)
  local cur = redis.call('GETRANGE', key, off, off + 7)
  local b = {}
  local changed = false
  for j = 1, 8 do
    local c = string.byte(cur, j) or 0
    local v = bit.bor(c, string.byte(recs, p + 4 + j))
    if v ~= c then changed = true end
    b[j] = v
  end
  if changed then
    redis.call('SETRANGE', key, off, string.char(b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8]))
    out[i + 1] = '1'
  else
    out[i + 1] = '0'
  end
end
return table.concat(out)
"#,
    )
});

/// KEYS[1] = segment, KEYS[2] = temporary key in the same slot: segment |= temp; delete temp.
pub(crate) static MERGE_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
redis.call('BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
redis.call('DEL', KEYS[2])
return 1
"#,
    )
});

/// Groups `(element index, probe)` by segment and splits each group into commands of at most
/// [`MAX_PER_COMMAND`] elements.
fn groups(probes: &[RegisterProbe]) -> Vec<(u32, Vec<usize>)> {
    let mut by_segment: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, p) in probes.iter().enumerate() {
        by_segment.entry(p.segment).or_default().push(i);
    }
    let mut out = Vec::new();
    for (seg, idx) in by_segment {
        for chunk in idx.chunks(MAX_PER_COMMAND) {
            out.push((seg, chunk.to_vec()));
        }
    }
    out
}

/// Sets each element's bits; returns whether each element was new (had a bit unset).
pub(crate) async fn add(
    conn: &Connection,
    key_of: &(dyn Fn(u32) -> String + Sync),
    probes: &[RegisterProbe],
    method: AddMethod,
) -> Result<Vec<bool>> {
    let groups = groups(probes);
    let futs = groups.iter().map(|(seg, idx)| async move {
        let key = key_of(*seg);
        match method {
            AddMethod::Script => {
                let mut recs = Vec::with_capacity(idx.len() * 12);
                for &i in idx {
                    let p = &probes[i];
                    let off = u32::try_from(p.byte_offset()).map_err(|_| {
                        Error::Core(bloomkit::Error::TooLarge {
                            bits: p.byte_offset() * 8,
                            limit: "a segment holds at most 2^32 bits",
                        })
                    })?;
                    recs.extend_from_slice(&off.to_be_bytes());
                    recs.extend_from_slice(&p.mask.to_be_bytes());
                }
                let flags: Vec<u8> = conn.script(&ADD_SCRIPT, &[&key], &[&recs]).await?;
                if flags.len() != idx.len() {
                    return Err(unexpected("add script reply length"));
                }
                Ok(flags.into_iter().map(|f| f == b'1').collect::<Vec<_>>())
            }
            AddMethod::Bitfield => {
                let mut cmd = redis::cmd("BITFIELD");
                cmd.arg(&key);
                for &i in idx {
                    for off in probes[i].bit_offsets() {
                        cmd.arg("SET").arg("u1").arg(off).arg(1);
                    }
                }
                let old: Vec<u8> = conn.query(&cmd).await?;
                let mut it = old.into_iter();
                let mut out = Vec::with_capacity(idx.len());
                for &i in idx {
                    let k = probes[i].mask.count_ones() as usize;
                    let mut new = false;
                    for _ in 0..k {
                        new |= it.next().ok_or_else(|| unexpected("BITFIELD reply"))? == 0;
                    }
                    out.push(new);
                }
                Ok(out)
            }
        }
    });
    let results = try_join_all(futs).await?;
    let mut out = vec![false; probes.len()];
    for ((_, idx), flags) in groups.iter().zip(results) {
        for (&i, f) in idx.iter().zip(flags) {
            out[i] = f;
        }
    }
    Ok(out)
}

/// Whether each element's bits are all set: reads one word per element with
/// `BITFIELD_RO key GET i64 #<word> ...` and tests the mask on the client.
pub(crate) async fn check(
    conn: &Connection,
    key_of: &(dyn Fn(u32) -> String + Sync),
    probes: &[RegisterProbe],
) -> Result<Vec<bool>> {
    let groups = groups(probes);
    let futs = groups.iter().map(|(seg, idx)| async move {
        let mut cmd = redis::cmd("BITFIELD_RO");
        cmd.arg(key_of(*seg));
        for &i in idx {
            cmd.arg("GET")
                .arg("i64")
                .arg(format!("#{}", probes[i].word));
        }
        let words: Vec<i64> = conn.query(&cmd).await?;
        if words.len() != idx.len() {
            return Err(unexpected("BITFIELD_RO reply length"));
        }
        Ok(idx
            .iter()
            .zip(words)
            .map(|(&i, w)| (w as u64) & probes[i].mask == probes[i].mask)
            .collect::<Vec<_>>())
    });
    let results = try_join_all(futs).await?;
    let mut out = vec![false; probes.len()];
    for ((_, idx), flags) in groups.iter().zip(results) {
        for (&i, f) in idx.iter().zip(flags) {
            out[i] = f;
        }
    }
    Ok(out)
}

static TEMP_IDS: AtomicU64 = AtomicU64::new(0);

fn temp_id() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ (u64::from(std::process::id()) << 40)
        ^ TEMP_IDS
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Bulk add: builds each touched segment's bits locally, uploads the touched byte range to a
/// temporary key in the segment's slot, and merges it with `BITOP OR` in one script (atomic),
/// which also deletes the temporary key. Does not report which elements were new.
pub(crate) async fn add_bulk(
    conn: &Connection,
    key_of: &(dyn Fn(u32) -> String + Sync),
    layout: &RegisterLayout,
    probes: &[RegisterProbe],
) -> Result<()> {
    let mut by_segment: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, p) in probes.iter().enumerate() {
        by_segment.entry(p.segment).or_default().push(i);
    }
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
        drop(words);
        let key = key_of(seg);
        let tmp = crate::keys::temp(&key, temp_id());
        let result = async {
            let mut start = 0usize;
            while start < bytes.len() {
                let end = (start + UPLOAD_CHUNK).min(bytes.len());
                let mut cmd = redis::cmd("SETRANGE");
                cmd.arg(&tmp)
                    .arg(lo * 8 + start as u64)
                    .arg(&bytes[start..end]);
                let _: u64 = conn.query(&cmd).await?;
                start = end;
            }
            // A safety net: the temporary key expires if this client dies before merging.
            let _: i64 = conn
                .query(redis::cmd("PEXPIRE").arg(&tmp).arg(600_000))
                .await?;
            let _: i64 = conn.script(&MERGE_SCRIPT, &[&key, &tmp], &[]).await?;
            Ok::<(), Error>(())
        }
        .await;
        if result.is_err() {
            // Best effort cleanup; the expiry removes it otherwise.
            let _ = conn.query::<i64>(redis::cmd("DEL").arg(&tmp)).await;
        }
        result?;
    }
    Ok(())
}

/// Number of set bits over the segments.
pub(crate) async fn count_ones(
    conn: &Connection,
    key_of: &(dyn Fn(u32) -> String + Sync),
    segments: u32,
) -> Result<u64> {
    let futs = (0..segments).map(|s| async move {
        let n: u64 = conn.query(redis::cmd("BITCOUNT").arg(key_of(s))).await?;
        Ok::<u64, Error>(n)
    });
    Ok(try_join_all(futs).await?.into_iter().sum())
}

/// Deletes the segment keys.
pub(crate) async fn delete(
    conn: &Connection,
    key_of: &(dyn Fn(u32) -> String + Sync),
    segments: u32,
) -> Result<()> {
    let futs = (0..segments).map(|s| async move {
        let _: i64 = conn.query(redis::cmd("DEL").arg(key_of(s))).await?;
        Ok::<(), Error>(())
    });
    try_join_all(futs).await?;
    Ok(())
}

/// Segments grow lazily: the first write at a high offset makes Redis allocate the string up to
/// it. Segments larger than this are pre-grown in steps of this size at creation, so that no
/// single command makes the server allocate (and zero) more than 16 MiB at once.
pub const GROW_STEP_BYTES: u64 = 16 << 20;

/// Pre-grows large segments in [`GROW_STEP_BYTES`] steps (see there).
pub(crate) async fn pre_grow(
    conn: &Connection,
    key_of: &(dyn Fn(u32) -> String + Sync),
    layout: &RegisterLayout,
) -> Result<()> {
    let seg_bytes = layout.segment_words() * 8;
    if seg_bytes <= GROW_STEP_BYTES {
        return Ok(());
    }
    for s in 0..layout.segments() {
        let key = key_of(s);
        let mut end = GROW_STEP_BYTES.min(seg_bytes);
        loop {
            // `INCRBY u8 ... 0` extends the string to `end` bytes without changing any bit, so it
            // is safe while other clients are already adding.
            let _: Vec<i64> = conn
                .query(
                    redis::cmd("BITFIELD")
                        .arg(&key)
                        .arg("INCRBY")
                        .arg("u8")
                        .arg(format!("#{}", end - 1))
                        .arg(0),
                )
                .await?;
            if end == seg_bytes {
                break;
            }
            end = (end + GROW_STEP_BYTES).min(seg_bytes);
        }
    }
    Ok(())
}

fn unexpected(what: &str) -> Error {
    Error::Server(redis::RedisError::from((
        redis::ErrorKind::Client,
        "unexpected reply",
        what.to_string(),
    )))
}
