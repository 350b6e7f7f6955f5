//! The recorded outputs of Guava, Go bits-and-blooms and Redisson in `tests/data/vectors.txt`
//! (see `tests/data/README.md`).

/// The whole file.
pub const VECTORS: &str = include_str!("vectors.txt");

/// The lines of the section whose `== ` heading starts with `heading`, up to the next heading
/// or blank line.
#[allow(dead_code)] // each test file uses some of these helpers
pub fn section(heading: &str) -> Vec<&'static str> {
    let mut lines = VECTORS.lines();
    lines
        .by_ref()
        .find(|l| {
            l.strip_prefix("== ")
                .is_some_and(|h| h.starts_with(heading))
        })
        .unwrap_or_else(|| panic!("tests/data/vectors.txt has no section '{heading}'"));
    lines
        .take_while(|l| !l.starts_with("==") && !l.starts_with('#') && !l.trim().is_empty())
        .collect()
}

/// The lines that start with `prefix`, in order.
#[allow(dead_code)]
pub fn lines_starting(prefix: &str) -> Vec<&'static str> {
    VECTORS.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// The value of `key=` in a line of space-separated `key=value` fields.
#[allow(dead_code)]
pub fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key}= in {line:?}"))
}

/// The numbers of a `[a, b, c]` list.
#[allow(dead_code)]
pub fn list(text: &str) -> Vec<i64> {
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
    inner
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect()
}
