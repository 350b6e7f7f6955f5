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
        } else {
            Error::Server(e)
        }
    }
}

impl Error {
    /// Whether the error is a transient fault of the server or network (timeout or connection),
    /// after which retrying can succeed.
    pub fn is_fault(&self) -> bool {
        matches!(self, Error::Timeout(_) | Error::Connection(_))
    }
}
