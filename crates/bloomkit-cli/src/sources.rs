//! Where a command's items come from, the same for every command that reads items (`add`,
//! `check`, `dedup`, `remove`, `sort-unique`, `singles`, and any command added later): the
//! arguments, in order, where `-` stands for standard input (for `sort-unique` and `singles`,
//! whose arguments are files, each file); then each `-f FILE` (`-` again for standard input);
//! and when there are neither, standard input. Items are lines, or NUL-terminated with `-0`;
//! empty items are elements unless `--skip-empty` is given.

use crate::cli::{ItemArgs, SourceArgs};
use crate::items::ItemFormat;
use crate::summary::Output;
use anyhow::{bail, Result};
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

/// One source of items.
pub enum Source {
    /// Command-line arguments; `first` is the 1-based position of the first one among the
    /// item arguments (for messages).
    Args {
        /// Position of the first argument.
        first: u64,
        /// The arguments.
        items: Vec<String>,
    },
    /// A stream: standard input (`path` is `None`) or an `-f` file.
    Stream {
        /// The `-f` file as given, for messages.
        path: Option<Arc<str>>,
        /// The open stream.
        reader: Box<dyn Read + Send>,
    },
}

/// Every source of a command's items, in order, and how to cut them.
pub struct Sources {
    /// The sources, read one after the other.
    pub list: Vec<Source>,
    /// How items are encoded.
    pub format: ItemFormat,
    /// What ends an item: `\n` (a `\r` before it is dropped too) or NUL (`-0`).
    pub separator: u8,
    /// Whether empty items are skipped.
    pub skip_empty: bool,
    /// The total size of the input when every stream is a regular file (for the progress
    /// bar's ETA).
    pub total_bytes: Option<u64>,
}

/// The size of a regular file behind an open handle, or `None` (a pipe, a terminal).
fn regular_size(meta: std::io::Result<std::fs::Metadata>) -> Option<u64> {
    meta.ok().filter(|m| m.is_file()).map(|m| m.len())
}

impl Sources {
    /// The sources of a command with item arguments `items` and the options `args`. Every
    /// `-f` file is opened now, so a missing one is an error before anything is applied. An
    /// item argument that names an existing file gets a note (unless `-q`): it is used as an
    /// item, and `-f` reads a file.
    pub fn new(items: &[String], args: &ItemArgs, out: &Output) -> Result<Sources> {
        let mut sources = Self::open(items, &[], &args.sources, out)?;
        sources.format = args.items.unwrap_or(ItemFormat::Utf8);
        Ok(sources)
    }

    /// The sources of a command whose arguments are files (`sort-unique`, `singles`): each of
    /// `files` (`-` for standard input), then each `-f FILE`; standard input when there are
    /// none.
    pub fn files(files: &[PathBuf], args: &SourceArgs, out: &Output) -> Result<Sources> {
        Self::open(&[], files, args, out)
    }

    /// Item arguments `items`, then the files `files` (given as arguments), then the `-f`
    /// files of `args`.
    fn open(
        items: &[String],
        files: &[PathBuf],
        args: &SourceArgs,
        out: &Output,
    ) -> Result<Sources> {
        if !out.quiet {
            if let Some(file) = items
                .iter()
                .take(16)
                .find(|i| i.as_str() != "-" && std::path::Path::new(i).is_file())
            {
                crate::shown::say!(
                    "bloomkit: note: the argument '{file}' is used as an item; to read items from that file, use -f {file}"
                );
            }
        }
        let mut list = Vec::new();
        let mut total = Some(0u64);
        let mut stdin_used = false;
        let mut stdin = |list: &mut Vec<Source>, total: &mut Option<u64>| {
            if !stdin_used {
                stdin_used = true;
                let size = regular_size(std::fs::metadata("/dev/stdin"));
                *total = total.zip(size).map(|(a, b)| a + b);
                list.push(Source::Stream {
                    path: None,
                    reader: Box::new(std::io::stdin()),
                });
            }
        };
        // Item arguments may be negative numbers (`--items i64 -5`), so clap hands `-0` over as
        // an item: it is the -0 flag (negative zero is no item anyone types).
        let null = args.null || items.iter().any(|i| i == "-0");
        let mut pending: Vec<String> = Vec::new();
        let mut first = 1;
        for (i, item) in items.iter().enumerate() {
            if item == "-0" {
                continue;
            }
            if item == "-" {
                if !pending.is_empty() {
                    list.push(Source::Args {
                        first,
                        items: std::mem::take(&mut pending),
                    });
                }
                stdin(&mut list, &mut total);
                first = i as u64 + 2;
            } else {
                pending.push(item.clone());
            }
        }
        if !pending.is_empty() {
            list.push(Source::Args {
                first,
                items: pending,
            });
        }
        let given = files
            .iter()
            .map(|p| (p, ""))
            .chain(args.files.iter().map(|p| (p, " (given with -f)")));
        for (path, how) in given {
            if path.as_os_str() == "-" {
                stdin(&mut list, &mut total);
                continue;
            }
            let shown = path.display().to_string();
            let file = match std::fs::File::open(path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    bail!("{shown}: no such file{how}")
                }
                Err(e) => bail!("{shown}: cannot read it: {e}"),
            };
            let meta = file.metadata();
            if meta.as_ref().is_ok_and(|m| m.is_dir()) {
                bail!("{shown}: it is a directory, not a file of items{how}");
            }
            let size = regular_size(meta);
            total = total.zip(size).map(|(a, b)| a + b);
            list.push(Source::Stream {
                path: Some(shown.into()),
                reader: Box::new(file),
            });
        }
        if list.is_empty() {
            stdin(&mut list, &mut total);
        }
        Ok(Sources {
            list,
            format: ItemFormat::Utf8,
            separator: if null { 0 } else { b'\n' },
            skip_empty: args.skip_empty,
            total_bytes: total,
        })
    }

    /// Lines of one stream (for tests).
    #[cfg(test)]
    pub fn reader(reader: impl Read + Send + 'static, format: ItemFormat) -> Sources {
        Sources {
            list: vec![Source::Stream {
                path: None,
                reader: Box::new(reader),
            }],
            format,
            separator: b'\n',
            skip_empty: false,
            total_bytes: None,
        }
    }

    /// Reads the items in `format` (the target's default when `--items` is not given: see
    /// `ItemArgs::format_for`).
    pub fn set_format(&mut self, format: ItemFormat) {
        self.format = format;
    }

    /// What ends an item printed back (`check`, `dedup`): the input's separator.
    pub fn terminator(&self) -> &'static [u8] {
        if self.separator == 0 {
            b"\0"
        } else {
            b"\n"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::{Batch, ItemReader};

    fn read_all(sources: Sources) -> Vec<(String, String)> {
        let mut r = ItemReader::new(sources, 100, 100);
        let mut b = Batch::default();
        let mut out = Vec::new();
        while r.next_batch(&mut b).unwrap() {
            for (i, (line, _)) in b.iter().enumerate() {
                out.push((String::from_utf8_lossy(line).into_owned(), b.position(i)));
            }
        }
        out
    }

    #[test]
    fn nul_separated_and_skipped_empty_items_keep_their_numbers() {
        let mut s = Sources::reader(b"a\0\0b\nc\0".as_slice(), ItemFormat::Utf8);
        s.separator = 0;
        s.skip_empty = true;
        assert_eq!(
            read_all(s),
            vec![
                ("a".into(), "item 1".into()),
                ("b\nc".into(), "item 3".into())
            ]
        );
    }

    #[test]
    fn arguments_then_streams_each_numbered_on_their_own() {
        let s = Sources {
            list: vec![
                Source::Args {
                    first: 1,
                    items: vec!["x".into()],
                },
                Source::Stream {
                    path: Some("f.txt".into()),
                    reader: Box::new(b"y\r\nz\n".as_slice()),
                },
                Source::Args {
                    first: 3,
                    items: vec!["w".into()],
                },
            ],
            format: ItemFormat::Utf8,
            separator: b'\n',
            skip_empty: false,
            total_bytes: None,
        };
        assert_eq!(
            read_all(s),
            vec![
                ("x".into(), "argument 1".into()),
                ("y".into(), "line 1 of f.txt".into()),
                ("z".into(), "line 2 of f.txt".into()),
                ("w".into(), "argument 3".into()),
            ]
        );
    }
}
