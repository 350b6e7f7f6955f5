//! How `info` shows an expiring filter's window: its size, its generations and their fill
//! (text lines, and the `window` object of `--json`).

use crate::target::WindowInfo;
use crate::window::format_duration;
use serde_json::{json, Value};

/// The `window` object of `info --json`.
pub(crate) fn to_json(w: &WindowInfo) -> Value {
    match w {
        WindowInfo::Count {
            insertions,
            guaranteed,
            forgotten_after,
            k,
            l,
            generation_size,
            inserted,
            slice_fills,
        } => json!({
            "type": "count",
            "insertions": insertions,
            "guaranteed": guaranteed,
            "forgotten_after": forgotten_after,
            "k": k,
            "l": l,
            "generation_size": generation_size,
            "generations": l + 1,
            "inserted": inserted,
            "slice_fills": slice_fills,
        }),
        WindowInfo::Time {
            window,
            generations,
            generation_length,
            live,
            ..
        } => json!({
            "type": "time",
            "window": format_duration(*window),
            "window_ms": window.as_millis() as u64,
            "generations": generations,
            "generation_ms": generation_length.as_millis() as u64,
            "live": live.iter().map(|g| json!({
                "number": g.number,
                "age": g.age,
                "fill_ratio": g.fill,
                "estimated_items": g.estimated_len.round() as u64,
            })).collect::<Vec<_>>(),
        }),
    }
}

/// The lines `info` prints for a window.
pub(crate) fn lines(w: &WindowInfo) -> Vec<String> {
    let fills = |f: &mut dyn Iterator<Item = f64>| {
        f.map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(" ")
    };
    match w {
        WindowInfo::Count {
            insertions,
            guaranteed,
            forgotten_after,
            k,
            l,
            generation_size,
            inserted,
            slice_fills,
        } => vec![
            format!(
                "window:           the last {insertions} insertions (each of the last {guaranteed} is always found; forgotten {forgotten_after} insertions later)"
            ),
            format!(
                "generations:      {} of {generation_size} insertions (k = {k}, l = {l}); {inserted} insertions so far",
                l + 1
            ),
            format!(
                "slice fill:       {} (newest first)",
                fills(&mut slice_fills.iter().copied())
            ),
        ],
        WindowInfo::Time {
            window,
            generations,
            generation_length,
            live,
            forgotten_by,
        } => vec![
            format!(
                "window:           {} (forgotten between {} and {} after the last insertion)",
                format_duration(*window),
                format_duration(*window),
                format_duration(*forgotten_by)
            ),
            format!(
                "generations:      {generations} of {}, {} live",
                format_duration(*generation_length),
                live.len()
            ),
            format!(
                "generation fill:  {} (newest first, by age in generations: {})",
                fills(&mut live.iter().map(|g| g.fill)),
                live.iter()
                    .map(|g| g.age.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ],
    }
}

/// Refuses to use an existing filter with a `--window` other than its own (naming both).
pub(crate) fn check_same_window(
    display: &str,
    existing: Option<&WindowInfo>,
    asked: crate::window::Window,
) -> anyhow::Result<()> {
    use crate::window::Window;
    let same = match (existing, asked) {
        (Some(WindowInfo::Count { insertions, .. }), Window::Count(n)) => *insertions == n,
        (Some(WindowInfo::Time { window, .. }), Window::Time(d)) => *window == d,
        _ => false,
    };
    if same {
        return Ok(());
    }
    let theirs = match existing {
        Some(WindowInfo::Count { insertions, .. }) => {
            format!("a window of the last {insertions} insertions")
        }
        Some(WindowInfo::Time { window, .. }) => {
            format!("a window of {}", format_duration(*window))
        }
        None => "no window".to_string(),
    };
    anyhow::bail!(
        "{display}: the filter has {theirs}, not {asked} as --window asks (drop --window to use it as it is)"
    )
}
