//! `bloomkit`: the command-line tool. See `docs/CLI.md` and `bloomkit --help`.

#![forbid(unsafe_code)]

mod cli;
mod commands;
mod integers;
mod items;
mod memory;
mod plot;
mod progress;
mod redis_target;
mod shown;
mod sources;
mod stdout;
mod stream;
mod summary;
mod target;
mod window;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Errors are one line and exit status 2; an unexpected panic must look the same, not like
    // a backtrace. A print to a closed standard output (`| head`) is no error: it ends quietly.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        if msg.contains("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        eprintln!(
            "bloomkit: internal error: {} (please report this)",
            shown::line(&msg)
        );
        std::process::exit(2);
    }));
    // clap prints its whole message (with "did you mean" and the usage) and exits with 2;
    // --help and --version exit with 0 (quietly too when standard output is closed).
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        // `bloomkit man | head`: the reader has what it wanted.
        Err(e) if stream::is_closed_output(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bloomkit: {}", shown::line(&format!("{e:#}")));
            ExitCode::from(2)
        }
    }
}
