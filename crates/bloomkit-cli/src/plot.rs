//! The FPR plot of `bloomkit calc --plot`: a small, dependency-free SVG.
//!
//! Written by hand because it is one line chart with a log axis: a plotting crate would add
//! far more to the build than this file.

use anyhow::{bail, Result};
use bloomkit::math::expected_fpp;
use std::fmt::Write as _;
use std::path::Path;

/// A point to mark on the chart.
pub struct Point {
    /// Inserted elements.
    pub items: f64,
    /// FPR at that point.
    pub fpp: f64,
    /// Its label.
    pub label: String,
}

/// The curve: expected FPR of an `m`-bit, `k`-hash filter (or of a blocked filter's layout).
pub struct Curve {
    /// The blocked filter's layout, whose FPR is not the classic formula's.
    pub block: Option<bloomkit::BlockSpec>,
    /// m.
    pub bits: u64,
    /// k.
    pub hashes: u32,
    /// The design point (the x axis spans twice its element count).
    pub design: Point,
}

const W: f64 = 720.0;
const H: f64 = 480.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;

/// Renders the chart as SVG text.
pub fn render(curve: &Curve, current: Option<&Point>) -> String {
    let mut x_max = (curve.design.items * 2.0).max(10.0);
    if let Some(c) = current {
        x_max = x_max.max(c.items * 1.1);
    }
    let fpp_at = |x: f64| match &curve.block {
        Some(b) => b.expected_fpp(x.round() as u64),
        None => expected_fpp(curve.bits, curve.hashes, x.round() as u64),
    };
    // Log y axis: from three decades below the design FPR (at least 1e-12) up to 1.
    let low = curve.design.fpp.max(1e-12).log10().floor() - 3.0;
    let y_min = low.max(-12.0);
    let px = |x: f64| LEFT + x / x_max * (W - LEFT - RIGHT);
    let py = |p: f64| {
        let l = p.max(10f64.powf(y_min)).log10();
        TOP + (0.0 - l) / (0.0 - y_min) * (H - TOP - BOTTOM)
    };
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="28" text-anchor="middle" font-size="15">Expected false-positive rate, m = {} bits, k = {}</text>
"##,
        W / 2.0,
        curve.bits,
        curve.hashes
    );
    // Grid and axis labels.
    let mut d = y_min as i32;
    while d <= 0 {
        let y = py(10f64.powi(d));
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">1e{d}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0
        );
        d += 1;
    }
    for i in 0..=5 {
        let x = x_max * f64::from(i) / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1:.1}" stroke="#ddd"/><text x="{0:.1}" y="{2:.1}" text-anchor="middle">{3}</text>"##,
            px(x),
            H - BOTTOM,
            H - BOTTOM + 18.0,
            x.round()
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle">inserted elements</text>
<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">false-positive rate</text>"##,
        (LEFT + W - RIGHT) / 2.0,
        H - 15.0,
        H / 2.0,
        H / 2.0
    );
    // The curve.
    let mut path = String::new();
    for i in 0..=400 {
        let x = x_max * f64::from(i) / 400.0;
        let _ = write!(
            path,
            "{}{:.1},{:.1} ",
            if i == 0 { "M" } else { "L" },
            px(x),
            py(fpp_at(x))
        );
    }
    let _ = writeln!(
        s,
        r##"<path d="{}" fill="none" stroke="#1f77b4" stroke-width="2"/>"##,
        path.trim_end()
    );
    let mut mark = |p: &Point, color: &str| {
        let (x, y) = (px(p.items), py(p.fpp));
        let _ = writeln!(
            s,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="5" fill="{color}"/><text x="{:.1}" y="{:.1}" fill="{color}">{} ({:.3e})</text>"##,
            x + 8.0,
            y - 8.0,
            escape(&p.label),
            p.fpp
        );
    };
    mark(&curve.design, "#2ca02c");
    if let Some(c) = current {
        mark(c, "#d62728");
    }
    s.push_str("</svg>\n");
    s
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes the chart to `path` (SVG only), atomically.
pub fn write(path: &Path, curve: &Curve, current: Option<&Point>) -> Result<()> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => {}
        _ => bail!(
            "{}: only SVG plots are supported; name the file with a .svg extension",
            path.display()
        ),
    }
    bloomkit::file::write_atomic(path, render(curve, current).as_bytes())
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}
