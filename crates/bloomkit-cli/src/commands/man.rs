//! `bloomkit man`: one man page per command (clap_mangen), printed or written to a directory.

use crate::cli::Cli;
use crate::commands::write_stdout;
use crate::summary::Output;
use anyhow::{anyhow, bail, Result};
use clap::CommandFactory;
use std::path::Path;
use std::process::ExitCode;

/// The command tree with every subcommand's display name (`bloomkit-check`) set, so that
/// each page is titled and cross-referenced as its file is named.
fn built() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

pub(crate) fn run(command: Option<&str>, dir: Option<&Path>, out: &Output) -> Result<ExitCode> {
    let cmd = built();
    if let Some(dir) = dir {
        if !dir.is_dir() {
            bail!(
                "{}: no such directory (create it first: mkdir -p {})",
                dir.display(),
                dir.display()
            );
        }
        clap_mangen::generate_to(cmd.clone(), dir)
            .map_err(|e| anyhow!("writing man pages into {}: {e}", dir.display()))?;
        if out.text() {
            let count = 1 + cmd.get_subcommands().count();
            crate::shown::say!("wrote {count} man pages into {}", dir.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let page = match command {
        None => cmd,
        Some(name) => match cmd.find_subcommand(name) {
            Some(sub) => sub.clone(),
            None => bail!(
                "no command '{name}' (the commands: {})",
                cmd.get_subcommands()
                    .map(|s| s.get_name().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(page).render(&mut buf)?;
    write_stdout(&buf)
}
