//! `bloomkit calc`: parameters from any sufficient subset of n, p, m, k, and the FPR plot.

use crate::cli::{SchemeName, Sizing};
use crate::commands::{human_bytes, open, prob};
use crate::plot::{self, Curve, Point};
use crate::target::Context;
use anyhow::{bail, Result};
use bloomkit::math;
use clap::ValueEnum;
use std::path::Path;
use std::process::ExitCode;

/// One row of the table for (n, p).
struct Row {
    kind: &'static str,
    scheme: &'static str,
    bits: u64,
    bytes: u64,
    hashes: u32,
    fpp: f64,
    note: &'static str,
}

fn rows(n: u64, p: f64) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &s in SchemeName::value_variants() {
        match s.preset().params(n, p) {
            Ok(params) => rows.push(Row {
                kind: "classic",
                scheme: s.name(),
                bits: params.bits,
                bytes: params.words() * 8,
                hashes: params.hashes,
                fpp: params.expected_fpp(n),
                note: "",
            }),
            // A library's own limits (Redisson's 2^32 bits, Guava's 2^31 words) rule it out.
            Err(_) => continue,
        }
    }
    // Blocking crowds some blocks, so a blocked filter needs more bits for the same FPR.
    let b = bloomkit::BlockSpec::for_capacity(n, p)?;
    rows.push(Row {
        kind: "blocked",
        scheme: "default",
        bits: b.bits(),
        bytes: b.bits() / 8,
        hashes: b.hashes(),
        fpp: b.expected_fpp(n),
        note: "one cache line per element",
    });
    let d = math::params_for(n, p)?;
    rows.push(Row {
        kind: "counting",
        scheme: "default",
        bits: d.bits,
        bytes: (d.bits * 4).div_ceil(64) * 8,
        hashes: d.hashes,
        fpp: d.expected_fpp(n),
        note: "4-bit counters",
    });
    // A scalable filter's first layer gets a tighter FPR so that the compound bound stays p
    // as layers are added.
    let (first_n, first_p) = bloomkit::ScalableConfig::new(n, p)
        .layer_target(0)
        .ok_or_else(|| anyhow::anyhow!("no scalable filter for {n} elements at {p}"))?;
    let s = math::params_for(first_n, first_p)?;
    rows.push(Row {
        kind: "scalable",
        scheme: "default",
        bits: s.bits,
        bytes: s.words() * 8,
        hashes: s.hashes,
        fpp: s.expected_fpp(n),
        note: "first layer; grows x2",
    });
    Ok(rows)
}

pub(crate) fn run(
    sizing: &Sizing,
    bits: Option<u64>,
    hashes: Option<u32>,
    plot_path: Option<&Path>,
    filter: Option<&str>,
    ctx: &Context,
) -> Result<ExitCode> {
    if let Some(k) = hashes {
        math::Params { bits: 1, hashes: k }.validate()?;
    }
    let filter_desc = match filter {
        Some(f) => Some((f, open(f, ctx)?.describe()?)),
        None => None,
    };
    let (n, p) = (sizing.capacity, sizing.fpp);
    if let Some(range) = sizing.range {
        let Some(n) = n else {
            bail!("calc --range needs --capacity N, the number of integers");
        };
        if bits.is_none() && p.is_none() {
            super::calc_bitmap::advise(range, n, None)?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    // The (m, k, n) to report and plot.
    let (m, k, n) = match (bits, n, p) {
        (None, Some(n), Some(p)) => match hashes {
            None => print_table(n, p)?,
            Some(k) => {
                let m = math::bits_for_hashes(n, p, k)?;
                print_params(m, k, n, Some(p));
                (m, k, n)
            }
        },
        (Some(m), Some(n), _) => {
            let k = hashes.unwrap_or_else(|| math::optimal_hashes(m, n));
            print_params(m, k, n, p);
            (m, k, n)
        }
        (Some(m), None, Some(p)) => {
            let k = match hashes {
                Some(k) => k,
                None => math::hashes_for_fpp(p)?,
            };
            let n = math::max_capacity(m, k, p)?;
            print_params(m, k, n, Some(p));
            (m, k, n)
        }
        (None, _, _) | (Some(_), None, None) => match &filter_desc {
            Some((_, d)) if d.layers.is_none() => {
                let n = d.capacity.unwrap_or(d.estimated_items.round() as u64).max(1);
                print_params(d.bits, d.hashes, n, d.fpp);
                (d.bits, d.hashes, n)
            }
            _ => bail!(
                "calc needs two of --capacity, --fpp, --bits (or --filter with a classic or counting filter)"
            ),
        },
    };
    if let (Some(range), Some(n)) = (sizing.range, sizing.capacity) {
        super::calc_bitmap::advise(range, n, p)?;
    }
    if let Some((name, d)) = &filter_desc {
        println!(
            "\n{name}: about {:.0} items now, estimated FPR {}",
            d.estimated_items,
            prob(d.estimated_fpp)
        );
    }
    if let Some(path) = plot_path {
        let curve = Curve {
            bits: m,
            hashes: k,
            design: Point {
                items: n as f64,
                fpp: math::expected_fpp(m, k, n),
                label: format!("design: n = {n}"),
            },
        };
        let current = filter_desc.as_ref().map(|(name, d)| Point {
            items: d.estimated_items,
            fpp: d.estimated_fpp,
            label: format!("{name}: now"),
        });
        plot::write(path, &curve, current.as_ref())?;
        eprintln!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The table of every kind and scheme for (n, p); returns the default classic filter's
/// (m, k, n) for the plot.
fn print_table(n: u64, p: f64) -> Result<(u64, u32, u64)> {
    println!(
        "For {n} elements at a false-positive rate of {}:\n",
        prob(p)
    );
    println!(
        "{:<9} {:<9} {:>14} {:>11} {:>4} {:>12} {:>12}  note",
        "kind", "scheme", "bits", "bytes", "k", "FPR at n", "bits/elem"
    );
    for r in rows(n, p)? {
        println!(
            "{:<9} {:<9} {:>14} {:>11} {:>4} {:>12} {:>12.2}  {}",
            r.kind,
            r.scheme,
            r.bits,
            human_bytes(r.bytes),
            r.hashes,
            prob(r.fpp),
            r.bits as f64 / n.max(1) as f64,
            r.note
        );
    }
    let d = math::params_for(n, p)?;
    Ok((d.bits, d.hashes, n))
}

fn print_params(m: u64, k: u32, n: u64, target: Option<f64>) {
    let fpp = math::expected_fpp(m, k, n);
    println!("bits (m):       {m} ({})", human_bytes(m.div_ceil(64) * 8));
    println!("hashes (k):     {k}");
    println!("capacity (n):   {n}");
    println!("expected FPR:   {}", prob(fpp));
    println!("bits/element:   {:.2}", m as f64 / n.max(1) as f64);
    println!(
        "counting:       {} with 4-bit counters",
        human_bytes((m * 4).div_ceil(64) * 8)
    );
    if let Some(p) = target {
        println!(
            "meets target:   {} (target {})",
            if fpp <= p { "yes" } else { "no" },
            prob(p)
        );
    }
}
