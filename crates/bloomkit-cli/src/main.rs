//! `bloomkit`: the command-line tool. See `docs/CLI.md` and `bloomkit --help`.

#![forbid(unsafe_code)]

mod cli;
mod commands;
mod integers;
mod items;
mod plot;
mod progress;
mod redis_target;
mod stream;
mod target;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Errors are one line and exit status 2; an unexpected panic must look the same, not like
    // a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        eprintln!("bloomkit: internal error: {msg} (please report this)");
        std::process::exit(2);
    }));
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // clap's message is several lines; keep the first, without its "error: ".
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid command line");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("bloomkit: {first} (see: bloomkit --help)");
            return ExitCode::from(2);
        }
    };
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("bloomkit: {e:#}");
            ExitCode::from(2)
        }
    }
}
