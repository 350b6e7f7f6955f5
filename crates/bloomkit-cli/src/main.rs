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
use std::fmt::Write as _;
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
    let cli = cli::Cli::try_parse().unwrap_or_else(|e| usage_error(e));
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

/// Ends the process for a command line clap refused (or for `--help`, `--version`): as clap
/// does, unless its message holds a character that does not print as itself, which only what
/// the user typed can bring (an argument with an escape sequence or a carriage return, echoed
/// in "unexpected argument '...'"); then the message is written without colours, each line
/// through [`shown::line`], so it cannot drive the terminal. Exit status 2, as clap's.
fn usage_error(e: clap::Error) -> ! {
    let bare = without_colours(&e.render().ansi().to_string());
    if bare.lines().all(|l| l.chars().all(shown::prints_as_itself)) {
        e.exit()
    }
    let mut out = String::new();
    for l in bare.lines() {
        let _ = writeln!(out, "{}", shown::line(l));
    }
    eprint!("{out}");
    std::process::exit(2)
}

/// `styled` without its colour sequences (`ESC [ digits and semicolons m`, all clap writes);
/// every other character, an escape sequence of the user's included, stays for
/// [`shown::line`] to escape.
fn without_colours(styled: &str) -> String {
    let mut out = String::with_capacity(styled.len());
    let mut rest = styled;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let params = after.len()
            - after
                .trim_start_matches(|c: char| c.is_ascii_digit() || c == ';')
                .len();
        if after[params..].starts_with('m') {
            rest = &after[params + 1..];
        } else {
            out.push('\x1b');
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    out
}
