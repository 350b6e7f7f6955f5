//! `bloomkit check`: grep's conventions (`-v`, `-c`, `-q`, exit status 0/1/2).

use crate::cli::ItemArgs;
use crate::commands::open;
use crate::items::Sources;
use crate::stream::{self, End, Policy, BATCH};
use crate::summary::{check_health, Output, Summary};
use crate::target::Context;
use anyhow::{anyhow, Result};
use std::io::Write;
use std::process::ExitCode;

/// Why `apply` ended the stream early under `-q`: the answer is known.
#[derive(Debug)]
struct Found;

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("found")
    }
}

impl std::error::Error for Found {}

/// The options of `check`.
pub(crate) struct CheckArgs<'a> {
    pub target: &'a str,
    pub items: &'a [String],
    pub item_args: &'a ItemArgs,
    pub absent: bool,
    pub count: bool,
}

pub(crate) fn run(a: CheckArgs, ctx: &Context, out: &Output) -> Result<ExitCode> {
    let mut sources = Sources::new(a.items, a.item_args, out)?;
    let t = open(a.target, ctx)?;
    sources.set_format(a.item_args.format_for(t.kind()));
    let end = sources.terminator();
    let mut stdout = std::io::BufWriter::new(crate::stdout::lock());
    let mut present = Vec::new();
    let (mut matched, mut total) = (0u64, 0u64);
    // Items are printed unless -c, -q or --json asks for something else.
    let print_items = !a.count && !out.quiet && !out.json;
    let policy = Policy {
        chunk_lines: BATCH,
        eager: true,
        signals: false,
        max_line: a.item_args.max_line_length,
    };
    let outcome = stream::run(sources, out.progress, policy, |chunk| {
        for batch in &chunk.batches {
            t.contains_batch(batch.elements(), &mut present)?;
            for ((line, _), &p) in batch.iter().zip(&present) {
                total += 1;
                if p != a.absent {
                    matched += 1;
                    if out.quiet {
                        // grep -q: the first match decides.
                        return Err(anyhow!(Found));
                    }
                    if print_items {
                        stdout.write_all(line)?;
                        stdout.write_all(end)?;
                    }
                }
            }
        }
        stdout.flush()?;
        Ok(())
    });
    match outcome.end {
        // `bloomkit check ... | head -1`: the reader has what it wanted.
        End::ClosedOutput => return Ok(ExitCode::SUCCESS),
        End::Failed(e) if e.is::<Found>() => return Ok(ExitCode::SUCCESS),
        End::Failed(e) => return Err(e),
        End::Input | End::Signal(_) => {}
    }
    if a.count && !out.quiet && !out.json {
        writeln!(stdout, "{matched}")?;
    }
    stdout.flush()?;
    drop(stdout);
    if out.json && !out.quiet {
        let d = check_health(&t, out)?;
        let (present, absent) = if a.absent {
            (total - matched, matched)
        } else {
            (matched, total - matched)
        };
        Summary::new("check", &t.location().display())
            .set("items", total)
            .set("present", present)
            .set("absent", absent)
            .set("matched", matched)
            .filter(&d)
            .print(out, false)?;
    }
    Ok(if matched > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
