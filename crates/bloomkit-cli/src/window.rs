//! `--window`: what an expiring filter remembers, the last N insertions or the last span of
//! time, and the duration syntax (`90s`, `15m`, `12h`, `30d`, `2w`).

use std::fmt;
use std::time::Duration;

/// The longest time window accepted: 100 years (longer is surely a typo, and its generations'
/// boundaries would not fit the file format's millisecond arithmetic with room to spare).
pub const MAX_DURATION: Duration = Duration::from_secs(100 * 365 * 86_400);

/// The largest count window accepted: 10¹² insertions (a filter for more would need terabytes).
pub const MAX_COUNT: u64 = 1_000_000_000_000;

/// What an expiring filter remembers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The last N insertions (an age-partitioned count-window filter).
    Count(u64),
    /// Everything inserted within this span of time (a time-window filter of generations).
    Time(Duration),
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Window::Count(n) => write!(f, "the last {n} insertions"),
            Window::Time(d) => write!(f, "the last {}", format_duration(*d)),
        }
    }
}

/// Parses `--window`: a bare whole number (`1000000`, `1e6`, `1_000_000`) is a count window,
/// a number with a unit (`90s`, `15m`, `12h`, `30d`, `2w`) a time window.
pub fn parse_window(s: &str) -> Result<Window, String> {
    let t = s.trim();
    if t.ends_with(|c: char| c.is_ascii_alphabetic()) && !t.ends_with(['e', 'E']) {
        return parse_duration(t).map(Window::Time);
    }
    match crate::cli::parse_count(t) {
        Ok(0) => Err(format!(
            "'{s}' is an empty window: give at least 1 insertion, or a duration such as 30d"
        )),
        Ok(n) if n > MAX_COUNT => Err(format!(
            "'{s}' insertions is too long a window (at most {MAX_COUNT})"
        )),
        Ok(n) => Ok(Window::Count(n)),
        Err(_) => Err(format!(
            "'{s}' is not a window: give a number of insertions (1000000, 1e6) or a duration (90s, 15m, 12h, 30d, 2w)"
        )),
    }
}

/// Parses a duration: a whole number followed by `s` (seconds), `m` (minutes), `h` (hours),
/// `d` (days) or `w` (weeks): `90s`, `12h`, `30d`, `2w`. Zero, negative, fractional and
/// longer-than-100-years durations are refused.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit_secs: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        "" => {
            return Err(format!(
                "'{s}' has no unit: write e.g. 90s, 15m, 12h, 30d or 2w"
            ))
        }
        _ => {
            return Err(format!(
                "'{s}': unknown unit '{unit}' (use s, m, h, d or w: 90s, 15m, 12h, 30d, 2w)"
            ))
        }
    };
    let number = number.trim().replace('_', "");
    if number.starts_with('-') {
        return Err(format!(
            "'{s}' is negative: a window must be a positive duration"
        ));
    }
    let n: u64 = number.parse().map_err(|_| {
        format!("'{s}' is not a duration: a whole number and a unit, e.g. 90s, 12h, 30d, 2w")
    })?;
    if n == 0 {
        return Err(format!(
            "'{s}' is an empty window: give a positive duration"
        ));
    }
    let secs = n
        .checked_mul(unit_secs)
        .filter(|&secs| secs <= MAX_DURATION.as_secs())
        .ok_or_else(|| format!("'{s}' is too long a duration (at most 100 years)"))?;
    Ok(Duration::from_secs(secs))
}

/// Writes a duration in the largest unit that divides it: `30d`, `2w`, `90s`, `1500ms`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        return format!("{ms}ms");
    }
    let secs = d.as_secs();
    let units = [(7 * 86_400, "w"), (86_400, "d"), (3600, "h"), (60, "m")];
    for (size, name) in units {
        if secs >= size && secs.is_multiple_of(size) {
            return format!("{}{name}", secs / size);
        }
    }
    format!("{secs}s")
}

/// Parses `--generations`: 1 to 1000.
pub fn parse_generations(s: &str) -> Result<u32, String> {
    match crate::cli::parse_count(s) {
        Ok(n) if (1..=1000).contains(&n) => Ok(n as u32),
        _ => Err(format!(
            "'{s}' is not a number of generations between 1 and 1000"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_unit() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_duration("12h"), Ok(Duration::from_secs(43_200)));
        assert_eq!(parse_duration("30d"), Ok(Duration::from_secs(2_592_000)));
        assert_eq!(parse_duration(" 2w "), Ok(Duration::from_secs(1_209_600)));
    }

    /// Each input is refused by `parse` with a message containing its reason.
    fn refused<T: std::fmt::Debug>(parse: fn(&str) -> Result<T, String>, cases: &[(&str, &str)]) {
        for (input, why) in cases {
            let err = parse(input).unwrap_err();
            assert!(err.contains(why), "{input}: {err}");
        }
    }

    #[test]
    fn bad_durations_say_why() {
        refused(
            parse_duration,
            &[
                ("0d", "empty window"),
                ("-3d", "negative"),
                ("30", "no unit"),
                ("30y", "unknown unit 'y'"),
                ("1.5h", "not a duration"),
                ("d", "not a duration"),
                ("99999999999w", "too long"),
                ("101000000000000000000s", "not a duration"),
            ],
        );
    }

    #[test]
    fn windows_by_count_and_by_time() {
        assert_eq!(parse_window("1000000"), Ok(Window::Count(1_000_000)));
        assert_eq!(parse_window("1e6"), Ok(Window::Count(1_000_000)));
        assert_eq!(parse_window("1_000"), Ok(Window::Count(1000)));
        assert_eq!(
            parse_window("7d"),
            Ok(Window::Time(Duration::from_secs(7 * 86_400)))
        );
        refused(
            parse_window,
            &[
                ("0", "empty window"),
                ("-5", "not a window"),
                ("2e12", "too long"),
                ("0s", "empty window"),
                ("-1d", "negative"),
                ("soon", "unknown unit"),
            ],
        );
    }

    #[test]
    fn durations_print_in_their_largest_unit() {
        assert_eq!(format_duration(Duration::from_secs(30 * 86_400)), "30d");
        assert_eq!(format_duration(Duration::from_secs(14 * 86_400)), "2w");
        assert_eq!(format_duration(Duration::from_secs(90)), "90s");
        assert_eq!(format_duration(Duration::from_secs(3600)), "1h");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(
            Window::Time(Duration::from_secs(86_400)).to_string(),
            "the last 1d"
        );
        assert_eq!(Window::Count(5).to_string(), "the last 5 insertions");
    }

    #[test]
    fn generations_are_bounded() {
        assert_eq!(parse_generations("30"), Ok(30));
        assert!(parse_generations("0").is_err());
        assert!(parse_generations("1001").is_err());
    }
}
