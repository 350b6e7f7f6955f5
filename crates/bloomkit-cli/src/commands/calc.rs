//! `bloomkit calc`: parameters from any sufficient subset of n, p, m, k, and the FPR plot.

use crate::cli::{SchemeName, Sizing};
use crate::commands::{human_bytes, plural, prob};
use crate::plot::{self, Curve, Point};
use crate::summary::{filter_json, Output, Summary};
use crate::target::{Context, Location, Target};
use anyhow::{bail, Result};
use bloomkit::math;
use clap::ValueEnum;
use serde_json::json;
use std::io::Write;
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

/// A kind that cannot meet the rate, and why.
type Unattainable = (&'static str, String);

/// The rows for (n, p), and the kinds that cannot meet `p` for `n`.
fn rows(n: u64, p: f64) -> Result<(Vec<Row>, Vec<Unattainable>)> {
    let mut rows = Vec::new();
    let mut unattainable = Vec::new();
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
    // Blocking crowds some blocks, so a blocked filter needs more bits for the same FPR (and
    // cannot reach the lowest rates at all).
    match bloomkit::BlockSpec::for_capacity(n, p) {
        Ok(b) => rows.push(Row {
            kind: "blocked",
            scheme: "default",
            bits: b.bits(),
            bytes: b.bits() / 8,
            hashes: b.hashes(),
            fpp: b.expected_fpp(n),
            note: "one cache line per element",
        }),
        Err(e) => unattainable.push(("blocked", e.to_string())),
    }
    let d = math::params_for(n, p)?;
    rows.push(Row {
        kind: "counting",
        scheme: "default",
        bits: d.bits,
        bytes: counter_bytes(d.bits),
        hashes: d.hashes,
        fpp: d.expected_fpp(n),
        note: "4-bit counters",
    });
    match math::DLeftParams::for_capacity(n, p) {
        Ok(dl) => rows.push(Row {
            kind: "dleft",
            scheme: "default",
            bits: dl.bits(),
            bytes: dl.bits().div_ceil(64) * 8,
            hashes: dl.tables,
            fpp: dl.expected_fpp(n),
            note: "removal in ~half the counting memory",
        }),
        Err(e) => unattainable.push(("dleft", e.to_string())),
    }
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
    Ok((rows, unattainable))
}

/// What `calc` prints, collected first so that it is written (and a closed pipe noticed) in
/// one place.
struct Report {
    text: String,
    json: Summary,
}

impl Report {
    /// Replaces the expected FPR that [`params`] computed with the classic formula by a
    /// blocked filter's own.
    fn fix_fpp(&mut self, fpp: f64, target: Option<f64>) {
        let lines: Vec<String> = self
            .text
            .lines()
            .map(|l| {
                if l.starts_with("expected FPR:") {
                    format!("expected FPR:   {} (blocked layout)", prob(fpp))
                } else if let (true, Some(p)) = (l.starts_with("meets target:"), target) {
                    format!(
                        "meets target:   {} (target {})",
                        if fpp <= p { "yes" } else { "no" },
                        prob(p)
                    )
                } else {
                    l.to_string()
                }
            })
            .collect();
        self.text = lines.join("\n") + "\n";
        let mut json = self.json.clone().set("expected_fpp", fpp);
        if let Some(p) = target {
            json = json.set("meets_target", fpp <= p);
        }
        self.json = json;
    }

    fn line(&mut self, line: impl AsRef<str>) {
        self.text.push_str(line.as_ref());
        self.text.push('\n');
    }
}

/// The options of `calc`.
pub(crate) struct CalcArgs<'a> {
    pub sizing: &'a Sizing,
    pub bits: Option<u64>,
    pub hashes: Option<u32>,
    pub plot: Option<&'a Path>,
    pub filter: Option<&'a str>,
}

pub(crate) fn run(a: CalcArgs, ctx: &Context, out: &Output) -> Result<ExitCode> {
    let CalcArgs {
        sizing,
        bits,
        hashes,
        plot: plot_path,
        filter,
    } = a;
    if let Some(k) = hashes {
        math::Params { bits: 1, hashes: k }.validate()?;
    }
    // Named as every message names a target: a Redis URL without its password.
    let filter_desc = match filter {
        Some(f) => {
            let location = Location::parse(f)?;
            let described = Target::open(&location, ctx)?.describe()?;
            Some((location.display(), described))
        }
        None => None,
    };
    let mut r = Report {
        text: String::new(),
        json: Summary::without_target("calc"),
    };
    // A blocked filter's FPR is its layout's, not the classic formula's.
    let block = match &filter_desc {
        Some((_, d)) => match (&d.layout, d.capacity, d.fpp) {
            (Some(_), Some(c), Some(p)) => bloomkit::BlockSpec::for_capacity(c, p)
                .ok()
                .filter(|b| b.bits() == d.bits),
            _ => None,
        },
        None => None,
    };
    let (n, p) = (sizing.capacity, sizing.fpp);
    let bitmap = match sizing.range {
        Some(range) => {
            let Some(n) = n else {
                bail!("calc --range needs --capacity N, the number of integers");
            };
            Some(super::calc_bitmap::advise(range, n, p)?)
        }
        None => None,
    };
    if let (Some((text, json)), None, None) = (&bitmap, bits, p) {
        // Only the bitmap's sizes: no Bloom filter was described.
        r.line(text.trim_start());
        r.json = r.json.clone().set("bitmap", json.clone());
        return print_report(r, out);
    }
    // The (m, k, n) to report.
    let (m, k, n) = match (bits, n, p) {
        (None, Some(n), Some(p)) => match hashes {
            None => table(&mut r, n, p)?,
            Some(k) => {
                let m = math::bits_for_hashes(n, p, k)?;
                params(&mut r, m, k, n, Some(p));
                (m, k, n)
            }
        },
        (Some(m), Some(n), _) => {
            let k = hashes.unwrap_or_else(|| math::optimal_hashes(m, n));
            params(&mut r, m, k, n, p);
            (m, k, n)
        }
        (Some(m), None, Some(p)) => {
            let k = match hashes {
                Some(k) => k,
                None => math::hashes_for_fpp(p)?,
            };
            let n = math::max_capacity(m, k, p)?;
            if n == 0 {
                // An empty filter meets any rate: say what one element needs instead.
                let needed = math::bits_for_hashes(1, p, k)
                    .map(|b| format!("; one element needs {b} bits"))
                    .unwrap_or_default();
                bail!(
                    "{m} bits hold no element at FPR {} with {k} hash functions{needed}",
                    prob(p)
                );
            }
            params(&mut r, m, k, n, Some(p));
            (m, k, n)
        }
        (None, _, _) | (Some(_), None, None) => match &filter_desc {
            // A d-left filter's cells follow no (m, k) formula: its FPR is in `info`.
            Some((_, d)) if d.layers.is_none() && d.kind != "dleft" => {
                let n = d.capacity.unwrap_or(d.estimated_items.round() as u64).max(1);
                let fpp = block.as_ref().map(|b| b.expected_fpp(n));
                params(&mut r, d.bits, d.hashes, n, d.fpp);
                if let Some(f) = fpp {
                    r.fix_fpp(f, d.fpp);
                }
                (d.bits, d.hashes, n)
            }
            _ => bail!(
                "calc needs two of --capacity, --fpp, --bits (or --filter with a classic or counting filter)"
            ),
        },
    };
    // The plot shows the filter's own curve when one is given (its point is on that curve,
    // not on the one of other parameters), else the parameters computed above.
    let (m, k, n) = match &filter_desc {
        Some((_, d)) if d.layers.is_none() => (
            d.bits,
            d.hashes,
            d.capacity
                .unwrap_or(d.estimated_items.round() as u64)
                .max(1),
        ),
        _ => (m, k, n),
    };
    if let Some((text, json)) = bitmap {
        r.line(text);
        r.json = r.json.clone().set("bitmap", json);
    }
    if let Some((name, d)) = &filter_desc {
        r.line(format!(
            "\n{name}: about {} now, estimated FPR {}",
            plural(d.estimated_items.round() as u64, "item", "items"),
            prob(d.estimated_fpp)
        ));
        r.json = r.json.clone().set("filter", filter_json(d));
    }
    if let Some(path) = plot_path {
        let curve = Curve {
            block: block.clone(),
            bits: m,
            hashes: k,
            design: Point {
                items: n as f64,
                fpp: block
                    .as_ref()
                    .map_or_else(|| math::expected_fpp(m, k, n), |b| b.expected_fpp(n)),
                label: format!("design: n = {n}"),
            },
        };
        let current = filter_desc.as_ref().map(|(name, d)| Point {
            items: d.estimated_items,
            fpp: d.estimated_fpp,
            label: format!("{name}: now"),
        });
        plot::write(path, &curve, current.as_ref())?;
        r.json = r.json.clone().set("plot", path.display().to_string());
        if out.text() {
            crate::shown::say!("wrote {}", path.display());
        }
    }
    print_report(r, out)
}

/// Prints the report: its JSON with `--json`, else its text.
fn print_report(r: Report, out: &Output) -> Result<ExitCode> {
    if out.json {
        r.json.print(out, false)?;
    } else if !out.quiet {
        let mut o = crate::stdout::lock();
        o.write_all(r.text.as_bytes())?;
        o.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The table of every kind and scheme for (n, p); returns the default classic filter's
/// (m, k, n).
fn table(r: &mut Report, n: u64, p: f64) -> Result<(u64, u32, u64)> {
    r.line(format!(
        "For {n} elements at a false-positive rate of {}:\n",
        prob(p)
    ));
    r.line(format!(
        "{:<9} {:<10} {:>14} {:>11} {:>4} {:>12} {:>12}  note",
        "kind", "scheme", "bits", "bytes", "k", "FPR at n", "bits/elem"
    ));
    let mut json_rows = Vec::new();
    let (rows, unattainable) = rows(n, p)?;
    for row in rows {
        let per = row.bits as f64 / n.max(1) as f64;
        r.line(format!(
            "{:<9} {:<10} {:>14} {:>11} {:>4} {:>12} {:>12.2}  {}",
            row.kind,
            row.scheme,
            row.bits,
            human_bytes(row.bytes),
            row.hashes,
            prob(row.fpp),
            per,
            row.note
        ));
        json_rows.push(json!({
            "kind": row.kind,
            "scheme": row.scheme,
            "bits": row.bits,
            "bytes": row.bytes,
            "hashes": row.hashes,
            "fpp_at_capacity": row.fpp,
            "bits_per_element": per,
        }));
    }
    for (kind, why) in &unattainable {
        r.line(format!("{kind:<9} (none: {why})"));
    }
    r.json = r
        .json
        .clone()
        .set("capacity", n)
        .set("fpp", p)
        .set("rows", json_rows)
        .set(
            "unattainable",
            unattainable
                .iter()
                .map(|(kind, why)| json!({ "kind": kind, "reason": why }))
                .collect::<Vec<_>>(),
        );
    let d = math::params_for(n, p)?;
    Ok((d.bits, d.hashes, n))
}

fn params(r: &mut Report, m: u64, k: u32, n: u64, target: Option<f64>) {
    let fpp = math::expected_fpp(m, k, n);
    r.line(format!(
        "bits (m):       {m} ({})",
        human_bytes(m.div_ceil(64) * 8)
    ));
    r.line(format!("hashes (k):     {k}"));
    r.line(format!("capacity (n):   {n}"));
    r.line(format!("expected FPR:   {}", prob(fpp)));
    r.line(format!("bits/element:   {:.2}", m as f64 / n.max(1) as f64));
    r.line(format!(
        "counting:       {} with 4-bit counters",
        human_bytes(counter_bytes(m))
    ));
    let mut json = r
        .json
        .clone()
        .set("bits", m)
        .set("bytes", m.div_ceil(64) * 8)
        .set("hashes", k)
        .set("capacity", n)
        .set("expected_fpp", fpp)
        .set("bits_per_element", m as f64 / n.max(1) as f64);
    if let Some(p) = target {
        r.line(format!(
            "meets target:   {} (target {})",
            if fpp <= p { "yes" } else { "no" },
            prob(p)
        ));
        json = json.set("fpp", p).set("meets_target", fpp <= p);
    }
    r.json = json;
}

/// Bytes of `bits` 4-bit counters in 64-bit words (fits a `u64` for every bit count).
fn counter_bytes(bits: u64) -> u64 {
    ((u128::from(bits) * 4).div_ceil(64) * 8) as u64
}
