//! Streaming a command's items: a reader thread cuts the input into checked batches, and the
//! command applies them a *chunk* (one or more batches) at a time and then acknowledges them
//! (prints the new lines, counts the adds).
//!
//! The reader runs on its own thread so that the command never waits for input while it holds
//! a file's lock, and so that it knows when no more input is available right now (a slow
//! `tail -F`): it then applies what it has instead of waiting for a full chunk.
//!
//! With [`Policy::signals`], SIGINT and SIGTERM end the stream after the chunk in hand has
//! been applied and acknowledged ([`End::Signal`]); a second signal exits at once (whatever
//! was acknowledged is already saved). A closed standard output ends it as [`End::ClosedOutput`].

use crate::items::{Batch, ItemReader, Sources};
use crate::progress::Progress;
use anyhow::Result;
use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};

/// Lines per batch: large enough for Redis pipelining, small enough to keep memory flat.
pub const BATCH: usize = 4096;

/// A chunk stops growing past this many bytes of lines.
const MAX_CHUNK_BYTES: usize = 32 << 20;

/// How a command wants its input cut.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// Most lines in one chunk (at least one batch is always taken whole).
    pub chunk_lines: usize,
    /// Apply the chunk as soon as no more input is available right now (for commands that
    /// print as they go), rather than only when it is full or the input ends.
    pub eager: bool,
    /// End cleanly on SIGINT/SIGTERM.
    pub signals: bool,
    /// Longest line accepted.
    pub max_line: usize,
}

/// Some batches of input, applied together.
#[derive(Default)]
pub struct Chunk {
    /// The batches, in input order.
    pub batches: Vec<Batch>,
    /// The number of the chunk's first item (1-based).
    pub first: u64,
}

impl Chunk {
    /// Items in the chunk.
    pub fn len(&self) -> usize {
        self.batches.iter().map(|b| b.len).sum()
    }

    /// The chunk's (line, element) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.batches.iter().flat_map(Batch::iter)
    }

    /// Where item `i` of the chunk came from, for messages (`line 3 of urls.txt`).
    pub fn position(&self, mut i: usize) -> String {
        for b in &self.batches {
            if i < b.len {
                return b.position(i);
            }
            i -= b.len;
        }
        format!("item {}", self.first + i as u64)
    }

    /// The encoded elements, batch by batch.
    pub fn element_batches(&self) -> impl Iterator<Item = &[Vec<u8>]> {
        self.batches.iter().map(Batch::elements)
    }
}

/// Why a stream ended.
#[derive(Debug)]
pub enum End {
    /// All input was applied.
    Input,
    /// SIGINT or SIGTERM (the signal number); everything read before it was applied.
    Signal(i32),
    /// Standard output was closed (EPIPE) while acknowledging.
    ClosedOutput,
    /// An error (a bad line, a failed write); chunks before it were applied.
    Failed(anyhow::Error),
}

/// How a stream went.
#[derive(Debug)]
pub struct Outcome {
    /// Items applied (and acknowledged).
    pub applied: u64,
    /// Why it ended.
    pub end: End,
}

enum Msg {
    Batch(Batch, u64, u64),
    Done(Result<()>),
    Signal(i32),
}

/// The context of an error that came after the chunk was applied (saved, for a file): the
/// stream counts the chunk as applied, so that the message says what was kept. It reads as
/// its text.
#[derive(Debug)]
pub struct AfterApplied(pub String);

impl std::fmt::Display for AfterApplied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An error that says itself what became of the batch it stopped, so that no note adds that
/// the batch "may be in part": a bad line ends its chunk before anything of it is sent
/// ([`Settled::Unsent`]), and a refused removal says what was removed ([`Settled::AsSaid`]).
/// It reads as the error it holds.
#[derive(Debug)]
pub struct Settled {
    /// The error.
    pub error: anyhow::Error,
    /// Whether nothing of the failing batch was sent.
    pub unsent: bool,
}

impl Settled {
    /// A bad line's error: nothing of its chunk was sent.
    pub fn unsent(error: anyhow::Error) -> anyhow::Error {
        anyhow::Error::new(Settled {
            error,
            unsent: true,
        })
    }

    /// An error whose message says what became of its batch.
    pub fn as_said(error: anyhow::Error) -> anyhow::Error {
        anyhow::Error::new(Settled {
            error,
            unsent: false,
        })
    }
}

impl std::fmt::Display for Settled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

impl std::error::Error for Settled {}

/// Whether an error is a closed pipe on output.
pub fn is_closed_output(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Streams the items of `sources` through `apply`, a chunk at a time, with a progress bar
/// when `progress` (and standard error is a terminal). A chunk is never split between two
/// calls of `apply`, and the chunk in which a bad line appears is not applied at all (the
/// error ends the stream).
pub fn run(
    sources: Sources,
    progress: bool,
    policy: Policy,
    mut apply: impl FnMut(&Chunk) -> Result<()>,
) -> Outcome {
    let (tx, rx) = sync_channel::<Msg>(4);
    if policy.signals {
        match signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
        ]) {
            Ok(mut signals) => {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let mut seen = false;
                    for s in signals.forever() {
                        if seen {
                            // A second signal: stop now (everything acknowledged is saved).
                            std::process::exit(128 + s);
                        }
                        seen = true;
                        let _ = tx.send(Msg::Signal(s));
                    }
                });
            }
            Err(e) => {
                return Outcome {
                    applied: 0,
                    end: End::Failed(anyhow::anyhow!("installing signal handlers: {e}")),
                }
            }
        }
    }
    let total_bytes = sources.total_bytes;
    std::thread::spawn(move || {
        let mut reader = ItemReader::new(sources, BATCH, policy.max_line);
        loop {
            let mut batch = Batch::default();
            let msg = match reader.next_batch(&mut batch) {
                Ok(true) => Msg::Batch(batch, reader.count(), reader.bytes_read),
                Ok(false) => Msg::Done(Ok(())),
                Err(e) => Msg::Done(Err(e)),
            };
            let last = matches!(msg, Msg::Done(_));
            if tx.send(msg).is_err() || last {
                return;
            }
        }
    });
    let mut progress = Progress::new(progress, total_bytes);
    let outcome = drive(&rx, policy, &mut progress, &mut apply);
    progress.finish();
    outcome
}

fn drive(
    rx: &Receiver<Msg>,
    policy: Policy,
    progress: &mut Progress,
    apply: &mut impl FnMut(&Chunk) -> Result<()>,
) -> Outcome {
    let mut applied = 0u64;
    let mut position = (0u64, 0u64);
    loop {
        let mut chunk = Chunk {
            batches: Vec::new(),
            first: applied + 1,
        };
        let mut bytes = 0usize;
        // What ends the stream after this chunk, if anything.
        let mut end = None;
        // Wait for input (holding nothing), then take what else is there, up to the limits.
        let mut next = rx.recv().ok();
        loop {
            match next {
                Some(Msg::Batch(b, count, read)) => {
                    bytes += b.bytes;
                    chunk.batches.push(b);
                    position = (count, read);
                }
                Some(Msg::Done(Ok(()))) | None => {
                    end = Some(End::Input);
                    break;
                }
                Some(Msg::Done(Err(e))) => {
                    // A bad line: the chunk it ends is not applied at all.
                    return Outcome {
                        applied,
                        end: End::Failed(Settled::unsent(e)),
                    };
                }
                Some(Msg::Signal(s)) => {
                    end = Some(End::Signal(s));
                    break;
                }
            }
            let full = chunk.len() >= policy.chunk_lines || bytes >= MAX_CHUNK_BYTES;
            if full {
                break;
            }
            next = if policy.eager {
                match rx.try_recv() {
                    Ok(m) => Some(m),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => None,
                }
            } else {
                rx.recv().ok()
            };
        }
        if !chunk.batches.is_empty() {
            if let Err(e) = apply(&chunk) {
                if e.downcast_ref::<AfterApplied>().is_some() {
                    applied += chunk.len() as u64;
                }
                let end = if is_closed_output(&e) {
                    End::ClosedOutput
                } else {
                    End::Failed(e)
                };
                return Outcome { applied, end };
            }
            applied += chunk.len() as u64;
            progress.update(position.0, position.1);
        }
        if let Some(end) = end {
            return Outcome { applied, end };
        }
    }
}
