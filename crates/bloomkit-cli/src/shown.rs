//! Names and messages made safe for a terminal. File paths, Redis names and items come from
//! the user (or from whoever named a file the user was given) and may hold a newline, an escape
//! sequence or another control or invisible character; printed raw, they could forge output
//! lines or drive the terminal. Everything the CLI prints for a person goes through here.

use std::borrow::Cow;
use std::path::Path;

/// Whether `c` prints as itself (quotes and backslashes do; control, format and other
/// invisible characters do not).
pub fn prints_as_itself(c: char) -> bool {
    matches!(c, '"' | '\'' | '\\') || c.escape_debug().count() == 1
}

/// A name for messages: as it is when every character prints as itself, else quoted with
/// Rust's escapes (`"ev\nil\u{1b}[31m"`).
pub fn name(name: &str) -> Cow<'_, str> {
    if name.chars().all(prints_as_itself) {
        name.into()
    } else {
        format!("{name:?}").into()
    }
}

/// A file path for messages, shown as [`name`] shows a name (bytes that are not UTF-8 as
/// U+FFFD).
pub fn path(path: &Path) -> String {
    name(&path.to_string_lossy()).into_owned()
}

/// A one-line message for standard error with every character that does not print as itself
/// escaped where it stands (`\n`, `\u{1b}`): the last guard for a path or item that reached a
/// message unquoted (from the library's errors, for example).
pub fn line(message: &str) -> Cow<'_, str> {
    if message.chars().all(prints_as_itself) {
        return message.into();
    }
    let mut out = String::with_capacity(message.len() + 8);
    for c in message.chars() {
        if prints_as_itself(c) {
            out.push(c);
        } else {
            out.extend(c.escape_debug());
        }
    }
    out.into()
}

/// A word for a command line in a hint (`create it with: bloomkit create WORD ...`), written so
/// that a POSIX shell reads it back as exactly `word`: as it is when it holds only characters no
/// shell treats specially; in single quotes when it holds spaces, quotes or other printable
/// characters; in bash's `$'...'` (also zsh's and ksh's) with `\n`, `\xHH` and `\uHHHH`
/// escapes when it holds a character that does not print as itself, so the hint can be pasted
/// and never drives the terminal.
pub fn arg(word: &str) -> Cow<'_, str> {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:@%+,=-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.into();
    }
    if word.chars().all(prints_as_itself) {
        return format!("'{}'", word.replace('\'', r"'\''")).into();
    }
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\'' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if prints_as_itself(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!(r"\x{:02x}", c as u32)),
            c if (c as u32) <= 0xffff => out.push_str(&format!(r"\u{:04x}", c as u32)),
            c => out.push_str(&format!(r"\U{:08x}", c as u32)),
        }
    }
    out.push('\'');
    out.into()
}

/// A path as a word for a command line in a hint (see [`arg`]).
pub fn path_arg(path: &Path) -> String {
    arg(&path.to_string_lossy()).into_owned()
}

/// `eprintln!` for a one-line message to a person, through [`line`].
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::shown::line(&format!($($arg)*)))
    };
}
pub(crate) use say;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_left_alone_and_the_rest_is_escaped() {
        for plain in ["a b", "x\"y", "caf\u{e9}", "a\\b", "it's", "日本"] {
            assert_eq!(name(plain), plain);
            assert_eq!(line(plain), plain);
        }
        for quoted in ["\t", "a\rb", "\u{202e}evil", "\u{7f}", "a\nb", "\u{1b}[31m"] {
            assert_eq!(name(quoted), format!("{quoted:?}"));
            let shown = line(quoted);
            assert!(shown.chars().all(prints_as_itself), "{shown}");
        }
        assert_eq!(line("x: a\nb\u{1b}[2J"), r"x: a\nb\u{1b}[2J");
        assert_eq!(path(Path::new("/tmp/a\nb")), r#""/tmp/a\nb""#);
        assert_eq!(arg("seen.bloom"), "seen.bloom");
        assert_eq!(arg("redis://h:6379/x"), "redis://h:6379/x");
        assert_eq!(arg("my seen.bloom"), "'my seen.bloom'");
        assert_eq!(arg("it's"), r"'it'\''s'");
        assert_eq!(arg(""), "''");
        assert_eq!(arg("a\nb\u{1b}[2J'\\\u{202e}"), r"$'a\nb\x1b[2J\'\\\u202e'");
        assert!(arg("\u{7}").chars().all(prints_as_itself));
    }
}
