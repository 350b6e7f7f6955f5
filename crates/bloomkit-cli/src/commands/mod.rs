//! One module per command; [`run`] dispatches.

mod add;
mod calc;
mod calc_bitmap;
mod check;
mod combine;
mod convert;
mod create;
mod dedup;
mod info;
mod remove;
mod singles;
mod sort_unique;

use crate::cli::{Cli, Command, ItemArgs, SaveArgs};
use crate::stream::{End, Outcome, Policy};
use crate::target::{Context, Location, Target};
use anyhow::Result;
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let ctx = Context {
        key: cli.key_file.as_deref().map(Context::load_key).transpose()?,
    };
    crate::redis_target::set_password_file(cli.password_file.clone());
    let quiet = cli.quiet;
    match cli.command {
        Command::Create {
            filter: f,
            scheme,
            force,
        } => create::run(&f.target, &f.sizing, f.kind, scheme, force, &ctx, quiet),
        Command::Add(args) => add::run(&args, &ctx, quiet),
        Command::Check {
            target,
            items,
            absent,
            count,
            item_args,
        } => check::run(&target, &items, &item_args, absent, count, &ctx, quiet),
        Command::Dedup {
            filter: f,
            item_args,
            save,
        } => dedup::run(&f.target, &f.sizing, f.kind, &item_args, &save, &ctx, quiet),
        Command::Remove(args) => remove::run(&args, &ctx, quiet),
        Command::Info { target, json } => info::run(&target, json, &ctx),
        Command::Merge(c) => {
            combine::run(combine::Op::Union, &c.out, &c.inputs, c.force, &ctx, quiet)
        }
        Command::Intersect(c) => combine::run(
            combine::Op::Intersect,
            &c.out,
            &c.inputs,
            c.force,
            &ctx,
            quiet,
        ),
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
        Command::SortUnique(args) => sort_unique::run(&args, quiet),
        Command::Singles(args) => singles::run(&args, quiet),
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

/// Says what happened to the target when a command stopped on an error part-way, after
/// `applied` items had been applied (and, for a file, saved).
pub(crate) fn partial_note(target: &Target, applied: u64) -> String {
    match (target.location(), applied) {
        (Location::File(_), 0) => "nothing was saved: the file is unchanged".into(),
        (Location::File(_), n) => format!("the {n} items before it were saved"),
        (Location::Redis(_), n) => format!(
            "the {n} items before it were applied, the batch after them may be in part; running it again is safe: adding an element twice changes nothing"
        ),
    }
}

/// How a stream that changed a filter ended, for the exit status: `Ok` with the status for
/// a clean end or a signal or closed output (everything acknowledged is saved), or the
/// error with what was kept.
pub(crate) fn finish(target: &Target, outcome: &mut Outcome) -> Result<Option<ExitCode>> {
    match std::mem::replace(&mut outcome.end, End::Input) {
        End::Input => Ok(None),
        End::Signal(s) => {
            outcome.end = End::Signal(s);
            Ok(Some(ExitCode::from((128 + s).clamp(0, 255) as u8)))
        }
        End::ClosedOutput => {
            // `dedup ... | head -1`: the reader has what it wanted (as check does).
            outcome.end = End::ClosedOutput;
            Ok(Some(ExitCode::SUCCESS))
        }
        End::Failed(e) => Err(anyhow::anyhow!(
            "{e:#} ({})",
            partial_note(target, outcome.applied)
        )),
    }
}

/// The stream policy of a command that changes `target`.
pub(crate) fn write_policy(
    target: &Target,
    items: &ItemArgs,
    save: &SaveArgs,
    eager: bool,
) -> Policy {
    Policy {
        chunk_lines: target.chunk_lines(save.save_every),
        eager,
        signals: true,
        max_line: items.max_line_length,
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
