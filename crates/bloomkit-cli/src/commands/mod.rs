//! One module per command; [`run`] dispatches.

mod add;
mod calc;
mod check;
mod combine;
mod convert;
mod create;
mod dedup;
mod info;
mod remove;

use crate::cli::{Cli, Command};
use crate::items::{Batch, ItemFormat, ItemReader};
use crate::progress::{stdin_size, Progress};
use crate::target::{Context, Location, Target};
use anyhow::Result;
use clap::CommandFactory;
use std::io::{Read, Write};
use std::process::ExitCode;

/// Lines per batch: large enough for Redis pipelining, small enough to keep memory flat.
pub const BATCH: usize = 4096;

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let ctx = Context {
        key: cli.key_file.as_deref().map(Context::load_key).transpose()?,
    };
    crate::redis_target::set_password_file(cli.password_file.clone());
    let quiet = cli.quiet;
    match cli.command {
        Command::Create {
            target,
            sizing,
            kind,
            scheme,
            force,
        } => create::run(&target, &sizing, kind, scheme, force, &ctx, quiet),
        Command::Add {
            target,
            items,
            item_args,
        } => add::run(&target, &items, item_args.items, &ctx, quiet),
        Command::Check {
            target,
            items,
            absent,
            count,
            item_args,
        } => check::run(&target, &items, item_args.items, absent, count, &ctx, quiet),
        Command::Dedup {
            target,
            sizing,
            kind,
            item_args,
        } => dedup::run(&target, &sizing, kind, item_args.items, &ctx, quiet),
        Command::Remove {
            target,
            items,
            item_args,
        } => remove::run(&target, &items, item_args.items, &ctx, quiet),
        Command::Info { target, json } => info::run(&target, json, &ctx),
        Command::Merge { out, inputs, force } => {
            combine::run(combine::Op::Union, &out, &inputs, force, &ctx, quiet)
        }
        Command::Intersect { out, inputs, force } => {
            combine::run(combine::Op::Intersect, &out, &inputs, force, &ctx, quiet)
        }
        Command::Calc {
            sizing,
            bits,
            hashes,
            plot,
            filter,
        } => calc::run(
            &sizing,
            bits,
            hashes,
            plot.as_deref(),
            filter.as_deref(),
            &ctx,
        ),
        Command::Export {
            target,
            format,
            output,
        } => convert::export(&target, format, &output, &ctx, quiet),
        Command::Import {
            file,
            format,
            target,
            force,
        } => convert::import(&file, format, &target, force, &ctx, quiet),
        Command::Completions { shell } => {
            let mut out = std::io::stdout().lock();
            clap_complete::generate(shell, &mut Cli::command(), "bloomkit", &mut out);
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(Cli::command()).render(&mut out)?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Streams the items of a command through `apply`, one checked batch at a time, with a
/// progress bar. `apply` gets each batch after all its lines have parsed.
pub(crate) fn for_each_batch(
    items: &[String],
    format: ItemFormat,
    quiet: bool,
    mut apply: impl FnMut(&Batch, u64) -> Result<()>,
) -> Result<u64> {
    let input: Box<dyn Read> = Box::new(std::io::stdin());
    let mut reader = ItemReader::new(items, input, format, BATCH);
    let mut progress = Progress::new(quiet, if items.is_empty() { stdin_size() } else { None });
    let mut batch = Batch::default();
    let result = (|| {
        while reader.next_batch(&mut batch)? {
            // Number of the batch's first item.
            let first = reader.count() - batch.len as u64 + 1;
            apply(&batch, first)?;
            progress.update(reader.count(), reader.bytes_read);
        }
        Ok(reader.count())
    })();
    progress.finish();
    result
}

/// Says what happened to the target when a command stopped on an error part-way.
pub(crate) fn unchanged_note(target: &Target) -> &'static str {
    match target.location() {
        Location::File(_) => "nothing was saved: the file is unchanged",
        Location::Redis(_) => "running it again is safe: adding an element twice changes nothing",
    }
}

/// Opens a target from its TARGET argument.
pub(crate) fn open(target: &str, ctx: &Context) -> Result<Target> {
    Target::open(&Location::parse(target)?, ctx)
}

/// Formats a byte count for people: `1.1 MiB`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Formats a probability compactly: `0.01`, `1.3e-5`.
pub(crate) fn prob(p: f64) -> String {
    if p == 0.0 {
        "0".into()
    } else if p >= 1e-3 {
        format!("{:.6}", p)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{p:.3e}")
    }
}
