//! Measured false-positive rates against theory, for every probing scheme.
//!
//! Grid: n ∈ {1e3, 1e5, 1e6} × p ∈ {0.1, 0.01, 0.001}, and small filters at low rates for
//! bloomkit's default (`small_filters_at_low_rates`), each scheme with its own library's
//! sizing and hash (bloomkit, Guava MITZ_64 and MITZ_32, Go, Redisson), and bloomkit's sizing
//! with its one-64-bit-hash scheme (`Preset::Bloomkit64`, `enhanced-double-64`), held to the same bounds as its
//! default.
//!
//! ## The statistical bound
//! With `T` queries of elements never inserted, the number of false positives `X` has mean
//! `T·q`, where `q` is the filter's expected FPR `(1 - e^(-kn/m))^k`, and variance
//! `T·q(1-q) + T²·Var(q̂)`: the binomial noise of the queries plus the spread of the filter's
//! own fill ratio (the number of set bits varies from filter to filter; by the delta method
//! `sd(q̂) ≈ k·f^(k-1)·sd(f)` with `sd(f)² ≈ e^(-kn/m)(1 - (1 + kn/m)e^(-kn/m)) / m` for fill
//! `f`). The test requires `|X - T·q| ≤ 5σ`: a correct filter fails this with probability below
//! 1e-6 per cell, while a biased scheme (one that clusters probes) shows up as a
//! many-sigma excess. `T = 2000/p` gives about 2000 expected false positives per cell.
//!
//! Separately, bloomkit's own sizing must promise `q ≤ p` exactly. The foreign libraries'
//! sizings, reproduced exactly, stay within 3% of `p`: Go rounds `k` up, which puts its design
//! FPR 2.6% above target at `p = 0.1`.
//!
//! ## Redisson's scheme misses its own target
//! Redisson's alternating double hashing produces correlated probes: probe 3 is twice probe 1
//! and probe 4 is probe 1 plus probe 2 (modulo carries), so two elements that share one
//! position are likely to share others. Its measured FPR is 1.2–1.9× the theoretical value
//! (see the table this test prints). bloomkit reproduces it bit for bit because that is what
//! compatibility requires, and the test states the excess instead of hiding it: the measured
//! FPR must lie between the theory and twice the theory (±5σ), and at `p = 0.001` the excess
//! must be visible, so that a silent change of the scheme is caught.

use bloomkit::{BloomFilter, Preset, Scheme, Spec};

const NS: [u64; 3] = [1_000, 100_000, 1_000_000];
const PS: [f64; 3] = [0.1, 0.01, 0.001];

struct Cell {
    n: u64,
    p: f64,
    expected: f64,
    measured: f64,
    sigmas: f64,
}

fn measure(preset: Preset, n: u64, p: f64) -> Cell {
    measure_spec(Spec::preset(preset, n, p).unwrap(), n, p)
}

fn measure_spec(spec: Spec, n: u64, p: f64) -> Cell {
    let (m, k) = (spec.bits() as f64, f64::from(spec.hashes()));
    let mut f = BloomFilter::from_spec(spec).unwrap();
    for i in 0..n {
        f.insert(&format!("member:{i}"));
    }
    for i in 0..n {
        assert!(f.contains(&format!("member:{i}")), "false negative");
    }
    let trials = (2000.0 / p) as u64;
    let hits = (0..trials)
        .filter(|i| f.contains(&format!("stranger:{i}")))
        .count() as f64;

    let expected = f.spec().params().expected_fpp(n);
    let t = trials as f64;
    let load = k * n as f64 / m;
    let empty = (-load).exp();
    let fill = 1.0 - empty;
    let var_fill = (empty * (1.0 - (1.0 + load) * empty) / m).max(0.0);
    let sd_q = k * fill.powf(k - 1.0) * var_fill.sqrt();
    let sigma = (t * expected * (1.0 - expected) + t * t * sd_q * sd_q).sqrt();
    Cell {
        n,
        p,
        expected,
        measured: hits / t,
        sigmas: (hits - t * expected) / sigma,
    }
}

/// `preset`'s sizing, hash and scheme.
fn check_preset(preset: Preset) {
    let mut report = String::new();
    let mut failures = Vec::new();
    for n in NS {
        for p in PS {
            let c = measure(preset, n, p);
            report += &format!(
                "{preset:?} n={} p={}: expected {:.5} measured {:.5} ({:+.2} sigma)\n",
                c.n, c.p, c.expected, c.measured, c.sigmas
            );
            if preset == Preset::Redisson {
                // Between theory and 2x theory (see the module docs).
                let sigma = (c.measured - c.expected) / c.sigmas;
                if c.sigmas < -5.0 || c.measured > 2.0 * c.expected + 5.0 * sigma {
                    failures.push(format!("n={n} p={p}: outside [q, 2q] +- 5 sigma"));
                }
                if p == 0.001 && n >= 100_000 && c.measured < 1.2 * c.expected {
                    failures.push(format!("n={n} p={p}: the documented excess vanished"));
                }
            } else if c.sigmas.abs() > 5.0 {
                failures.push(format!("n={n} p={p}: {:+.2} sigma", c.sigmas));
            }
            let allowed = if matches!(preset, Preset::Bloomkit | Preset::Bloomkit64) {
                p
            } else {
                p * 1.03
            };
            if c.expected > allowed {
                failures.push(format!("n={n} p={p}: sizing promises {}", c.expected));
            }
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{failures:?}\n{report}");
}

/// One `#[test]` per preset, each running `check_preset` on it.
macro_rules! preset_tests {
    ($($name:ident: $preset:expr;)*) => {$(
        #[test]
        fn $name() {
            check_preset($preset);
        }
    )*};
}

preset_tests! {
    bloomkit_default_scheme: Preset::Bloomkit;
    bloomkit_enhanced_double_64: Preset::Bloomkit64;
    guava_mitz64: Preset::Guava;
    guava_mitz32: Preset::Guava32;
    go_scheme: Preset::Go;
    redisson_scheme: Preset::Redisson;
}

/// Small filters at low rates, where `m·k` is small: the default scheme holds the same 5σ bound
/// there, and `enhanced-double` (the default before it) shows the excess of about `2/(m·k)`
/// that made it miss its target (see `probe/mod.rs`): at n = 20, p = 10⁻⁴ (`m` = 384,
/// `k` = 13) it measured 5.6× the theory.
#[test]
fn small_filters_at_low_rates() {
    let mut report = String::new();
    let mut failures = Vec::new();
    for (n, p) in [(20, 1e-3), (20, 1e-4), (200, 1e-4)] {
        let spec = Spec::for_capacity(n, p).unwrap();
        assert_eq!(spec.scheme(), Scheme::MixedDouble);
        let new = measure_spec(spec.clone(), n, p);
        let old = measure_spec(spec.with_scheme(Scheme::EnhancedDouble), n, p);
        report += &format!(
            "n={n} p={p}: expected {:.3e}, mixed-double {:.3e} ({:+.2} sigma), enhanced-double {:.3e} ({:+.2} sigma)\n",
            new.expected, new.measured, new.sigmas, old.measured, old.sigmas
        );
        if new.sigmas.abs() > 5.0 {
            failures.push(format!(
                "n={n} p={p}: mixed-double {:+.2} sigma",
                new.sigmas
            ));
        }
        if (n, p) == (20, 1e-4) && old.measured < 2.0 * old.expected {
            failures.push(format!(
                "n={n} p={p}: the documented excess of enhanced-double vanished"
            ));
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{failures:?}\n{report}");
}
