//! `bloomkit check`: grep's conventions.

use crate::commands::{for_each_batch, open};
use crate::items::ItemFormat;
use crate::target::Context;
use anyhow::Result;
use std::io::Write;
use std::process::ExitCode;

pub(crate) fn run(
    target: &str,
    items: &[String],
    format: ItemFormat,
    absent: bool,
    count: bool,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let t = open(target, ctx)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut present = Vec::new();
    let mut matched = 0u64;
    let result = for_each_batch(items, format, quiet, |batch, _| {
        t.contains_batch(batch.elements(), &mut present)?;
        for ((line, _), &p) in batch.iter().zip(&present) {
            if p != absent {
                matched += 1;
                if !count {
                    out.write_all(line)?;
                    out.write_all(b"\n")?;
                }
            }
        }
        out.flush()?;
        Ok(())
    });
    if let Err(e) = result {
        // `bloomkit check ... | head -1`: the reader has what it wanted.
        if is_broken_pipe(&e) {
            return Ok(ExitCode::SUCCESS);
        }
        return Err(e);
    }
    if count {
        writeln!(out, "{matched}")?;
    }
    out.flush()?;
    Ok(if matched > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Whether the error is a write to a closed pipe.
pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
