//! The command line: every command, option and help text (clap derive).

use crate::items::ItemFormat;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const TARGET_HELP: &str =
    "A filter file path, or redis://HOST:PORT/NAME, or redis+cluster://HOST:PORT/NAME";

const AFTER_HELP: &str = "\
TARGETS:
  A TARGET is a file (shared safely by many processes; classic and blocked files are changed
  in place, the other kinds replaced atomically), or a filter kept in Redis: redis://HOST:PORT/NAME or redis+cluster://HOST:PORT/NAME.

ITEMS:
  Commands that take items read them from their arguments, or one per line from standard input.
  --items says how a line becomes an element: utf8 (the default), utf16le, i32, i64 or hex.

EXIT STATUS:
  0 success (for check: at least one line printed or counted), 1 check printed nothing,
  2 error (one line on standard error).

EXAMPLES:
  bloomkit create seen.bloom --capacity 1000000 --fpp 0.001
  cat urls.txt | bloomkit dedup seen.bloom > new-urls.txt
  bloomkit check seen.bloom https://example.com/ && echo 'probably seen'
  bloomkit info seen.bloom --json
  bloomkit calc --capacity 1e6 --fpp 0.01 --plot fpr.svg";

/// Create, fill, query, merge, size and convert Bloom filters, in files and in Redis.
#[derive(Debug, Parser)]
#[command(
    name = "bloomkit",
    version,
    about,
    long_about = None,
    after_help = AFTER_HELP,
    args_override_self = true
)]
pub struct Cli {
    /// No progress bar and no summary on standard error.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// A file holding the 16-byte SipHash key of a keyed filter (16 raw bytes, or 32 hex
    /// digits). Needed to create and to open filters whose elements an adversary may choose.
    #[arg(long, global = true, value_name = "FILE")]
    pub key_file: Option<PathBuf>,

    /// Redis: read the password from the first line of FILE (when the URL has none; the
    /// REDIS_PASSWORD environment variable is the other way that keeps it out of `ps`).
    #[arg(long, global = true, value_name = "FILE")]
    pub password_file: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// The kinds of filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// One bit array (the usual Bloom filter; Guava-, Go- and Redisson-compatible).
    Classic,
    /// Cache-blocked: every probe of an element in one 64-byte block (the fastest layout that
    /// costs at most 10% more memory than the most compact one).
    Blocked,
    /// 4-bit counters instead of bits, so elements can be removed.
    Counting,
    /// Grows by adding layers as it fills, keeping the FPR bound.
    Scalable,
    /// Exact: one bit per integer of --range (integer items only; no false positives).
    Bitmap,
    /// Two bits per integer of --range: absent, seen once, seen more than once.
    TwoBitMap,
}

/// How elements map to bits: bloomkit's own, or exactly another library's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemeName {
    /// bloomkit's own sizing, XXH3 hashing and probing (fastest).
    Default,
    /// Guava's BloomFilter.create (MURMUR128_MITZ_64).
    Guava,
    /// Guava's sizing with the older MURMUR128_MITZ_32 strategy.
    Guava32,
    /// Go bits-and-blooms NewWithEstimates.
    Go,
    /// Redisson RBloomFilter.tryInit (HighwayHash).
    Redisson,
}

impl SchemeName {
    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            SchemeName::Default => "default",
            SchemeName::Guava => "guava",
            SchemeName::Guava32 => "guava32",
            SchemeName::Go => "go",
            SchemeName::Redisson => "redisson",
        }
    }

    /// The library preset.
    pub fn preset(self) -> bloomkit::Preset {
        match self {
            SchemeName::Default => bloomkit::Preset::Bloomkit,
            SchemeName::Guava => bloomkit::Preset::Guava,
            SchemeName::Guava32 => bloomkit::Preset::Guava32,
            SchemeName::Go => bloomkit::Preset::Go,
            SchemeName::Redisson => bloomkit::Preset::Redisson,
        }
    }
}

/// Foreign serialisation formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Guava BloomFilter.writeTo / readFrom, MURMUR128_MITZ_64.
    Guava,
    /// Guava BloomFilter.writeTo / readFrom, MURMUR128_MITZ_32.
    Guava32,
    /// Go bits-and-blooms WriteTo / ReadFrom (binary).
    Go,
    /// Go bits-and-blooms MarshalJSON / UnmarshalJSON.
    GoJson,
}

/// Options shared by the commands that read items.
#[derive(Debug, Clone, Args)]
pub struct ItemArgs {
    /// How each item becomes an element: utf8 = the line's bytes; utf16le = Guava's
    /// unencodedChars funnel; i32/i64 = a decimal number as Guava's integer/long funnel;
    /// hex = raw bytes written in hexadecimal [default: utf8; i64 for bitmap and two-bit-map
    /// filters].
    #[arg(long = "items", id = "item_format", value_enum, value_name = "FORMAT")]
    pub items: Option<ItemFormat>,
    /// The longest line (or argument) accepted, in bytes; a longer one is an error that
    /// names it.
    #[arg(long, value_parser = parse_line_length, default_value = "1048576", value_name = "BYTES")]
    pub max_line_length: usize,
}

impl ItemArgs {
    /// The item format for a filter of `kind`: --items, or the kind's default (integers for
    /// the bitmap kinds, text otherwise).
    pub fn format_for(&self, kind: bloomkit::Kind) -> ItemFormat {
        self.items.unwrap_or(match kind {
            bloomkit::Kind::Bitmap | bloomkit::Kind::TwoBitMap => ItemFormat::I64,
            _ => ItemFormat::Utf8,
        })
    }
}

/// The filter of the commands that can create it (`create`, `dedup`): where, how large,
/// and of which kind.
#[derive(Debug, Clone, Args)]
pub struct Creation {
    #[arg(help = TARGET_HELP)]
    pub target: String,
    #[command(flatten)]
    pub sizing: Sizing,
    /// The kind of filter [default: classic for files, blocked for Redis].
    #[arg(long, value_enum)]
    pub kind: Option<Kind>,
}

/// The arguments of the commands that apply items to a filter (`add`, `remove`); each sets
/// its own help for `items`.
#[derive(Debug, Clone, Args)]
pub struct Update {
    #[arg(help = TARGET_HELP)]
    pub target: String,
    /// Items; when none are given, one per line from standard input.
    #[arg(allow_negative_numbers = true)]
    pub items: Vec<String>,
    #[command(flatten)]
    pub item_args: ItemArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

/// The arguments of the commands that combine filters into one (`merge`, `intersect`).
#[derive(Debug, Clone, Args)]
pub struct Combine {
    /// The output filter (may be one of the inputs).
    pub out: String,
    /// The filters to combine (at least two).
    #[arg(required = true, num_args = 2..)]
    pub inputs: Vec<String>,
    /// Replace OUT if it exists and is not one of the inputs.
    #[arg(long)]
    pub force: bool,
}

/// The arguments of the commands that read integers (`sort-unique`, `singles`).
#[derive(Debug, Clone, Args)]
pub struct Integers {
    /// Files to read ('-' for standard input); standard input when none are given.
    pub files: Vec<PathBuf>,
    /// Skip lines that are not integers (counted on standard error) instead of failing.
    #[arg(long)]
    pub skip_invalid: bool,
    /// The integers expected, START..END (END excluded) or START..=END: one outside is an
    /// error naming its line. With --capacity, the bitmaps may then be dense (1 bit per
    /// integer of the range) instead of roaring.
    #[arg(long, value_parser = parse_range, value_name = "START..END", allow_hyphen_values = true)]
    pub range: Option<bloomkit::bitmap::KeyRange>,
    /// How many distinct integers to expect (with --range): dense bitmaps when they are at
    /// least one in 16 of the range.
    #[arg(short = 'n', long, value_parser = parse_count, value_name = "N", requires = "range")]
    pub capacity: Option<u64>,
}

/// Options of the commands that change a filter.
#[derive(Debug, Clone, Args)]
pub struct SaveArgs {
    /// For a file saved whole (scalable, counting): save at least every N lines (classic and
    /// blocked files are changed in place, batch by batch). A line is saved before it is
    /// acknowledged (dedup prints it, add counts it), so a signal or crash loses nothing
    /// acknowledged.
    #[arg(long, value_parser = parse_save_every, default_value = "1000000", value_name = "N")]
    pub save_every: usize,
}

/// Sizing options for creating a filter.
#[derive(Debug, Clone, Args)]
pub struct Sizing {
    /// Number of elements the filter is designed for (1000000, 1e6 and 1_000_000 all work).
    #[arg(short = 'n', long, value_parser = parse_count, value_name = "N")]
    pub capacity: Option<u64>,
    /// Target false-positive probability, in (0, 1), e.g. 0.01 or 1%.
    #[arg(short = 'p', long, value_parser = parse_fpp, value_name = "P")]
    pub fpp: Option<f64>,
    /// The integers a bitmap holds: START..END (END excluded) or START..=END, e.g.
    /// 0..1000000000 or 0..4e9. Creates a bitmap (the default kind with --range); for calc,
    /// also sizes the bitmap of that range.
    #[arg(long, value_parser = parse_range, value_name = "START..END", allow_hyphen_values = true)]
    pub range: Option<bloomkit::bitmap::KeyRange>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create an empty filter.
    #[command(after_help = "\
EXAMPLES:
  bloomkit create seen.bloom --capacity 1000000 --fpp 0.001
  bloomkit create users.bloom -n 1e6 -p 1% --kind counting
  bloomkit create guava.bloom -n 1000 -p 0.01 --scheme guava   # byte-identical to Guava's
  bloomkit create ids.bloom --kind bitmap --range 0..1000000000  # exact, integer items
  bloomkit create redis://127.0.0.1:6379/seen -n 1e7 -p 0.001")]
    Create {
        #[command(flatten)]
        filter: Creation,
        /// How elements map to bits: bloomkit's own or exactly another library's.
        #[arg(long, value_enum, default_value_t = SchemeName::Default)]
        scheme: SchemeName,
        /// Replace an existing filter.
        #[arg(long)]
        force: bool,
    },

    /// Add items (arguments, or one per line from standard input).
    #[command(after_help = "\
Reports on standard error how many items were new. A classic or blocked file is changed in
place, batch by batch; a scalable or counting file is saved every --save-every lines and at
the end. SIGINT and SIGTERM stop the command after saving what it has read (exit status 130
or 143). If a line cannot be parsed, the command fails naming the line and saying how many
items before it were saved.

EXAMPLES:
  bloomkit add seen.bloom alice bob
  seq 1 1000000 | bloomkit add ids.bloom --items i64
  bloomkit add redis://127.0.0.1:6379/seen < urls.txt")]
    #[command(mut_arg("items", |a| a.help("Items to add; when none are given, one per line from standard input")))]
    Add(Update),

    /// Print the items that are probably present (grep-like exit status).
    #[command(after_help = "\
EXIT STATUS: 0 if at least one line was printed (or counted), 1 if none, 2 on error.

EXAMPLES:
  bloomkit check seen.bloom alice carol      # prints the ones probably present
  bloomkit check -v seen.bloom < emails.txt  # prints those definitely absent
  bloomkit check -c seen.bloom < emails.txt  # prints how many are probably present")]
    Check {
        #[arg(help = TARGET_HELP)]
        target: String,
        /// Items to test; when none are given, one per line from standard input.
        #[arg(allow_negative_numbers = true)]
        items: Vec<String>,
        /// Print the items that are definitely absent instead.
        #[arg(short = 'v', long)]
        absent: bool,
        /// Print only the number of matching items.
        #[arg(short = 'c', long)]
        count: bool,
        #[command(flatten)]
        item_args: ItemArgs,
    },

    /// Copy standard input to standard output, dropping lines seen before.
    #[command(after_help = "\
Each line that the filter has probably seen is dropped; each new line is added and printed,
in that order: a file is saved before the lines it made new are printed, and lines are
printed as they arrive. SIGINT and SIGTERM (exit status 130, 143) and a closed standard output
(exit status 0) end the command quietly with every printed line saved. Many dedup processes
can share one file: each line is printed as new by exactly one of them. Creates the filter
when it does not exist and --capacity and --fpp are given.

EXAMPLES:
  tail -F access.log | cut -d' ' -f7 | bloomkit dedup paths.bloom -n 1e7 -p 1e-4
  bloomkit dedup redis://127.0.0.1:6379/crawl < frontier.txt > to-fetch.txt")]
    #[command(mut_arg("kind", |a| a.help("Kind used when the filter is created [default: classic for files, blocked for Redis]")))]
    Dedup {
        #[command(flatten)]
        filter: Creation,
        #[command(flatten)]
        item_args: ItemArgs,
        #[command(flatten)]
        save: SaveArgs,
    },

    /// Remove items from a counting filter.
    #[command(after_help = "\
Only counting filters can remove. Remove only items you know were added: removing a false
positive would make other items test absent. An item that is certainly absent is an error,
and the lines of its --save-every chunk are not applied.

EXAMPLES:
  bloomkit create sessions.bloom -n 1e5 -p 0.01 --kind counting
  bloomkit add sessions.bloom s-1 s-2
  bloomkit remove sessions.bloom s-1")]
    #[command(mut_arg("items", |a| a.help("Items to remove; when none are given, one per line from standard input")))]
    Remove(Update),

    /// Describe a filter: kind, size, design and current estimates.
    #[command(after_help = "\
EXAMPLES:
  bloomkit info seen.bloom
  bloomkit info seen.bloom --json | jq .estimated_fpp")]
    Info {
        #[arg(help = TARGET_HELP)]
        target: String,
        /// Print a JSON object with the fields kind, scheme, bits, hashes, bytes, capacity,
        /// fpp, estimated_items, fill_ratio, estimated_fpp (and layers for scalable filters).
        #[arg(long)]
        json: bool,
    },

    /// Write the union of filters A, B, ... to OUT.
    #[command(after_help = "\
The filters must be of the same kind, size, hashing and scheme.

EXAMPLES:
  bloomkit merge all.bloom monday.bloom tuesday.bloom")]
    Merge(Combine),

    /// Write the intersection of filters A, B, ... to OUT.
    #[command(after_help = "\
The filters must be classic filters of the same size, hashing and scheme. The result may
answer 'probably present' for a few more elements than a filter built from the common
elements would.

EXAMPLES:
  bloomkit intersect both.bloom monday.bloom tuesday.bloom")]
    Intersect(Combine),

    /// Compute filter parameters from any sufficient subset of n, p, m, k.
    #[command(after_help = "\
Give --capacity and --fpp (parameters for each kind and scheme), or --bits with --capacity
or --fpp (and optionally --hashes).

EXAMPLES:
  bloomkit calc --capacity 1e6 --fpp 0.01
  bloomkit calc --bits 8388608 --capacity 1e6          # expected FPR
  bloomkit calc --bits 8388608 --fpp 0.001            # capacity
  bloomkit calc -n 1e8 -p 0.001 --range 0..1e9         # a bitmap is smaller here
  bloomkit calc -n 1e6 -p 0.01 --plot fpr.svg --filter seen.bloom")]
    Calc {
        #[command(flatten)]
        sizing: Sizing,
        /// Number of bits, m (e.g. 8388608, 8Mi, 1MiB = 8388608 bits).
        #[arg(short = 'm', long, value_parser = parse_bits, value_name = "M")]
        bits: Option<u64>,
        /// Number of hash functions, k.
        #[arg(short = 'k', long, value_name = "K")]
        hashes: Option<u32>,
        /// Draw the expected FPR against the number of inserted elements (SVG).
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
        /// Take the parameters from this filter and mark its current point on the plot.
        #[arg(long, value_name = "TARGET")]
        filter: Option<String>,
    },

    /// Write a filter in Guava's or Go's format.
    #[command(after_help = "\
The filter must have been created with the matching --scheme (guava, guava32 or go).

EXAMPLES:
  bloomkit create users.bloom -n 1000 -p 0.01 --scheme guava
  bloomkit add users.bloom alice bob
  bloomkit export users.bloom --format guava -o users.guava   # BloomFilter.readFrom reads it")]
    Export {
        #[arg(help = TARGET_HELP)]
        target: String,
        /// The output format.
        #[arg(long, value_enum)]
        format: Format,
        /// Output file ('-' for standard output).
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },

    /// Read a filter written by Guava or Go into a new TARGET.
    #[command(after_help = "\
EXAMPLES:
  bloomkit import users.guava --format guava users.bloom
  bloomkit check users.bloom alice
  bloomkit import filter.json --format go-json go.bloom --force")]
    Import {
        /// The file to read ('-' for standard input).
        file: PathBuf,
        /// Its format.
        #[arg(long, value_enum)]
        format: Format,
        #[arg(help = TARGET_HELP)]
        target: String,
        /// Replace an existing filter.
        #[arg(long)]
        force: bool,
    },

    /// Print each distinct integer once, ascending (sort -n | uniq), in memory.
    #[command(after_help = "\
Reads decimal integers, one per line, from the FILEs or standard input, and prints each
distinct one once in ascending numeric order: what `sort -n | uniq` prints for integers,
in one pass and in memory. The integers are kept in roaring bitmaps, so memory follows the
number of distinct integers (at most about 2 bytes each while sparse, 1 bit per integer of
their span when dense), not the input's length. Any integer from -9223372036854775808 to
18446744073709551615 is accepted; negative ones print first. Surrounding spaces are ignored.
A line that is not such an integer is an error naming its line number, unless
--skip-invalid. With --range only integers of that range are accepted, and with --capacity
the bitmaps are dense (one bit per integer of the range, fixed memory) when the integers are
at least one in 16 of it.

EXAMPLES:
  bloomkit sort-unique ids.txt > sorted-ids.txt
  seq 10 -1 1 | bloomkit sort-unique
  bloomkit sort-unique --range 0..4e9 -n 1e9 < ids.txt | wc -l")]
    SortUnique(Integers),

    /// Print the integers that occur exactly once, ascending (sort -n | uniq -u), in memory.
    #[command(after_help = "\
Reads decimal integers like sort-unique and prints those that occur exactly once, in
ascending numeric order: what `sort -n | uniq -u` prints for integers. Each integer has a
two-bit cell (absent, once, more than once) kept in roaring bitmaps, so memory follows the
number of distinct integers.

EXAMPLES:
  bloomkit singles calls-today.txt > called-once.txt")]
    Singles(Integers),

    /// Print a shell completion script.
    #[command(after_help = "\
EXAMPLES:
  bloomkit completions bash > /etc/bash_completion.d/bloomkit
  bloomkit completions zsh > \"${fpath[1]}/_bloomkit\"")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },

    /// Print the man page (roff).
    #[command(after_help = "\
EXAMPLES:
  bloomkit man > bloomkit.1 && man ./bloomkit.1")]
    Man,
}

fn strip_underscores(s: &str) -> String {
    s.trim().chars().filter(|&c| c != '_').collect()
}

/// Parses a count: `1000000`, `1_000_000` or `1e6` (must be a whole number).
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = strip_underscores(s);
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < u64::MAX as f64 => {
            Ok(x as u64)
        }
        _ => Err(format!(
            "'{s}' is not a whole number of elements (e.g. 1000000 or 1e6)"
        )),
    }
}

/// Parses `--range`: `START..END` or `START..=END`.
pub fn parse_range(s: &str) -> Result<bloomkit::bitmap::KeyRange, String> {
    s.parse().map_err(|e: bloomkit::Error| e.to_string())
}

/// Parses `--max-line-length`: 1 byte to 1 GiB.
pub fn parse_line_length(s: &str) -> Result<usize, String> {
    match parse_count(s) {
        Ok(n) if (1..=1 << 30).contains(&n) => Ok(n as usize),
        _ => Err(format!(
            "'{s}' is not a line length between 1 and 1073741824 bytes"
        )),
    }
}

/// Parses `--save-every`: at least 1 line.
pub fn parse_save_every(s: &str) -> Result<usize, String> {
    match parse_count(s) {
        Ok(n) if n >= 1 => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        _ => Err(format!("'{s}' is not a number of lines (at least 1)")),
    }
}

/// Parses a probability: `0.01`, `1e-3` or `1%`; must be in (0, 1).
pub fn parse_fpp(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (t, scale) = match t.strip_suffix('%') {
        Some(t) => (t, 100.0),
        None => (t, 1.0),
    };
    match t.trim().parse::<f64>() {
        Ok(x) if x / scale > 0.0 && x / scale < 1.0 => Ok(x / scale),
        _ => Err(format!(
            "'{s}' is not a probability between 0 and 1 (e.g. 0.01 or 1%)"
        )),
    }
}

/// Parses a bit count, with optional binary suffixes: `Ki`, `Mi`, `Gi` (bits) or `KiB`,
/// `MiB`, `GiB` (bytes, times 8).
pub fn parse_bits(s: &str) -> Result<u64, String> {
    let t = strip_underscores(s);
    let units: [(&str, u64); 6] = [
        ("KiB", 8 << 10),
        ("MiB", 8 << 20),
        ("GiB", 8 << 30),
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
    ];
    for (suffix, mult) in units {
        if let Some(num) = t.strip_suffix(suffix) {
            return parse_count(num)?
                .checked_mul(mult)
                .ok_or_else(|| format!("'{s}' is too many bits"));
        }
    }
    parse_count(&t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn number_parsers() {
        assert_eq!(parse_count("1e6"), Ok(1_000_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("-3").is_err());
        assert_eq!(parse_fpp("1%"), Ok(0.01));
        assert_eq!(parse_fpp("0.001"), Ok(0.001));
        assert!(parse_fpp("1").is_err());
        assert!(parse_fpp("0").is_err());
        assert!(parse_fpp("nan").is_err());
        assert_eq!(parse_bits("1MiB"), Ok(8 << 20));
        assert_eq!(parse_bits("8Mi"), Ok(8 << 20));
        assert_eq!(parse_bits("100"), Ok(100));
    }
}
