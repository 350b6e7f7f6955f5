//! Command-line lists shared by the table examples: `10000,1000000`, `0.01,0.001`.

use std::fmt::Debug;
use std::str::FromStr;

/// The comma-separated values of `arg`, or of `default` when it is absent (`what` names them
/// in the panic message of a bad value).
pub fn list<T: FromStr>(arg: Option<String>, default: &str, what: &str) -> Vec<T>
where
    T::Err: Debug,
{
    arg.unwrap_or_else(|| default.into())
        .split(',')
        .map(|s| s.trim().parse().expect(what))
        .collect()
}
