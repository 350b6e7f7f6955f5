//! The error type of bloomkit-redis: the core library's [`bloomkit::Error`] plus typed Redis
//! faults.

use std::time::Duration;

/// A convenient alias for `Result<T, bloomkit_redis::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong with a filter in Redis.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Invalid parameters, incompatible filters, ... (from the core library).
    #[error(transparent)]
    Core(#[from] bloomkit::Error),

    /// The server did not answer within the configured timeout.
    #[error("Redis did not answer within {0:?}")]
    Timeout(Duration),

    /// The server cannot be reached or the connection broke (killed, restarted, network; on a
    /// cluster, also a slot whose node is down).
    /// The client reconnects by itself; retry the operation later.
    #[error("Redis connection failed: {0}")]
    Connection(#[source] redis::RedisError),

    /// The server answered with an error (for example out of memory, or a wrong key type).
    #[error("Redis server error: {0}")]
    Server(#[source] redis::RedisError),

    /// No filter of this name exists.
    #[error("no filter named {0:?} in Redis")]
    NotFound(String),

    /// The stored metadata is missing fields or holds values no client could have written.
    #[error("filter {name:?} has corrupt metadata: {reason}")]
    CorruptMetadata {
        /// The filter's name.
        name: String,
        /// What is wrong.
        reason: String,
    },

    /// The filter was deleted, or deleted and re-created (by another client), after this handle
    /// opened it. Every write checks this atomically on the server, so nothing was written
    /// into the new filter of the same name; reopen it to use the new one.
    /// (Also when its keys were lost: evicted, or a server restarted without persistence.)
    #[error("filter {0:?} was deleted or re-created by another client after it was opened (or its keys were lost: evicted, or a server restarted without persistence); nothing more was written to it")]
    Gone(String),

    /// The filter hashes with a keyed hash whose key is not stored with it: the same key must be
    /// given to open it.
    #[error("filter {name:?} hashes with {hashing}, whose key is not stored with it: the same key is needed to open it")]
    KeyRequired {
        /// The filter's name.
        name: String,
        /// The stored hashing id (it identifies the key by a fingerprint, never reveals it).
        hashing: String,
    },

    /// A time-window filter of this name exists with other window parameters than this client
    /// asked for: both are named.
    #[error("filter {name:?} in Redis keeps {stored}; this client asked for {requested}")]
    WindowMismatch {
        /// The filter's name.
        name: String,
        /// The stored window, e.g. `a window of 30d in 30 generations of 1d`.
        stored: String,
        /// The requested window.
        requested: String,
    },

    /// The server is out of memory: `maxmemory` is reached and its policy (`noeviction`) refuses
    /// writes. The failing command or script wrote nothing (Redis refuses it before its first
    /// write); of a batch, the commands that succeeded before did write, but the batch is not
    /// acknowledged. Free memory or raise `maxmemory`, then retry.
    #[error("Redis is out of memory (maxmemory reached; the write was refused): {0}")]
    OutOfMemory(#[source] redis::RedisError),

    /// The server is a read-only replica: writes go to its primary.
    #[error(
        "Redis refused the write: the server is a read-only replica (write to its primary): {0}"
    )]
    ReadOnly(#[source] redis::RedisError),

    /// Keys under the filter's names hold another type of value than bloomkit writes there
    /// (someone else wrote a list, a hash, ... under them): Redis answered `WRONGTYPE`. Nothing
    /// was written by the failing command. The keys are named, with the type each holds.
    #[error("Redis keys of the filter hold another type of value than bloomkit writes there (WRONGTYPE), written by someone else: {}", describe_keys(.0))]
    WrongType(Vec<(String, String)>),

    /// The Redis URL does not parse (the URL itself is not repeated: it may hold a password).
    #[error("invalid Redis URL ({0}); expected redis://[USER:PASSWORD@]HOST[:PORT][/DB], rediss://… or redis+unix:///PATH")]
    InvalidUrl(String),

    /// The filter name cannot be used (empty, or contains `{` or `}`, which would break the
    /// hash tags that spread segments over a cluster).
    #[error("invalid filter name {0:?}: must be non-empty and contain no '{{' or '}}'")]
    InvalidName(String),
}

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Self {
        if e.is_timeout() {
            Error::Timeout(Duration::ZERO)
        } else if e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.is_unrecoverable_error()
            // MOVED/ASK/TRYAGAIN/CLUSTERDOWN that outlast the cluster client's own redirects
            // and retries: the node serving the slot is down or the slots are moving.
            || e.is_cluster_error()
        {
            Error::Connection(e)
        } else if has_code(&e, "OOM") {
            Error::OutOfMemory(e)
        } else if has_code(&e, "READONLY") {
            Error::ReadOnly(e)
        } else {
            Error::Server(e)
        }
    }
}

/// `key (a list), key (a hash)`, or a note that the keys changed type again meanwhile.
fn describe_keys(keys: &[(String, String)]) -> String {
    if keys.is_empty() {
        return "the keys no longer hold another type (changed again meanwhile)".into();
    }
    let named: Vec<String> = keys.iter().map(|(k, t)| format!("{k:?} (a {t})")).collect();
    named.join(", ")
}

/// Whether Redis answered with the error `code` (to a command, a script, or a command of a
/// pipeline or transaction).
pub(crate) fn has_code(e: &redis::RedisError, code: &str) -> bool {
    e.code() == Some(code)
        || e.clone()
            .into_server_errors()
            .is_some_and(|errs| errs.iter().any(|(_, s)| s.code() == code))
}

/// The error code of the scripts' "segment key is gone" reply.
pub(crate) const GONE_CODE: &str = "BLOOMKIT_GONE";

impl Error {
    /// Turns a server's "segment key is gone" reply into [`Error::Gone`] for filter `name`.
    pub(crate) fn about(self, name: &str) -> Error {
        match self {
            Error::Server(e) if e.code() == Some(GONE_CODE) => Error::Gone(name.to_string()),
            e => e,
        }
    }

    /// Whether the error is a transient fault of the server or network (timeout or connection),
    /// after which retrying can succeed.
    pub fn is_fault(&self) -> bool {
        matches!(self, Error::Timeout(_) | Error::Connection(_))
    }
}
