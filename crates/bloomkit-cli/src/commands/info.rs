//! `bloomkit info`.

use crate::commands::{human_bytes, open, prob};
use crate::target::{Context, Description};
use anyhow::Result;
use serde_json::{json, Value};
use std::process::ExitCode;

/// The JSON object: exactly kind, scheme, bits, hashes, bytes, capacity, fpp,
/// estimated_items, fill_ratio, estimated_fpp, plus layout for blocked filters and layers for
/// scalable ones.
pub(crate) fn to_json(d: &Description) -> Value {
    let mut v = json!({
        "kind": d.kind,
        "scheme": d.scheme,
        "bits": d.bits,
        "hashes": d.hashes,
        "bytes": d.bytes,
        "capacity": d.capacity,
        "fpp": d.fpp,
        "estimated_items": d.estimated_items.round() as u64,
        "fill_ratio": d.fill_ratio,
        "estimated_fpp": d.estimated_fpp,
    });
    if let Some(layout) = &d.layout {
        v["layout"] = json!(layout);
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

pub(crate) fn run(target: &str, json: bool, ctx: &Context) -> Result<ExitCode> {
    let t = open(target, ctx)?;
    let d = t.describe()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&to_json(&d))?);
        return Ok(ExitCode::SUCCESS);
    }
    let unknown = || "unknown".to_string();
    println!("target:           {}", t.location().display());
    println!("kind:             {}", d.kind);
    println!("scheme:           {} (hashing {})", d.scheme, d.hashing);
    println!("bits:             {}", d.bits);
    println!("hashes:           {}", d.hashes);
    if let Some(layout) = &d.layout {
        println!("layout:           {layout}");
    }
    if let Some(range) = &d.range {
        println!("range:            {range}");
    }
    println!("bytes:            {} ({})", d.bytes, human_bytes(d.bytes));
    println!(
        "capacity:         {}",
        d.capacity.map_or_else(unknown, |c| c.to_string())
    );
    println!("fpp:              {}", d.fpp.map_or_else(unknown, prob));
    println!("estimated items:  {:.0}", d.estimated_items);
    println!("fill ratio:       {:.4}", d.fill_ratio);
    println!("estimated fpp:    {}", prob(d.estimated_fpp));
    if let Some(layers) = &d.layers {
        println!("layers:           {}", layers.len());
        for (i, l) in layers.iter().enumerate() {
            println!(
                "  {i}: capacity {}, fpp {}, {} bits, {} hashes, {} inserted, fill {:.4}",
                l.capacity,
                prob(l.fpp),
                l.bits,
                l.hashes,
                l.inserted,
                l.fill_ratio
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
