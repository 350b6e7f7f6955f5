//! `bloomkit info`.

use crate::commands::{human_bytes, open, prob};
use crate::summary::{filter_json, health, Output};
use crate::target::Context;
use anyhow::Result;
use std::io::Write;
use std::process::ExitCode;

pub(crate) fn run(target: &str, ctx: &Context, out: &Output) -> Result<ExitCode> {
    let t = open(target, ctx)?;
    let d = t.describe()?;
    if out.quiet {
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = crate::stdout::lock();
    if out.json {
        writeln!(o, "{}", serde_json::to_string_pretty(&filter_json(&d))?)?;
        o.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let h = health(&d);
    let unknown = || "unknown".to_string();
    let mut text = String::new();
    fn line(text: &mut String, label: &str, value: String) {
        text.push_str(&format!("{:<18}{value}\n", format!("{label}:")));
    }
    line(&mut text, "target", t.location().display());
    line(&mut text, "kind", d.kind.to_string());
    line(
        &mut text,
        "scheme",
        format!("{} (hashing {})", d.scheme, d.hashing),
    );
    line(&mut text, "bits", d.bits.to_string());
    line(&mut text, "hashes", d.hashes.to_string());
    if let Some(layout) = &d.layout {
        line(&mut text, "layout", layout.clone());
    }
    if let Some(range) = &d.range {
        line(&mut text, "range", range.clone());
    }
    line(
        &mut text,
        "bytes",
        format!("{} ({})", d.bytes, human_bytes(d.bytes)),
    );
    line(
        &mut text,
        "capacity",
        d.capacity.map_or_else(unknown, |c| c.to_string()),
    );
    line(&mut text, "fpp", d.fpp.map_or_else(unknown, prob));
    line(
        &mut text,
        "estimated items",
        if h.saturated {
            "unknown (saturated: nearly every bit is set)".to_string()
        } else {
            format!("{:.0}", d.estimated_items)
        },
    );
    line(&mut text, "fill ratio", format!("{:.4}", d.fill_ratio));
    line(&mut text, "estimated fpp", prob(d.estimated_fpp));
    if h.over_capacity {
        line(&mut text, "over capacity", "yes".to_string());
    }
    for l in d.window.iter().flat_map(super::window_info::lines) {
        text.push_str(&l);
        text.push('\n');
    }
    if let Some(layers) = &d.layers {
        line(&mut text, "layers", layers.len().to_string());
        for (i, l) in layers.iter().enumerate() {
            text.push_str(&format!(
                "  {i}: capacity {}, fpp {}, {} bits, {} hashes, {} inserted, fill {:.4}\n",
                l.capacity,
                prob(l.fpp),
                l.bits,
                l.hashes,
                l.inserted,
                l.fill_ratio
            ));
        }
    }
    o.write_all(text.as_bytes())?;
    o.flush()?;
    Ok(ExitCode::SUCCESS)
}
