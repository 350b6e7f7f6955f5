//! What a command reports when it ends, for people (a sentence on standard error) and for
//! scripts (`--json`: one JSON object), and the warnings about a filter that is over its
//! capacity or whose false-positive rate has passed twice its target.
//!
//! Every command builds its JSON summary with [`Summary`]; the filter's state in it comes from
//! a [`Description`], which every kind fills, so a new kind shows sensible values without
//! changes here.

use crate::commands::prob;
use crate::target::{Description, Target};
use anyhow::{Context, Result};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::process::ExitCode;

/// How much a command prints (from the global flags).
#[derive(Debug, Clone, Copy, Default)]
pub struct Output {
    /// `-q`: nothing at all (errors excepted); the exit status tells.
    pub quiet: bool,
    /// `--json`: the summary as one JSON object instead of a sentence.
    pub json: bool,
    /// A progress bar is wanted (no `--no-progress`, no `-q`).
    pub progress: bool,
}

impl Output {
    /// Whether the sentence summary is printed on standard error.
    pub fn text(&self) -> bool {
        !self.quiet && !self.json
    }
}

/// Whether a filter is past its design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    /// More elements than its design capacity (never for a scalable filter, which grows).
    pub over_capacity: bool,
    /// So full that the number of elements cannot be estimated (every bit, or nearly, set):
    /// it answers "probably present" for nearly everything.
    pub saturated: bool,
    /// Its estimated FPR is more than twice the target.
    pub fpp_exceeded: bool,
}

/// How a described filter stands against its design.
pub fn health(d: &Description) -> Health {
    if d.range.is_some() {
        // A bitmap is exact: it holds any number of the integers of its range.
        return Health {
            over_capacity: false,
            saturated: false,
            fpp_exceeded: false,
        };
    }
    let saturated = !d.estimated_items.is_finite()
        || d.estimated_items >= 2f64.powi(53)
        || (d.fill_ratio.is_finite() && d.fill_ratio >= 1.0);
    let grows = d.layers.is_some();
    Health {
        over_capacity: !grows
            && d.capacity
                .is_some_and(|c| saturated || d.estimated_items > c as f64 * 1.0001),
        saturated,
        fpp_exceeded: d.fpp.is_some_and(|p| d.estimated_fpp > 2.0 * p),
    }
}

/// The estimated number of items, or `null` when it cannot be estimated (saturated).
fn estimated_items(d: &Description, h: Health) -> Value {
    if h.saturated {
        Value::Null
    } else {
        json!(d.estimated_items.round() as u64)
    }
}

/// A finite number, or `null`.
fn number(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// The filter's JSON object, as `info --json` prints it: exactly kind, scheme, bits, hashes,
/// bytes, capacity, fpp, estimated_items, fill_ratio, estimated_fpp, over_capacity,
/// saturated, plus layout where the kind has one (blocked, d-left, minimal-increase counting,
/// bitmaps), range for bitmaps, window for expiring filters and layers for scalable ones.
pub fn filter_json(d: &Description) -> Value {
    let h = health(d);
    let mut v = json!({
        "kind": d.kind,
        "scheme": d.scheme,
        "bits": d.bits,
        "hashes": d.hashes,
        "bytes": d.bytes,
        "capacity": d.capacity,
        "fpp": d.fpp,
        "estimated_items": estimated_items(d, h),
        "fill_ratio": number(d.fill_ratio),
        "estimated_fpp": number(d.estimated_fpp),
        "over_capacity": h.over_capacity,
        "saturated": h.saturated,
    });
    if let Some(layout) = &d.layout {
        v["layout"] = json!(layout);
    }
    if let Some(window) = &d.window {
        v["window"] = crate::commands::window_info::to_json(window);
    }
    if let Some(range) = &d.range {
        v["range"] = json!(range);
    }
    if let Some(layers) = &d.layers {
        v["layers"] = layers
            .iter()
            .map(|l| {
                json!({
                    "capacity": l.capacity,
                    "fpp": l.fpp,
                    "bits": l.bits,
                    "hashes": l.hashes,
                    "inserted": l.inserted,
                    "fill_ratio": l.fill_ratio,
                })
            })
            .collect();
    }
    v
}

/// The warnings for a filter past its design, one line each (none when it is within it).
pub fn warnings(place: &str, d: &Description) -> Vec<String> {
    let h = health(d);
    let mut out = Vec::new();
    let hint = "create a larger filter (sizes: bloomkit calc -n N -p P) or a scalable one (--kind scalable)";
    if h.saturated {
        out.push(format!(
            "warning: {place} is saturated (nearly every bit is set): it answers 'probably present' for almost anything; {hint}"
        ));
    } else if h.over_capacity {
        out.push(format!(
            "warning: {place} holds about {:.0} items, more than its capacity of {}; {hint}",
            d.estimated_items,
            d.capacity.unwrap_or_default()
        ));
    }
    if h.fpp_exceeded && !h.saturated {
        out.push(format!(
            "warning: {place}: its estimated false-positive rate is {}, more than twice its target {}",
            prob(d.estimated_fpp),
            prob(d.fpp.unwrap_or_default())
        ));
    }
    out
}

/// Prints the warnings for `target` on standard error (unless `-q`), and returns its
/// description for the JSON summary.
pub fn check_health(target: &Target, out: &Output) -> Result<Description> {
    let d = target.describe()?;
    if !out.quiet {
        for w in warnings(&target.location().display(), &d) {
            crate::shown::say!("bloomkit: {w}");
        }
    }
    Ok(d)
}

/// Reports the filter a command wrote into `target` (nothing under `-q`): its warnings, the
/// sentence `says` makes of its description (text mode), and `summary` with the description
/// (`--json`).
pub fn report_written(
    target: &Target,
    out: &Output,
    summary: Summary,
    says: impl FnOnce(&Description) -> String,
) -> Result<ExitCode> {
    if out.quiet {
        return Ok(ExitCode::SUCCESS);
    }
    let d = check_health(target, out)?;
    if out.text() {
        crate::shown::say!("{}", says(&d));
    }
    summary.filter(&d).print(out, false)?;
    Ok(ExitCode::SUCCESS)
}

/// A command's JSON summary: `{"command": ..., "target": ..., ...}`.
#[derive(Debug, Clone)]
pub struct Summary {
    fields: Map<String, Value>,
}

impl Summary {
    /// A summary of `command` on `target`.
    pub fn new(command: &str, target: &str) -> Summary {
        let mut fields = Map::new();
        fields.insert("command".into(), json!(command));
        fields.insert("target".into(), json!(target));
        Summary { fields }
    }

    /// A summary of a command without a target (`calc`).
    pub fn without_target(command: &str) -> Summary {
        let mut fields = Map::new();
        fields.insert("command".into(), json!(command));
        Summary { fields }
    }

    /// Adds a field.
    pub fn set(mut self, key: &str, value: impl Into<Value>) -> Summary {
        self.fields.insert(key.into(), value.into());
        self
    }

    /// Adds the filter's state (see [`filter_json`]) as `filter`.
    pub fn filter(self, d: &Description) -> Summary {
        self.set("filter", filter_json(d))
    }

    /// Prints it as one JSON object on standard output (or standard error) when `--json` was
    /// given and `-q` was not.
    pub fn print(self, out: &Output, on_stderr: bool) -> Result<()> {
        if !out.json || out.quiet {
            return Ok(());
        }
        let text = serde_json::to_string_pretty(&Value::Object(self.fields))?;
        if on_stderr {
            eprintln!("{text}");
        } else {
            let mut o = crate::stdout::lock();
            writeln!(o, "{text}")
                .and_then(|()| o.flush())
                .context("the command itself completed, but not the printing of its summary")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(items: f64, fill: f64, fpp_now: f64) -> Description {
        Description {
            kind: "classic",
            scheme: "default".into(),
            hashing: "xxh3".into(),
            bits: 1000,
            hashes: 7,
            bytes: 128,
            capacity: Some(100),
            fpp: Some(0.01),
            layout: None,
            estimated_items: items,
            fill_ratio: fill,
            estimated_fpp: fpp_now,
            ..Default::default()
        }
    }

    #[test]
    fn saturation_and_capacity() {
        let ok = health(&desc(50.0, 0.3, 0.001));
        assert!(!ok.over_capacity && !ok.saturated && !ok.fpp_exceeded);
        let over = health(&desc(300.0, 0.8, 0.2));
        assert!(over.over_capacity && !over.saturated && over.fpp_exceeded);
        let full = desc(f64::INFINITY, 1.0, 1.0);
        assert!(health(&full).saturated);
        let v = filter_json(&full);
        assert_eq!(v["estimated_items"], Value::Null);
        assert_eq!(v["saturated"], json!(true));
        assert_eq!(warnings("f", &full).len(), 1);
        assert!(warnings("f", &desc(50.0, 0.3, 0.001)).is_empty());
    }
}
