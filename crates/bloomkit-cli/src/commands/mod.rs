//! One module per command; [`run`] dispatches.

mod add;
mod calc;
mod calc_bitmap;
mod check;
mod combine;
mod convert;
mod create;
mod dedup;
mod expire;
mod info;
mod man;
mod remove;
mod singles;
mod sort_unique;
pub(crate) mod window_info;

use crate::cli::{Cli, Command, ItemArgs, SaveArgs};
use crate::stream::{End, Outcome, Policy, Settled};
use crate::summary::Output;
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
    let out = Output {
        quiet: cli.quiet,
        json: cli.json,
        progress: !cli.quiet && !cli.no_progress,
    };
    let out = &out;
    match cli.command {
        Command::Create {
            filter: f,
            scheme,
            force,
            minimal_increase,
            like,
        } => match like {
            Some(source) => create::like(&f.target, &source, force, &ctx, out),
            None => create::run(&f, minimal_increase, scheme, force, &ctx, out),
        },
        Command::Add(args) => add::run(&args, &ctx, out),
        Command::Check {
            target,
            items,
            absent,
            count,
            item_args,
        } => check::run(
            check::CheckArgs {
                target: &target,
                items: &items,
                item_args: &item_args,
                absent,
                count,
            },
            &ctx,
            out,
        ),
        Command::Dedup {
            filter,
            item_args,
            save,
        } => dedup::run(&filter, &item_args, &save, &ctx, out),
        Command::Remove(args) => remove::run(&args, &ctx, out),
        Command::Expire { target, ttl } => expire::run(&target, ttl, out),
        Command::Info { target } => info::run(&target, &ctx, out),
        Command::Merge(c) => {
            combine::run(combine::Op::Union, &c.out, &c.inputs, c.force, &ctx, out)
        }
        Command::Intersect(c) => combine::run(
            combine::Op::Intersect,
            &c.out,
            &c.inputs,
            c.force,
            &ctx,
            out,
        ),
        Command::Calc {
            sizing,
            bits,
            hashes,
            plot,
            filter,
        } => calc::run(
            calc::CalcArgs {
                sizing: &sizing,
                bits,
                hashes,
                plot: plot.as_deref(),
                filter: filter.as_deref(),
            },
            &ctx,
            out,
        ),
        Command::Export {
            target,
            format,
            output,
            force,
        } => convert::export(&target, format, output.as_deref(), force, &ctx, out),
        Command::Import {
            file,
            format,
            target,
            force,
        } => convert::import(&file, format, &target, force, &ctx, out),
        Command::SortUnique(args) => sort_unique::run(&args, out),
        Command::Singles(args) => singles::run(&args, out),
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "bloomkit", &mut buf);
            write_stdout(&buf)
        }
        Command::Man { command, dir } => man::run(command.as_deref(), dir.as_deref(), out),
    }
}

/// Writes `bytes` to standard output (a closed pipe ends the command quietly, see `main`).
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<ExitCode> {
    let mut o = crate::stdout::lock();
    o.write_all(bytes)?;
    o.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `1 item`, `2 items`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Fails, naming the directory, when the directory a new file is to be written in does not
/// exist (rather than naming the temporary file the save would have written first).
pub(crate) fn check_parent(path: &std::path::Path) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => return Ok(()),
    };
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => anyhow::bail!(
            "{}: {} is not a directory",
            path.display(),
            parent.display()
        ),
        Err(_) => anyhow::bail!(
            "{}: the directory {} does not exist (create it first: mkdir -p {})",
            path.display(),
            parent.display(),
            parent.display()
        ),
    }
}

/// Says what happened to the target when a command stopped on an error part-way, after
/// `applied` items had been applied (for a file, saved; for Redis, acknowledged by a server
/// that may keep them only in memory).
pub(crate) fn partial_note(target: &Target, applied: u64, settled: Option<&Settled>) -> String {
    match (target.location(), applied) {
        (Location::File(_), 0) => "nothing was saved: the file is unchanged".into(),
        (Location::File(_), n) => format!("the {n} items before it were saved"),
        (Location::Redis(_), n) if settled.is_some() => format!(
            "the server acknowledged the {n} items before it (whether they survive a server restart depends on its persistence){}",
            if settled.is_some_and(|s| s.unsent) {
                "; nothing after them was sent"
            } else {
                ""
            }
        ),
        (Location::Redis(_), n) if target.kind() == bloomkit::Kind::Counting => format!(
            "the server acknowledged the {n} items before it (whether they survive a server restart depends on its persistence); the batch after them may be in part; a counting filter counts every change, so check before running it again"
        ),
        (Location::Redis(_), n) => format!(
            "the server acknowledged the {n} items before it (whether they survive a server restart depends on its persistence); the batch after them may be in part; running it again is safe: adding an element twice changes nothing"
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
            partial_note(target, outcome.applied, e.downcast_ref::<Settled>())
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
    } else if p < 1.0 && format!("{p:.6}") == "1.000000" {
        // Not rounded up to a certainty it is not: as many digits as it takes.
        format!("{p:?}")
    } else if p >= 1e-3 {
        format!("{:.6}", p)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{p:.3e}")
    }
}

#[cfg(test)]
mod tests {
    use super::prob;

    #[test]
    fn probabilities_show_briefly_and_never_round_to_certainty() {
        assert_eq!(prob(0.0), "0");
        assert_eq!(prob(0.01), "0.01");
        assert_eq!(prob(1.0), "1");
        assert_eq!(prob(2.5e-7), "2.500e-7");
        assert_eq!(prob(0.9999999999), "0.9999999999");
        assert_eq!(prob(0.99), "0.99");
    }
}
