//! How `info` shows an expiring filter's window: its size, its generations and their fill
//! (text lines, and the `window` object of `--json`).

use crate::target::WindowInfo;
use crate::window::format_duration;
use serde_json::{json, Value};

/// The `window` object of `info --json`.
pub(crate) fn to_json(w: &WindowInfo) -> Value {
    match w {
        WindowInfo::Count(c) => json!({
            "type": "count",
            "insertions": c.insertions,
            "guaranteed": c.guaranteed,
            "forgotten_after": c.forgotten_after,
            "k": c.k,
            "l": c.l,
            "generation_size": c.generation_size,
            "generations": c.l + 1,
            "inserted": c.inserted,
            "slice_fills": c.slice_fills,
            "layout": c.layout,
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
        WindowInfo::Count(c) => vec![
            format!(
                "window:           the last {} insertions (each of the last {} is always found; forgotten {} insertions later)",
                c.insertions, c.guaranteed, c.forgotten_after
            ),
            format!(
                "generations:      {} of {} insertions (k = {}, l = {}, {} layout); {} insertions so far",
                c.l + 1,
                c.generation_size,
                c.k,
                c.l,
                c.layout,
                c.inserted
            ),
            format!(
                "slice fill:       {} (newest first)",
                fills(&mut c.slice_fills.iter().copied())
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

/// Refuses to use an existing filter with a `--window` or `--generations` other than its own,
/// naming both (an existing filter keeps the window it was made with).
pub(crate) fn check_same_window(
    display: &str,
    existing: Option<&WindowInfo>,
    asked: Option<crate::window::Window>,
    generations: Option<u32>,
) -> anyhow::Result<()> {
    use crate::window::Window;
    let theirs = match existing {
        Some(WindowInfo::Count(c)) => format!("a window of the last {} insertions", c.insertions),
        Some(WindowInfo::Time { window, .. }) => {
            format!("a window of {}", format_duration(*window))
        }
        None => "no window".to_string(),
    };
    if let Some(asked) = asked {
        let same = match (existing, asked) {
            (Some(WindowInfo::Count(c)), Window::Count(n)) => c.insertions == n,
            (Some(WindowInfo::Time { window, .. }), Window::Time(d)) => *window == d,
            _ => false,
        };
        if !same {
            anyhow::bail!(
                "{display}: the filter has {theirs}, not {asked} as --window asks (drop --window to use it as it is)"
            );
        }
    }
    match (existing, generations) {
        (_, None) => Ok(()),
        (Some(WindowInfo::Time { generations: g, .. }), Some(asked)) if *g == asked => Ok(()),
        (Some(WindowInfo::Time { generations: g, .. }), Some(asked)) => anyhow::bail!(
            "{display}: the filter has {theirs} in {g} generations, not {asked} generations as --generations asks (drop --generations to use it as it is)"
        ),
        (_, Some(_)) => anyhow::bail!(
            "{display}: the filter has {theirs}; --generations is for time windows (drop --generations to use it as it is)"
        ),
    }
}
