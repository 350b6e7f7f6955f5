//! Expiry of a whole filter: one time to live for its metadata and every one of its keys, so
//! that Redis deletes the filter by itself (any kind: plain, scalable, Redisson, counting,
//! time-window).
//!
//! On a standalone server one script sets the time to live of every key at once (atomic). On a
//! cluster the keys live in different slots, so it is one script per slot group (a segment,
//! with a time-window filter's generations of that segment), the metadata last: if the client
//! dies part-way, the keys that already expire take the filter with them when they do, and
//! clients then get [`Error::Gone`], never a partial filter that answers quietly.
//!
//! Keys created later inherit it: a scalable filter's new layer copies the metadata's time to
//! live, and a time-window filter's generation keys never outlive their segment's anchor.
//! Generation keys that already expire sooner keep their own time.

use crate::conn::{script_cmd, Connection};
use crate::error::{Error, Result};
use crate::keys;
use redis::Script;
use std::sync::LazyLock;
use std::time::Duration;

/// KEYS = the keys; `ARGV[1]` = time to live (ms), `ARGV[2]` = how many of the first keys get it
/// unconditionally (the others only if they have no expiry or a later one), `ARGV[3]` = `1` if
/// `KEYS[1]` is the metadata and must name filter `ARGV[4]` ('' = any). Returns the number of
/// keys whose time to live was set.
static EXPIRE_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local ttl = tonumber(ARGV[1])
local nset = tonumber(ARGV[2])
if ARGV[3] == '1' then
  local id = redis.call('HGET', KEYS[1], 'id')
  local exists = redis.call('EXISTS', KEYS[1]) == 1
  if not exists or (ARGV[4] ~= '' and id ~= ARGV[4]) then
    return redis.error_reply('BLOOMKIT_GONE the filter was deleted or re-created')
  end
end
local n = 0
for i = 1, #KEYS do
  if i <= nset then
    n = n + redis.call('PEXPIRE', KEYS[i], ttl)
  else
    local t = redis.call('PTTL', KEYS[i])
    if t == -1 or t > ttl then n = n + redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end
return n
"#,
    )
});

/// Keys that share a hash slot.
#[derive(Debug, Default, Clone)]
pub(crate) struct SlotGroup {
    /// Keys that get the time to live.
    pub set: Vec<String>,
    /// Keys that get it only if they have none or a later one.
    pub cap: Vec<String>,
}

impl SlotGroup {
    /// Keys that all get the time to live.
    pub fn set(keys: Vec<String>) -> Self {
        SlotGroup {
            set: keys,
            cap: Vec::new(),
        }
    }

    /// Each key in its own group (each has its own hash tag).
    pub fn each(keys: impl IntoIterator<Item = String>) -> Vec<Self> {
        keys.into_iter().map(|k| SlotGroup::set(vec![k])).collect()
    }
}

/// The time to live in milliseconds, at least 1.
pub(crate) fn ttl_ms(ttl: Duration) -> Result<u64> {
    let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
    if ms == 0 {
        return Err(bloomkit::Error::InvalidParameters(
            "a time to live must be at least 1 ms".into(),
        )
        .into());
    }
    Ok(ms)
}

/// Gives the metadata of filter `name` (if `meta`; it must still name filter `id`) and every
/// key of `groups` the time to live `ttl`. Returns the number of keys that got it.
pub(crate) async fn expire_groups(
    conn: &Connection,
    name: &str,
    meta: bool,
    id: Option<&str>,
    groups: Vec<SlotGroup>,
    ttl: Duration,
) -> Result<u64> {
    let ms = ttl_ms(ttl)?.to_string();
    let id = id.unwrap_or("");
    let run = async |keys: &[String], nset: usize, check: bool| -> Result<u64> {
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let mut cmd = script_cmd(&EXPIRE_SCRIPT, &refs, 4);
        cmd.arg(&ms)
            .arg(nset)
            .arg(if check { "1" } else { "0" })
            .arg(id);
        conn.eval::<u64>(&EXPIRE_SCRIPT, &cmd)
            .await
            .map_err(|e| e.about(name))
    };
    let meta_key = keys::meta(name);
    if !conn.is_cluster() {
        // One script: every key at once.
        let mut all: Vec<String> = Vec::new();
        if meta {
            all.push(meta_key);
        }
        let mut caps = Vec::new();
        for g in groups {
            all.extend(g.set);
            caps.extend(g.cap);
        }
        let nset = all.len();
        all.extend(caps);
        return run(&all, nset, meta).await;
    }
    if meta {
        // The filter must still be this one before anything gets a time to live.
        let now: Option<String> = conn
            .query(redis::cmd("HGET").arg(&meta_key).arg("id"))
            .await?;
        let exists: i64 = conn.query(redis::cmd("EXISTS").arg(&meta_key)).await?;
        if exists == 0 || (!id.is_empty() && now.as_deref() != Some(id)) {
            return Err(Error::Gone(name.into()));
        }
    }
    let mut n = 0;
    for g in groups {
        let nset = g.set.len();
        let mut keys = g.set;
        keys.extend(g.cap);
        if !keys.is_empty() {
            n += run(&keys, nset, false).await?;
        }
    }
    if meta {
        n += run(&[meta_key], 1, true).await?;
    }
    Ok(n)
}

/// Gives the filter `name`, whatever its kind (bloomkit's or Redisson's), the time to live
/// `ttl`: its metadata and every key. `Ok(false)` if there is no such filter.
pub async fn expire_filter(conn: &Connection, name: &str, ttl: Duration) -> Result<bool> {
    ttl_ms(ttl)?;
    match crate::kinds::AnyFilter::by_name(conn, name).await? {
        Some(f) => f.expire(ttl).await.map(|()| true),
        None => Ok(false),
    }
}

impl crate::RedisFilter {
    /// Gives the filter the time to live `ttl`: its metadata and every segment (see
    /// [`crate::expire`]). [`Error::Gone`] if the name now holds another filter.
    pub async fn expire(&self, ttl: Duration) -> Result<()> {
        let groups = SlotGroup::each((0..self.layout().segments()).map(|s| self.segment_key(s)));
        expire_groups(self.connection(), self.name(), true, self.id(), groups, ttl).await?;
        Ok(())
    }
}

impl crate::ScalableRedisFilter {
    /// Gives the filter the time to live `ttl`: its metadata and the segments of every layer
    /// (and of the next one, which a client may have created but not yet listed). Layers
    /// created later copy the metadata's time to live.
    pub async fn expire(&self, ttl: Duration) -> Result<()> {
        let groups = SlotGroup::each(self.all_segment_keys().await?);
        expire_groups(self.connection(), self.name(), true, self.id(), groups, ttl).await?;
        Ok(())
    }
}

impl crate::CountingRedisFilter {
    /// Gives the filter the time to live `ttl`: its metadata and every segment.
    pub async fn expire(&self, ttl: Duration) -> Result<()> {
        let groups = SlotGroup::each(self.segment_keys());
        let id = Some(self.id());
        expire_groups(self.connection(), self.name(), true, id, groups, ttl).await?;
        Ok(())
    }
}

impl crate::TimeWindowRedisFilter {
    /// Gives the filter the time to live `ttl`: its metadata, its anchors and every generation
    /// key (a generation that expires sooner keeps its own time; generations written later
    /// never outlive their anchor).
    pub async fn expire(&self, ttl: Duration) -> Result<()> {
        let segments = self.layout().segments();
        let gens = self.generation_keys();
        let per_seg = gens.len() / segments as usize;
        let groups = (0..segments)
            .map(|s| SlotGroup {
                set: vec![self.anchor_key(s)],
                // generation_keys() lists generation by generation, segment by segment.
                cap: (0..per_seg)
                    .map(|g| gens[g * segments as usize + s as usize].clone())
                    .collect(),
            })
            .collect();
        let id = Some(self.id());
        expire_groups(self.connection(), self.name(), true, id, groups, ttl).await?;
        Ok(())
    }
}

impl crate::RedissonFilter {
    /// Gives the Redisson filter the time to live `ttl`: its bitmap and its config.
    pub async fn expire(&self, ttl: Duration) -> Result<()> {
        let keys = vec![self.name().to_string(), self.config_key().to_string()];
        let groups = if self.connection().is_cluster() {
            SlotGroup::each(keys)
        } else {
            vec![SlotGroup::set(keys)]
        };
        expire_groups(self.connection(), self.name(), false, None, groups, ttl).await?;
        Ok(())
    }
}
