//! `bloomkit merge` and `bloomkit intersect`.

use crate::commands::{open, plural};
use crate::summary::{report_written, Output, Summary};
use crate::target::{Context, Location, Target};
use anyhow::{anyhow, bail, Result};
use bloomkit::{AnyFilter, Filter};
use std::process::ExitCode;

/// Which combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Union,
    Intersect,
}

fn combine(op: Op, acc: &mut AnyFilter, other: &AnyFilter) -> bloomkit::Result<()> {
    match (acc, other) {
        (AnyFilter::Classic(a), AnyFilter::Classic(b)) => match op {
            Op::Union => a.union(b),
            Op::Intersect => a.intersect(b),
        },
        (AnyFilter::Blocked(a), AnyFilter::Blocked(b)) => match op {
            Op::Union => a.union(b),
            Op::Intersect => a.intersect(b),
        },
        (AnyFilter::Counting(a), AnyFilter::Counting(b)) if op == Op::Union => a.union(b),
        (AnyFilter::Bitmap(a), AnyFilter::Bitmap(b)) => match op {
            Op::Union => a.union_with(b),
            Op::Intersect => a.intersect_with(b),
        },
        (a, b) if a.kind() != b.kind() => Err(bloomkit::Error::Incompatible(
            bloomkit::Incompatibility::Kind(a.kind().to_string(), b.kind().to_string()),
        )),
        (a, _) => Err(bloomkit::Error::Unsupported {
            operation: match op {
                Op::Union => "merge",
                Op::Intersect => "intersect",
            },
            kind: a.kind().name(),
        }),
    }
}

pub(crate) fn run(
    op: Op,
    out: &str,
    inputs: &[String],
    force: bool,
    ctx: &Context,
    output: &Output,
) -> Result<ExitCode> {
    let out_location = Location::parse(out)?;
    let name = if op == Op::Union {
        "merge"
    } else {
        "intersect"
    };
    if inputs.len() < 2 {
        bail!(
            "{name} needs the output filter and at least two input filters: bloomkit {name} OUT A B... (given: OUT {out} and only {})",
            inputs.join(" ")
        );
    }
    let is_out = |i: &String| Location::parse(i).ok().as_ref() == Some(&out_location);
    let t = if inputs.iter().any(is_out) {
        // OUT is one of the inputs: combine the others into it under its lock, so that
        // nothing another process adds to it meanwhile is lost.
        let mut others = Vec::new();
        for input in inputs.iter().filter(|i| !is_out(i)) {
            others.push((input, open(input, ctx)?.snapshot()?.0));
        }
        let mut t = Target::open_for_update(&out_location, ctx)?;
        t.update_whole(|acc| {
            for (input, filter) in &others {
                combine(op, acc, filter)
                    .map_err(|e| anyhow!("cannot combine {out} with {input}: {e}"))?;
            }
            Ok(())
        })?;
        t
    } else {
        let mut first: Option<(AnyFilter, _)> = None;
        for input in inputs {
            let (filter, design) = open(input, ctx)?.snapshot()?;
            match &mut first {
                None => first = Some((filter, design)),
                Some((acc, _)) => combine(op, acc, &filter)
                    .map_err(|e| anyhow!("cannot combine {} with {input}: {e}", inputs[0]))?,
            }
        }
        let Some((filter, design)) = first else {
            bail!("give at least two input filters");
        };
        Target::replace(&out_location, filter, design, force, ctx)?
    };
    let what = if op == Op::Union {
        "union"
    } else {
        "intersection"
    };
    let summary = Summary::new(name, &out_location.display()).set("inputs", inputs.to_vec());
    report_written(&t, output, summary, |d| {
        format!(
            "wrote the {what} of {} filters to {}: about {}",
            inputs.len(),
            out_location.display(),
            plural(d.estimated_items.round() as u64, "item", "items")
        )
    })
}
