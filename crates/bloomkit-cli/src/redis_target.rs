//! Redis targets: `redis://[USER[:PASSWORD]@]HOST[:PORT]/[DB/]NAME` and
//! `redis+cluster://…/NAME`, through bloomkit-redis. The CLI is synchronous, so each target
//! owns a small tokio runtime and waits on each batch.
//!
//! | created with | kept in Redis as | `info` kind |
//! |---|---|---|
//! | (default) or `--kind blocked` | bloomkit-redis's register-blocked filter: every element's bits in one 64-bit word | `blocked` |
//! | `--scheme redisson` | Redisson's own `RBloomFilter` layout (Java services can share it) | `classic` |
//! | `--kind scalable` | bloomkit-redis's scalable filter (layers grow as it fills) | `scalable` |
//! | `--kind counting` | bloomkit-redis's counting filter (4-bit counters; `remove` works) | `counting` |
//! | `--window 30d [--generations G]` | bloomkit-redis's time-window filter (generations that Redis expires by itself) | `time-window` |
//!
//! The password comes from the URL, else `--password-file`, else `REDIS_PASSWORD`; it is never
//! printed (messages name the target without it, and [`Password`]'s `Debug` hides it).

use crate::cli::SchemeName;
use crate::target::{Context, Description, NewFilter};
use anyhow::{anyhow, bail, Result};
use bloomkit::Kind;
use bloomkit_redis::{
    stored_kind, Connection, CountingRedisFilter, Error as RedisError, FilterOptions, Options,
    RedisFilter, RedissonFilter, ScalableParams, ScalableRedisFilter, StoredKind,
    TimeWindowRedisFilter, WindowParams,
};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::runtime::Runtime;

/// A Redis password: its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

/// A parsed Redis target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisUrl {
    /// `HOST:PORT`.
    pub addr: String,
    /// Whether it is a cluster.
    pub cluster: bool,
    /// The database number (0 unless given; always 0 on a cluster).
    pub db: u32,
    /// The filter's name (the key, before any suffix bloomkit-redis adds).
    pub name: String,
    /// The user from the URL, if any.
    pub username: Option<String>,
    /// The password from the URL, if any.
    pub password: Option<Password>,
}

/// The `--password-file` given on the command line (set once, before any target is opened).
static PASSWORD_FILE: OnceLock<PathBuf> = OnceLock::new();

/// Records `--password-file` for every Redis target of this run.
pub fn set_password_file(path: Option<PathBuf>) {
    if let Some(p) = path {
        let _ = PASSWORD_FILE.set(p);
    }
}

/// Percent-decodes a URL part.
fn percent_decode(s: &str, what: &str) -> Result<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(v) = hex else {
                bail!("bad %-escape in the {what} of a redis:// URL");
            };
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| anyhow!("the {what} of a redis:// URL is not UTF-8"))
}

/// Whether `host` is `NAME[:PORT]` or `[IPv6][:PORT]` (letters, digits, `.`, `-`, `_`).
/// The port of a host that [`valid_host`] accepted (`None` if it gives none).
fn port_of(host: &str) -> Option<&str> {
    let after_name = match host.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or("", |(_, port)| port),
        None => host.split_once(':').map_or("", |(n, _)| &host[n.len()..]),
    };
    after_name.strip_prefix(':')
}

fn valid_host(host: &str) -> bool {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, port))
                if !ip.is_empty()
                    && ip
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') =>
            {
                (None, port)
            }
            _ => return false,
        }
    } else {
        match host.split_once(':') {
            Some((n, _)) => (Some(n), &host[n.len()..]),
            None => (Some(host), ""),
        }
    };
    let name_ok = name.is_none_or(|n| {
        !n.is_empty()
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    });
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|p| {
            !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
        });
    name_ok && port_ok
}

impl RedisUrl {
    /// Parses a TARGET if it is a Redis URL (`None`: not a URL at all, a file path).
    pub fn parse(target: &str) -> Result<Option<RedisUrl>> {
        let Some((scheme, rest)) = target.split_once("://") else {
            return Ok(None);
        };
        let cluster = match scheme {
            "redis" => false,
            "redis+cluster" => true,
            "rediss" | "rediss+cluster" => bail!(
                "{scheme}:// (TLS) is not supported: this build of bloomkit has no TLS library in its Redis client; reach the server through a local TLS tunnel and use redis://"
            ),
            _ => bail!(
                "{scheme}://: unknown URL scheme (use a file path, redis://HOST:PORT/NAME or redis+cluster://HOST:PORT/NAME)"
            ),
        };
        let shown = if cluster { "redis+cluster" } else { "redis" };
        let (authority, path) = rest.split_once('/').ok_or_else(|| {
            anyhow!("{shown}://…: missing filter name (expected {shown}://HOST:PORT/NAME)")
        })?;
        let (userinfo, host) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        // Checked before the host is ever shown: a password with an unencoded '/' would
        // otherwise end up in it.
        if !valid_host(host) {
            bail!(
                "{shown}://…: expected [USER:PASSWORD@]HOST[:PORT]/NAME (%-encode '/', '?', '#' and '@' in a password)"
            );
        }
        if path.is_empty() {
            bail!("{shown}://{host}/: missing filter name after the host");
        }
        if let Some(port) = port_of(host) {
            if port.parse::<u16>().map_or(true, |p| p == 0) {
                bail!("{shown}://{host}/…: port {port} is not a TCP port (1 to 65535)");
            }
        }
        if path.contains('?') || path.contains('#') {
            bail!(
                "{shown}://{host}/…: URL parameters (?…) and fragments (#…) are not supported (TLS is not supported; give the password with --password-file or REDIS_PASSWORD, or %-encode '?' and '#' in it)"
            );
        }
        let (mut username, mut password) = (None, None);
        if let Some(u) = userinfo {
            let (user, pass) = match u.split_once(':') {
                Some((a, b)) => (a, Some(b)),
                None => (u, None),
            };
            if !user.is_empty() {
                username = Some(percent_decode(user, "user")?);
            }
            if let Some(p) = pass.filter(|p| !p.is_empty()) {
                password = Some(Password(percent_decode(p, "password")?));
            }
        }
        // `DB/NAME` when the first part is a number: the database, never part of the name.
        let (db, name) = match path.split_once('/') {
            Some((d, n)) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => {
                let db: u32 = d
                    .parse()
                    .map_err(|_| anyhow!("{shown}://{host}/{d}/…: bad database number"))?;
                (db, n)
            }
            _ => (0, path),
        };
        if name.is_empty() {
            bail!("{shown}://{host}/{db}/: missing filter name after the database number");
        }
        if cluster && db != 0 {
            bail!(
                "{shown}://{host}/{db}/{}: Redis Cluster has only database 0",
                crate::shown::name(name)
            );
        }
        let addr = if host.ends_with(']') || !host.starts_with('[') && !host.contains(':') {
            format!("{host}:6379")
        } else {
            host.to_string()
        };
        Ok(Some(RedisUrl {
            addr,
            cluster,
            db,
            name: name.to_string(),
            username,
            password,
        }))
    }

    /// The target for messages: never the password.
    pub fn display(&self) -> String {
        self.written(&crate::shown::name(&self.name))
    }

    /// The target as a word for a command line in a hint: never the password, quoted for the
    /// shell where its name needs it (see [`crate::shown::arg`]).
    pub fn as_arg(&self) -> String {
        crate::shown::arg(&self.written(&self.name)).into_owned()
    }

    /// `redis[+cluster]://ADDR/[DB/]NAME`, with the database also when it is 0 but the name
    /// would read as one (`redis://h:6379/0/3/x` is the name `3/x` in database 0).
    fn written(&self, name: &str) -> String {
        let scheme = if self.cluster {
            "redis+cluster"
        } else {
            "redis"
        };
        let name_reads_as_db = self
            .name
            .split_once('/')
            .is_some_and(|(d, _)| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
        let db = if self.db != 0 || name_reads_as_db {
            format!("{}/", self.db)
        } else {
            String::new()
        };
        format!("{scheme}://{}/{db}{name}", self.addr)
    }

    /// The password: from the URL, else `--password-file` (its first line), else
    /// `REDIS_PASSWORD`.
    fn password(&self) -> Result<Option<Password>> {
        if let Some(p) = &self.password {
            return Ok(Some(p.clone()));
        }
        if let Some(path) = PASSWORD_FILE.get() {
            let text = std::fs::read_to_string(path)
                .map_err(|e| anyhow!("reading the password file {}: {e}", path.display()))?;
            let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
            if line.is_empty() {
                bail!("the password file {} is empty", path.display());
            }
            return Ok(Some(Password(line.to_string())));
        }
        Ok(std::env::var("REDIS_PASSWORD")
            .ok()
            .filter(|p| !p.is_empty())
            .map(Password))
    }

    fn connection_info(&self) -> Result<redis::ConnectionInfo> {
        use redis::IntoConnectionInfo;
        let info = format!("redis://{}/{}", self.addr, self.db)
            .into_connection_info()
            .map_err(|e| anyhow!("{}: {e}", self.display()))?;
        let mut settings = info.redis_settings().clone();
        if let Some(u) = &self.username {
            settings = settings.set_username(u);
        }
        if let Some(p) = self.password()? {
            settings = settings.set_password(p.0);
        }
        Ok(info.set_redis_settings(settings))
    }
}

/// A filter in Redis.
enum Remote {
    Register(RedisFilter),
    Redisson(RedissonFilter),
    Scalable(ScalableRedisFilter),
    Counting(CountingRedisFilter),
    Window(TimeWindowRedisFilter),
}

/// `$body` with `$f` bound to the filter of `$remote`, whatever its kind (the five kinds share
/// their batch methods' names and results).
macro_rules! on_any {
    ($remote:expr, $f:ident => $body:expr) => {
        match $remote {
            Remote::Register($f) => $body,
            Remote::Redisson($f) => $body,
            Remote::Scalable($f) => $body,
            Remote::Counting($f) => $body,
            Remote::Window($f) => $body,
        }
    };
}

/// An open Redis target.
pub struct RedisTarget {
    rt: Runtime,
    display: String,
    remote: Remote,
    /// Whether a counting filter's saturation was already reported in this run.
    saturation_reported: bool,
}

impl std::fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTarget")
            .field("target", &self.display)
            .finish()
    }
}

/// Connects; returns the runtime and the connection.
fn connect(url: &RedisUrl) -> Result<(Runtime, Connection)> {
    let display = url.display();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow!("starting the Redis client: {e}"))?;
    let info = url.connection_info()?;
    let options = Options::default();
    let conn = rt
        .block_on(async {
            if url.cluster {
                Connection::open_cluster_nodes(vec![info], &options).await
            } else {
                Connection::open_info(info, &options).await
            }
        })
        .map_err(|e| {
            if speaks_no_redis(&e) {
                anyhow!(
                    "{display}: the server at {} does not answer in the Redis protocol (is it a Redis server?)",
                    url.addr
                )
            } else {
                anyhow!("{display}: {e} ({})", connect_hint(&e, &url.addr))
            }
        })?;
    Ok((rt, conn))
}

/// Whether a failed connection got an answer that is not the Redis protocol (an HTTP server,
/// say), which the client reports as its parser's internals.
fn speaks_no_redis(e: &bloomkit_redis::Error) -> bool {
    matches!(
        e,
        bloomkit_redis::Error::Connection(r) | bloomkit_redis::Error::Server(r)
            if r.to_string().contains("Parse error")
    )
}

/// What to check after a failed connection: the password when the server refused it, the
/// address otherwise.
fn connect_hint(e: &bloomkit_redis::Error, addr: &str) -> String {
    let refused_login = matches!(
        e,
        bloomkit_redis::Error::Connection(r) | bloomkit_redis::Error::Server(r)
            if r.kind() == redis::ErrorKind::AuthenticationFailed
                || r.code().is_some_and(|c| c == "WRONGPASS" || c == "NOAUTH")
    );
    if refused_login {
        format!(
            "the server at {addr} refused the login: check the password given in the URL, \
             REDIS_PASSWORD or --password-file"
        )
    } else {
        format!("is Redis running at {addr}?")
    }
}

/// Retries after a connection fault: this many attempts in all, waiting 0.2, 0.4, … up to 3.2
/// seconds between them (about 10 s in all), while the client reconnects.
const ATTEMPTS: u32 = 7;

/// The message for a filter that needs a key nobody gave.
fn key_hint(display: &str, e: &RedisError) -> anyhow::Error {
    anyhow!("{display}: {e} (pass its key with --key-file FILE)")
}

impl RedisTarget {
    fn err(&self, e: RedisError) -> anyhow::Error {
        anyhow!("{}: {e}", self.display)
    }

    /// Runs `op` until it succeeds, fails for a reason other than a connection fault, or has
    /// failed [`ATTEMPTS`] times.
    fn retry<T>(&self, op: impl AsyncFn(&Remote) -> Result<T, RedisError>) -> Result<T> {
        let mut wait = Duration::from_millis(200);
        let mut attempt = 1;
        loop {
            match self.rt.block_on(op(&self.remote)) {
                Ok(v) => return Ok(v),
                Err(e) if e.is_fault() && attempt < ATTEMPTS => {
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_millis(3200));
                    attempt += 1;
                }
                Err(e) if e.is_fault() => {
                    return Err(anyhow!(
                        "{}: {e} (gave up after {ATTEMPTS} attempts)",
                        self.display
                    ))
                }
                Err(e) => return Err(self.err(e)),
            }
        }
    }

    /// Whether a filter exists at this URL.
    pub fn exists(url: &RedisUrl) -> Result<bool> {
        let (rt, conn) = connect(url)?;
        let kind = rt
            .block_on(stored_kind(&conn, &url.name))
            .map_err(|e| anyhow!("{}: {e}", url.display()))?;
        Ok(kind.is_some())
    }

    /// Opens an existing filter.
    pub fn open(url: &RedisUrl, ctx: &Context) -> Result<Self> {
        let (rt, conn) = connect(url)?;
        let (name, display) = (url.name.as_str(), url.display());
        let fail = |e: RedisError| match e {
            RedisError::KeyRequired { .. } => key_hint(&display, &e),
            RedisError::Core(bloomkit::Error::Incompatible(_)) if ctx.key.is_some() => {
                anyhow!("{display}: {e} (is --key-file the filter's key?)")
            }
            e => anyhow!("{display}: {e}"),
        };
        let kind = rt.block_on(stored_kind(&conn, name)).map_err(fail)?;
        // Each kind opens with the key of --key-file, or else the stored hashing.
        macro_rules! open_as {
            ($variant:ident, $filter:ident) => {
                Remote::$variant(
                    rt.block_on(async {
                        match &ctx.key {
                            Some(h) => $filter::open_with(&conn, name, h.clone()).await,
                            None => $filter::open(&conn, name).await,
                        }
                    })
                    .map_err(fail)?,
                )
            };
        }
        let remote = match kind {
            None => bail!(
                "{display}: no such filter (create it with: bloomkit create {} --capacity N --fpp P)",
                url.as_arg()
            ),
            Some(StoredKind::Register) => open_as!(Register, RedisFilter),
            Some(StoredKind::Scalable) => open_as!(Scalable, ScalableRedisFilter),
            Some(StoredKind::Counting) => open_as!(Counting, CountingRedisFilter),
            Some(StoredKind::TimeWindow) => open_as!(Window, TimeWindowRedisFilter),
            Some(StoredKind::Redisson) => {
                Remote::Redisson(rt.block_on(RedissonFilter::open(&conn, name)).map_err(fail)?)
            }
            Some(StoredKind::Unknown(other)) => {
                bail!("{display}: unknown filter kind {other:?} in Redis")
            }
        };
        Ok(RedisTarget {
            rt,
            display,
            remote,
            saturation_reported: false,
        })
    }

    /// Creates a filter (deleting an existing one first when `force`; the caller has checked
    /// that one exists only if `force`). Blocked and scalable filters hash with keyed SipHash
    /// under a fresh random key stored with the filter, unless `--key-file` gives the key.
    pub fn create(url: &RedisUrl, new: NewFilter, force: bool, ctx: &Context) -> Result<Self> {
        let (name, display) = (url.name.as_str(), url.display());
        let fail = |e: RedisError| anyhow!("{display}: {e}");
        let keyed = ctx.key.is_some();
        if let Some(window) = new.window {
            return Self::create_window(url, &new, window, force, ctx);
        }
        let kind = new.kind.unwrap_or(Kind::Blocked);
        let build = match (kind, new.scheme) {
            (Kind::Counting, SchemeName::Redisson) => bail!(
                "{display}: Redisson's layout has no counters; drop --scheme redisson"
            ),
            (Kind::Bitmap | Kind::TwoBitMap, _) => bail!(
                "{display}: bitmaps live in files; use a file target"
            ),
            (Kind::DLeft, _) => bail!(
                "{display}: d-left filters cannot be kept in Redis; use a file target, or a blocked or scalable filter"
            ),
            (Kind::Classic, SchemeName::Default) => bail!(
                "{display}: in Redis bloomkit keeps blocked filters (the default), scalable ones, or Redisson's classic layout (--scheme redisson); drop --kind classic"
            ),
            (_, SchemeName::Bloomkit64) => bail!(
                "{display}: --scheme bloomkit64 makes classic filters for files; in Redis bloomkit keeps blocked filters (the default) or scalable ones; drop --scheme"
            ),
            (_, SchemeName::Guava | SchemeName::Guava32 | SchemeName::Go) => bail!(
                "{display}: --scheme {} filters live in memory, not in Redis; use a file target (and export it)",
                new.scheme.name()
            ),
            (Kind::Scalable, SchemeName::Redisson) | (Kind::Blocked, SchemeName::Redisson) => {
                bail!("{display}: Redisson's layout is a classic filter; use --kind classic with --scheme redisson")
            }
            (Kind::Classic, SchemeName::Redisson) if keyed => bail!(
                "{display}: Redisson's layout hashes with HighwayHash; drop --key-file"
            ),
            other => other,
        };
        if force {
            Self::delete_existing(url)?;
        }
        let options = match &ctx.key {
            Some(h) => FilterOptions {
                hashing: h.clone(),
                ..FilterOptions::default()
            },
            None => FilterOptions::random_key().map_err(fail)?,
        };
        let (rt, conn) = connect(url)?;
        let remote = rt.block_on(async {
            Ok::<_, RedisError>(match build {
                (Kind::Scalable, _) => Remote::Scalable(
                    ScalableRedisFilter::create_with(
                        &conn,
                        name,
                        ScalableParams::new(new.capacity, new.fpp),
                        options,
                    )
                    .await?,
                ),
                (Kind::Counting, _) => Remote::Counting(
                    CountingRedisFilter::create_with(&conn, name, new.capacity, new.fpp, options)
                        .await?,
                ),
                (Kind::Classic, _) => Remote::Redisson(
                    RedissonFilter::create(&conn, name, new.capacity, new.fpp).await?,
                ),
                _ => Remote::Register(
                    RedisFilter::create_with(&conn, name, new.capacity, new.fpp, options).await?,
                ),
            })
        });
        let remote = remote.map_err(fail)?;
        Ok(RedisTarget {
            rt,
            display,
            remote,
            saturation_reported: false,
        })
    }

    /// `create --window DURATION`: a time-window filter (count windows live in files).
    fn create_window(
        url: &RedisUrl,
        new: &NewFilter,
        window: crate::window::Window,
        force: bool,
        ctx: &Context,
    ) -> Result<Self> {
        let display = url.display();
        let crate::window::Window::Time(duration) = window else {
            bail!(
                "{display}: count windows (--window N) live in files; in Redis, give the window as a duration (--window 30d)"
            );
        };
        let generations = new
            .generations
            .unwrap_or_else(|| crate::target::default_generations(new.capacity));
        let params = WindowParams::new(duration, generations, new.capacity, new.fpp);
        let options = match &ctx.key {
            Some(h) => FilterOptions {
                hashing: h.clone(),
                ..FilterOptions::default()
            },
            None => FilterOptions::random_key().map_err(|e| anyhow!("{display}: {e}"))?,
        };
        if force {
            Self::delete_existing(url)?;
        }
        let (rt, conn) = connect(url)?;
        let f = rt
            .block_on(TimeWindowRedisFilter::create_with(
                &conn, &url.name, params, options,
            ))
            .map_err(|e| anyhow!("{display}: {e}"))?;
        Ok(RedisTarget {
            rt,
            display,
            remote: Remote::Window(f),
            saturation_reported: false,
        })
    }

    /// Gives the filter at `url` (any kind) the time to live `ttl`: its metadata and every key
    /// (bloomkit-redis's `expire_filter`).
    pub fn expire(url: &RedisUrl, ttl: Duration) -> Result<()> {
        let (rt, conn) = connect(url)?;
        let display = url.display();
        let found = rt
            .block_on(bloomkit_redis::expire_filter(&conn, &url.name, ttl))
            .map_err(|e| anyhow!("{display}: {e}"))?;
        if !found {
            bail!("{display}: no such filter");
        }
        Ok(())
    }

    /// `create --force`: deletes what is stored under the name, whatever its kind and key;
    /// with corrupt metadata, the metadata and the keys named after its id (bloomkit-redis's
    /// `purge_filter`), warning when some of its keys could not be identified.
    fn delete_existing(url: &RedisUrl) -> Result<()> {
        let (rt, conn) = connect(url)?;
        let purged = rt
            .block_on(bloomkit_redis::purge_filter(&conn, &url.name))
            .map_err(|e| anyhow!("{}: {e}", url.display()))?;
        if let bloomkit_redis::Purge::MetadataOnly { why } = purged {
            crate::shown::say!(
                "warning: {}: deleted the old filter's corrupt metadata only: {why}",
                url.display()
            );
        }
        Ok(())
    }

    /// The kind, as `info` reports it.
    pub fn kind(&self) -> bloomkit::Kind {
        match self.remote {
            Remote::Register(_) => bloomkit::Kind::Blocked,
            Remote::Redisson(_) => bloomkit::Kind::Classic,
            Remote::Scalable(_) => bloomkit::Kind::Scalable,
            Remote::Counting(_) => bloomkit::Kind::Counting,
            Remote::Window(_) => bloomkit::Kind::TimeWindow,
        }
    }

    /// Adds a batch; `new[i]` says whether element `i` was new. With `bulk`, a plain filter
    /// takes the batch through bloomkit-redis's bulk path (bits merged server-side with
    /// `BITOP OR`), which reports new elements too. After a connection fault the batch is
    /// sent again (adding is idempotent) while the client reconnects; an element the
    /// interrupted attempt had already set then counts as already present.
    pub fn insert_batch(
        &mut self,
        elements: &[Vec<u8>],
        new: &mut Vec<bool>,
        bulk: bool,
    ) -> Result<()> {
        new.clear();
        if let Remote::Counting(f) = &self.remote {
            // Counting is not idempotent: a batch is sent once, never again after a fault.
            let report = self
                .rt
                .block_on(f.insert_batch_report(elements))
                .map_err(|e| self.err(e))?;
            let saturated = report.saturated.iter().filter(|&&s| s).count();
            if saturated > 0 && !self.saturation_reported {
                self.saturation_reported = true;
                crate::shown::say!(
                    "warning: {}: {saturated} items reached a saturated counter (15): their counts read as 'at least 15' and those counters never go down",
                    self.display
                );
            }
            *new = report.new;
            return Ok(());
        }
        *new = self.retry(async |remote| match remote {
            Remote::Register(f) if bulk => f.insert_bulk(elements).await,
            remote => on_any!(remote, f => f.insert_batch(elements).await),
        })?;
        Ok(())
    }

    /// Removes a batch from a counting filter; `removed[i]` says whether element `i` was
    /// removed (`false`: one of its counters is 0, nothing of it changed). Elements absent
    /// before the call are found first: then nothing of the batch is removed, `removed` says
    /// which were present and the result is `false`. Sent once: removing is not idempotent,
    /// so a batch is never sent again after a fault.
    pub fn remove_batch(&mut self, elements: &[Vec<u8>], removed: &mut Vec<bool>) -> Result<bool> {
        let Remote::Counting(f) = &self.remote else {
            bail!(
                "{}: a {} filter cannot remove items; only counting filters can (create one with --kind counting)",
                self.display,
                self.kind()
            );
        };
        removed.clear();
        let present = self
            .rt
            .block_on(f.contains_batch(elements))
            .map_err(|e| self.err(e))?;
        if present.iter().any(|&p| !p) {
            removed.extend_from_slice(&present);
            return Ok(false);
        }
        *removed = self
            .rt
            .block_on(f.remove_batch(elements))
            .map_err(|e| self.err(e))?;
        Ok(true)
    }

    /// Whether this target has a bulk path.
    pub fn has_bulk(&self) -> bool {
        matches!(self.remote, Remote::Register(_))
    }

    /// Tests a batch.
    pub fn contains_batch(&self, elements: &[Vec<u8>], present: &mut Vec<bool>) -> Result<()> {
        *present =
            self.retry(async |remote| on_any!(remote, f => f.contains_batch(elements).await))?;
        Ok(())
    }

    /// Describes the filter.
    pub fn describe(&self) -> Result<Description> {
        match &self.remote {
            Remote::Register(f) => {
                let info = self.rt.block_on(f.info()).map_err(|e| self.err(e))?;
                Ok(Description {
                    kind: "blocked",
                    scheme: "default".into(),
                    hashing: info.hashing,
                    bits: info.bits,
                    hashes: info.hashes,
                    bytes: info.bits / 8,
                    capacity: (info.capacity > 0).then_some(info.capacity),
                    fpp: (info.fpp > 0.0).then_some(info.fpp),
                    estimated_items: info.estimated_count,
                    fill_ratio: info.set_bits as f64 / info.bits as f64,
                    estimated_fpp: info.estimated_fpp,
                    layout: Some("register".into()),
                    ..Default::default()
                })
            }
            Remote::Redisson(f) => {
                let spec = f.spec();
                let ones = self.rt.block_on(f.set_bits()).map_err(|e| self.err(e))?;
                let fill = ones as f64 / spec.bits() as f64;
                Ok(Description {
                    kind: "classic",
                    scheme: "redisson".into(),
                    hashing: spec.hashing().id(),
                    bits: spec.bits(),
                    hashes: spec.hashes(),
                    bytes: spec.bits().div_ceil(8),
                    capacity: None,
                    fpp: None,
                    estimated_items: bloomkit::math::estimate_count(
                        spec.bits(),
                        spec.hashes(),
                        ones,
                    ),
                    fill_ratio: fill,
                    estimated_fpp: bloomkit::math::fpp_from_fill(fill, spec.hashes()),
                    layout: None,
                    ..Default::default()
                })
            }
            Remote::Window(f) => {
                let info = self.rt.block_on(f.info()).map_err(|e| self.err(e))?;
                let c = info.current_generation;
                let bits = info.layout.bits();
                let slots = f64::from(info.params.generations + 1);
                let live: Vec<bloomkit::window::Generation> = info
                    .generations
                    .iter()
                    .rev()
                    .map(|g| bloomkit::window::Generation {
                        number: g.generation,
                        age: c.saturating_sub(g.generation),
                        fill: g.set_bits as f64 / bits as f64,
                        estimated_len: g.estimated_count,
                    })
                    .collect();
                Ok(Description {
                    kind: "time-window",
                    scheme: "default".into(),
                    hashing: info.hashing,
                    bits: info.bits,
                    hashes: info.layout.hashes(),
                    bytes: info.bits / 8,
                    capacity: Some(info.params.capacity),
                    fpp: Some(info.params.fpp),
                    estimated_items: info.estimated_count,
                    fill_ratio: live.iter().map(|g| g.fill).sum::<f64>() / slots,
                    estimated_fpp: info.estimated_fpp,
                    layout: Some("register".into()),
                    layers: None,
                    window: Some(crate::target::WindowInfo::Time {
                        window: info.params.window,
                        generations: info.params.generations,
                        generation_length: Duration::from_millis(info.params.generation_ms()),
                        live,
                        forgotten_by: info.params.window
                            + 2 * Duration::from_millis(info.params.generation_ms()),
                    }),
                    range: None,
                })
            }
            Remote::Counting(f) => {
                let info = self.rt.block_on(f.info()).map_err(|e| self.err(e))?;
                let m = info.layout.counters();
                Ok(Description {
                    kind: "counting",
                    scheme: "default".into(),
                    hashing: info.hashing,
                    bits: m,
                    hashes: info.layout.hashes(),
                    bytes: info.layout.bytes(),
                    capacity: Some(info.capacity),
                    fpp: Some(info.fpp),
                    estimated_items: info.estimated_count,
                    fill_ratio: info.nonzero_counters as f64 / m as f64,
                    estimated_fpp: info.estimated_fpp,
                    layout: Some(f.layout_name().into()),
                    ..Default::default()
                })
            }
            Remote::Scalable(f) => {
                let info = self.rt.block_on(f.info()).map_err(|e| self.err(e))?;
                let layers = info.layers;
                Ok(Description {
                    kind: "scalable",
                    scheme: "default".into(),
                    hashing: info.hashing,
                    bits: info.bits,
                    hashes: layers.last().map_or(0, |l| l.hashes),
                    bytes: info.bits / 8,
                    capacity: Some(info.params.capacity),
                    fpp: Some(info.params.fpp),
                    estimated_items: info.estimated_count,
                    fill_ratio: info.set_bits as f64 / info.bits.max(1) as f64,
                    estimated_fpp: info.estimated_fpp,
                    layout: None,
                    layers: Some(layers),
                    window: None,
                    range: None,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls_without_folding_anything_into_the_name() {
        let u = RedisUrl::parse("redis://127.0.0.1:6379/seen")
            .unwrap()
            .unwrap();
        assert_eq!(
            (u.addr.as_str(), u.db, u.name.as_str()),
            ("127.0.0.1:6379", 0, "seen")
        );
        let u = RedisUrl::parse("redis://:s%40cret@h:1/3/x:y")
            .unwrap()
            .unwrap();
        assert_eq!((u.db, u.name.as_str()), (3, "x:y"));
        assert_eq!(u.password, Some(Password("s@cret".into())));
        assert_eq!(u.display(), "redis://h:1/3/x:y");
        // A name that would read as a database number keeps database 0 in front of it.
        let u = RedisUrl::parse("redis://h:1/0/3/x").unwrap().unwrap();
        assert_eq!((u.db, u.name.as_str()), (0, "3/x"));
        assert_eq!(u.display(), "redis://h:1/0/3/x");
        assert_eq!(RedisUrl::parse(&u.as_arg()).unwrap().unwrap().name, "3/x");
        let u = RedisUrl::parse("redis://h:1/a b\n").unwrap().unwrap();
        assert_eq!(u.as_arg(), r"$'redis://h:1/a b\n'");
        // Names that do not print as themselves are quoted and escaped.
        let u = RedisUrl::parse("redis://h:1/ev\nil\u{1b}[31mX")
            .unwrap()
            .unwrap();
        assert_eq!(u.name, "ev\nil\u{1b}[31mX");
        assert_eq!(u.display(), r#"redis://h:1/"ev\nil\u{1b}[31mX""#);
        for plain in ["a b", "x\"y", "caf\u{e9}", "a\\b", "it's"] {
            assert_eq!(crate::shown::name(plain), plain);
        }
        for quoted in ["\t", "a\rb", "\u{202e}evil", "\u{7f}"] {
            assert_eq!(crate::shown::name(quoted), format!("{quoted:?}"));
        }
        assert!(!format!("{u:?}").contains("s@cret"));
        let u = RedisUrl::parse("redis://user:pw@h/a/b").unwrap().unwrap();
        assert_eq!((u.addr.as_str(), u.name.as_str()), ("h:6379", "a/b"));
        assert_eq!(u.username.as_deref(), Some("user"));
        assert!(RedisUrl::parse("a/b.bloom").unwrap().is_none());
        for bad in [
            "redis://h:1",
            "redis://h:1/",
            "redis://h:1/x?tls=true",
            "rediss://h:1/x",
            "redis+cluster://h:1/2/x",
            "redis://h:1/4/",
            "ftp://h/x",
            "redis://:pa/ss@h:1/x",
            "redis://h:port/x",
        ] {
            assert!(RedisUrl::parse(bad).is_err(), "{bad}");
        }
        let u = RedisUrl::parse("redis://[::1]:7/x").unwrap().unwrap();
        assert_eq!(u.addr, "[::1]:7");
        let e = RedisUrl::parse("redis://:top/secret@h:1/x").unwrap_err();
        assert!(!e.to_string().contains("top"), "{e}");
        let e = RedisUrl::parse("rediss://:topsecret@h:1/x").unwrap_err();
        assert!(e.to_string().contains("TLS") && !e.to_string().contains("topsecret"));
    }
}
