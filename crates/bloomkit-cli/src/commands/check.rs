//! `bloomkit check`: grep's conventions.

use crate::cli::ItemArgs;
use crate::commands::open;
use crate::stream::{self, End, Policy, BATCH};
use crate::target::Context;
use anyhow::Result;
use std::io::Write;
use std::process::ExitCode;

pub(crate) fn run(
    target: &str,
    items: &[String],
    item_args: &ItemArgs,
    absent: bool,
    count: bool,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let t = open(target, ctx)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut present = Vec::new();
    let mut matched = 0u64;
    let policy = Policy {
        chunk_lines: BATCH,
        eager: true,
        signals: false,
        max_line: item_args.max_line_length,
    };
    let outcome = stream::run(
        items,
        item_args.format_for(t.kind()),
        quiet,
        policy,
        |chunk| {
            for batch in &chunk.batches {
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
            }
            out.flush()?;
            Ok(())
        },
    );
    match outcome.end {
        // `bloomkit check ... | head -1`: the reader has what it wanted.
        End::ClosedOutput => return Ok(ExitCode::SUCCESS),
        End::Failed(e) => return Err(e),
        End::Input | End::Signal(_) => {}
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
