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
  Commands that take items read them from their arguments ('-' = standard input), from
  -f FILE (repeatable), or else one per line from standard input; -0 for NUL-separated input.
  --items says how a line becomes an element: utf8 (the default), utf16le, i32, i64 or hex.

OUTPUT:
  -q prints nothing (as grep -q: the exit status tells); --json prints a JSON summary;
  --no-progress turns off the progress bar (never shown when standard error is not a terminal).

EXIT STATUS:
  0 success (for check: at least one item matched), 1 check matched nothing,
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
    /// Print nothing: no items, no summary, no warnings; the exit status tells (as grep -q).
    /// Errors are still printed.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// No progress bar (there is none anyway when standard error is not a terminal).
    #[arg(long, global = true)]
    pub no_progress: bool,

    /// Print the command's summary as one JSON object: on standard output, or on standard
    /// error for dedup, sort-unique and singles, whose standard output is their lines (see
    /// docs/CLI.md).
    #[arg(long, global = true)]
    pub json: bool,

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

/// The kinds `--kind` creates: the library's [`bloomkit::Kind`]s, named by
/// [`bloomkit::Kind::name`] (the expiring kinds are made with `--window`).
const CREATED_KINDS: [bloomkit::Kind; 7] = {
    use bloomkit::Kind::*;
    [
        Classic, Blocked, Counting, Scalable, Bitmap, TwoBitMap, DLeft,
    ]
};

/// The help of a kind `--kind` creates.
fn kind_help(kind: bloomkit::Kind) -> &'static str {
    use bloomkit::Kind::*;
    match kind {
        Classic => "One bit array (the usual Bloom filter; Guava-, Go- and Redisson-compatible)",
        Blocked => "Cache-blocked, the default: every probe of an element in one 64-byte block, so one memory access (one page of a file) per element; the fastest, for about 10% more bits",
        Counting => "4-bit counters instead of bits, so elements can be removed",
        Scalable => "Grows by adding layers as it fills, keeping the FPR bound",
        Bitmap => "Exact: one bit per integer of --range (integer items only; no false positives)",
        TwoBitMap => "Two bits per integer of --range: absent, seen once, seen more than once",
        DLeft => "d-left counting filter: fingerprints with 2-bit counters in 4 hash tables; removal and counts in about half the memory of --kind counting",
        _ => "",
    }
}

/// Parses `--kind`: one of [`CREATED_KINDS`], by its library name.
fn kind_parser() -> impl clap::builder::TypedValueParser<Value = bloomkit::Kind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        CREATED_KINDS.map(|kind| PossibleValue::new(kind.name()).help(kind_help(kind))),
    )
    .try_map(|name| name.parse::<bloomkit::Kind>())
}

/// How elements map to bits: bloomkit's own, or exactly another library's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemeName {
    /// bloomkit's own sizing, XXH3 hashing and probing (fastest).
    Default,
    /// bloomkit's own sizing and probing from one 64-bit XXH3 hash per element: a classic
    /// filter of the default's size, cheaper to hash for long keys.
    Bloomkit64,
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
            SchemeName::Bloomkit64 => "bloomkit64",
            SchemeName::Guava => "guava",
            SchemeName::Guava32 => "guava32",
            SchemeName::Go => "go",
            SchemeName::Redisson => "redisson",
        }
    }

    /// Whether this is one of bloomkit's own schemes (which may hash with a key), not another
    /// library's.
    pub fn is_bloomkits(self) -> bool {
        matches!(self, SchemeName::Default | SchemeName::Bloomkit64)
    }

    /// The library preset.
    pub fn preset(self) -> bloomkit::Preset {
        match self {
            SchemeName::Default => bloomkit::Preset::Bloomkit,
            SchemeName::Bloomkit64 => bloomkit::Preset::Bloomkit64,
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

/// Where a command's items come from, the same for every command that reads items or
/// integers (see `crate::sources`).
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    /// Read items from FILE, one per line ('-' for standard input); may be repeated. The
    /// command's arguments are read first.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Items end with a NUL byte instead of a newline (find -print0, xargs -0, fd -0); printed
    /// items end with NUL too.
    #[arg(short = '0', long = "null")]
    pub null: bool,
    /// Skip empty items (empty lines) instead of using the empty element (or, for integers,
    /// failing on them).
    #[arg(long)]
    pub skip_empty: bool,
}

/// Options shared by the commands that read items.
#[derive(Debug, Clone, Args)]
pub struct ItemArgs {
    #[command(flatten)]
    pub sources: SourceArgs,
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
    /// The kind of filter [default: blocked; classic with any other --scheme].
    #[arg(long, value_parser = kind_parser(), value_name = "KIND")]
    pub kind: Option<bloomkit::Kind>,
    /// An expiring filter that remembers only the last WINDOW: a number of insertions
    /// (1000000, 1e6: a count window) or a duration (90s, 15m, 12h, 30d, 2w: a time window,
    /// where --capacity is the expected insertions per window). --fpp defaults to 1%.
    #[arg(long, value_parser = crate::window::parse_window, value_name = "WINDOW", conflicts_with = "kind")]
    pub window: Option<crate::window::Window>,
    /// Time windows: how many generations the window is cut into (the element is forgotten
    /// between one window and one window plus one generation after it was last added)
    /// [default: 30, or fewer when the capacity is small].
    #[arg(long, value_parser = crate::window::parse_generations, value_name = "G")]
    pub generations: Option<u32>,
}

/// The arguments of the commands that apply items to a filter (`add`, `remove`); each sets
/// its own help for `items`.
#[derive(Debug, Clone, Args)]
pub struct Update {
    #[arg(help = TARGET_HELP)]
    pub target: String,
    /// Items ('-' reads standard input); when none are given (and no -f), one per line from
    /// standard input.
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
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<String>,
    /// Replace OUT if it exists and is not one of the inputs.
    #[arg(long)]
    pub force: bool,
}

/// The arguments of the commands that read integers (`sort-unique`, `singles`).
#[derive(Debug, Clone, Args)]
pub struct Integers {
    /// Files to read, as with -f ('-' for standard input); standard input when none are given
    /// (and no -f).
    #[arg(value_name = "FILE")]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub sources: SourceArgs,
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
    /// For a file saved whole (scalable, counting, d-left, bitmap, expiring): save at least
    /// every N lines (classic and blocked files are changed in place, batch by batch). A line
    /// is saved before it is acknowledged (dedup prints it, add counts it), so a signal or
    /// crash loses nothing acknowledged.
    #[arg(long, value_parser = parse_save_every, default_value = "1000000", value_name = "N")]
    pub save_every: usize,
}

/// Sizing options for creating a filter.
#[derive(Debug, Clone, Args)]
pub struct Sizing {
    /// Number of elements the filter is designed for (1000000, 1e6 and 1_000_000 all work).
    #[arg(short = 'n', long, value_parser = parse_capacity, value_name = "N", allow_hyphen_values = true)]
    pub capacity: Option<u64>,
    /// Target false-positive probability, in (0, 1), e.g. 0.01 or 1%.
    #[arg(short = 'p', long, value_parser = parse_fpp, value_name = "P", allow_hyphen_values = true)]
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
  bloomkit create today.bloom --like seen.bloom    # empty, made as seen.bloom: merges with it
  bloomkit create users.bloom -n 1e6 -p 1% --kind counting
  bloomkit create sessions.bloom -n 1e6 -p 1% --kind dleft          # removal in half the memory
  bloomkit create words.bloom -n 1e5 -p 1% --kind counting --minimal-increase
  bloomkit create guava.bloom -n 1000 -p 0.01 --scheme guava   # byte-identical to Guava's
  bloomkit create ids.bloom --kind bitmap --range 0..1000000000  # exact, integer items
  bloomkit create month.bloom --window 30d --capacity 1e6       # forgets after 30 days
  bloomkit create recent.bloom --window 1e6                     # the last million insertions
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
        /// Counting filters: insert by minimal increase (only an item's smallest counters go
        /// up), for more accurate counts on skewed data; the filter then refuses removals.
        #[arg(long)]
        minimal_increase: bool,
        /// Make an empty filter file as the filter file FILE was made: the same kind, size,
        /// hash functions, scheme and options, so that the two can be merged or intersected
        /// (also for files of an older default scheme that --scheme no longer creates).
        #[arg(
            long,
            value_name = "FILE",
            conflicts_with_all = ["capacity", "fpp", "range", "kind", "window", "generations", "scheme", "minimal_increase"]
        )]
        like: Option<String>,
    },

    /// Add items (arguments, or one per line from standard input).
    #[command(after_help = "\
Reports on standard error how many items were new (with --json, a JSON summary on standard
output), and warns when the filter passes its capacity. A classic or blocked file is changed in
place, batch by batch; a scalable or counting file is saved every --save-every lines and at
the end. SIGINT and SIGTERM stop the command after saving what it has read (exit status 130
or 143). If a line cannot be parsed, the command fails naming the line and saying how many
items before it were saved.

EXAMPLES:
  bloomkit create seen.bloom -n 1e6 -p 0.001
  bloomkit add seen.bloom alice bob
  bloomkit add seen.bloom -f urls.txt -f more-urls.txt
  find . -name '*.jpg' -print0 | bloomkit add seen.bloom -0
  bloomkit create ids.bloom -n 1e6 -p 0.001
  seq 1 1000000 | bloomkit add ids.bloom --items i64 --json
  bloomkit create redis://127.0.0.1:6379/seen -n 1e7 -p 0.001
  bloomkit add redis://127.0.0.1:6379/seen < urls.txt")]
    #[command(mut_arg("items", |a| a.help("Items to add; when none are given, one per line from standard input")))]
    Add(Update),

    /// Print the items that are probably present (grep-like exit status).
    #[command(after_help = "\
EXIT STATUS: 0 if at least one item matched, 1 if none, 2 on error. With -q nothing is
printed and the command stops at the first match, as grep -q does.

EXAMPLES:
  bloomkit create seen.bloom -n 1e6 -p 0.001 && bloomkit add seen.bloom alice bob
  bloomkit check seen.bloom alice carol       # prints the ones probably present
  bloomkit check -v seen.bloom < emails.txt   # prints those definitely absent
  bloomkit check -c seen.bloom -f emails.txt  # prints how many are probably present
  bloomkit check -q seen.bloom alice && echo 'alice was probably seen'
  bloomkit check --json seen.bloom < emails.txt")]
    Check {
        #[arg(help = TARGET_HELP)]
        target: String,
        /// Items to test ('-' reads standard input); when none are given (and no -f), one per
        /// line from standard input.
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

With --json the summary goes to standard error as one JSON object (standard output carries
the lines).

EXAMPLES:
  cut -d' ' -f7 access.log | bloomkit dedup paths.bloom -n 1e7 -p 1e-4
  bloomkit dedup paths.bloom -f access-paths.txt > new-paths.txt
  bloomkit dedup crawl.bloom --window 7d -n 1e6 < urls.txt   # again once unseen for 7 days
  bloomkit dedup redis://127.0.0.1:6379/crawl -n 1e7 -p 1e-4 < frontier.txt > to-fetch.txt")]
    #[command(mut_arg("kind", |a| a.help("Kind used when the filter is created [default: blocked]")))]
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
Only counting (but not minimal-increase), d-left and bitmap filters can remove. Remove only
items you know were added: removing a false positive would make other items test absent. An item that is certainly absent is an error,
and the lines of its --save-every chunk are not applied.

EXAMPLES:
  bloomkit create sessions.bloom -n 1e5 -p 0.01 --kind counting
  bloomkit add sessions.bloom s-1 s-2
  bloomkit remove sessions.bloom s-1")]
    #[command(mut_arg("items", |a| a.help("Items to remove; when none are given, one per line from standard input")))]
    Remove(Update),

    /// Give a Redis filter a time to live: Redis deletes all of its keys after DURATION.
    #[command(after_help = "\
The metadata and every key of the filter get the time to live at once (one script on a
standalone server), whatever the filter's kind; keys the filter creates later inherit it.
Running it again sets a new time to live.

EXAMPLES:
  bloomkit create redis://127.0.0.1:6379/crawl -n 1e6 -p 1%
  bloomkit expire redis://127.0.0.1:6379/crawl 90d")]
    Expire {
        #[arg(help = TARGET_HELP)]
        target: String,
        /// How long until Redis deletes the filter: 90s, 15m, 12h, 30d, 2w.
        #[arg(value_parser = crate::window::parse_duration, value_name = "DURATION")]
        ttl: std::time::Duration,
    },

    /// Describe a filter: kind, size, design and current estimates.
    #[command(after_help = "\
With --json: a JSON object with the fields kind, scheme, bits, hashes, bytes, capacity, fpp,
estimated_items, fill_ratio, estimated_fpp, over_capacity and saturated (and layout for
blocked, d-left, minimal-increase counting, Redis counting and bitmap filters, range for
bitmaps, layers for scalable ones, window for expiring ones).

EXAMPLES:
  bloomkit create seen.bloom -n 1e6 -p 0.001
  bloomkit info seen.bloom
  bloomkit info seen.bloom --json | jq .estimated_fpp")]
    Info {
        #[arg(help = TARGET_HELP)]
        target: String,
    },

    /// Write the union of filters A, B, ... to OUT.
    #[command(after_help = "\
The filters must be of one kind, classic, blocked, counting or bitmap, and of the same size,
hashing and scheme (bitmaps: of the same range; the union of bitmaps is exact).

EXAMPLES:
  bloomkit create monday.bloom -n 1e6 -p 0.01
  bloomkit create tuesday.bloom -n 1e6 -p 0.01
  bloomkit merge all.bloom monday.bloom tuesday.bloom --json")]
    Merge(Combine),

    /// Write the intersection of filters A, B, ... to OUT.
    #[command(after_help = "\
The filters must be of one kind, classic, blocked or bitmap, and of the same size, hashing
and scheme (bitmaps: of the same range). The intersection of bitmaps is exact; that of Bloom
filters may answer 'probably present' for a few more elements than a filter built from the
common elements would.

EXAMPLES:
  bloomkit create monday.bloom -n 1e6 -p 0.01
  bloomkit create tuesday.bloom -n 1e6 -p 0.01
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
  bloomkit calc --json -n 1e6 -p 0.01 | jq '.rows[0].bytes'
  bloomkit create seen.bloom -n 1e6 -p 0.01
  bloomkit calc --plot fpr.svg --filter seen.bloom     # the file's own curve and point")]
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
  bloomkit export users.bloom --format guava -o users.guava   # BloomFilter.readFrom reads it
  bloomkit export users.bloom --format guava | base64")]
    Export {
        #[arg(help = TARGET_HELP)]
        target: String,
        /// The output format.
        #[arg(long, value_enum)]
        format: Format,
        /// Output file ('-' or none: standard output). An existing regular file is replaced
        /// only with --force.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Replace an existing output file.
        #[arg(long)]
        force: bool,
    },

    /// Read a filter written by Guava or Go into a new TARGET.
    #[command(after_help = "\
Without --format the format is recognised from the file's shape (Guava's and Go's binary
forms, Go's JSON); a bloomkit file needs no import.

EXAMPLES:
  bloomkit create users.bloom -n 1000 -p 0.01 --scheme guava
  bloomkit add users.bloom alice bob
  bloomkit export users.bloom --format guava -o users.guava
  bloomkit import users.guava copy.bloom
  bloomkit check copy.bloom alice
  bloomkit import users.guava --format guava copy.bloom --force")]
    Import {
        /// The file to read ('-' for standard input).
        file: PathBuf,
        /// Its format (recognised from the content when not given).
        #[arg(long, value_enum)]
        format: Option<Format>,
        #[arg(help = TARGET_HELP)]
        target: String,
        /// Replace an existing filter.
        #[arg(long)]
        force: bool,
    },

    /// Print each distinct integer once, ascending (sort -n | uniq), in memory.
    #[command(after_help = "\
Reads decimal integers, one per line, from the FILEs, then from each -f FILE (-0: NUL-separated;
'-': standard input), or else standard input, and prints each
distinct one once in ascending numeric order: what `sort -n | uniq` prints for integers,
in one pass and in memory. The integers are kept in roaring bitmaps, so memory follows the
number of distinct integers (at most about 2 bytes each while sparse, 1 bit per integer of
their span when dense), not the input's length. Any integer from -9223372036854775808 to
18446744073709551615 is accepted; negative ones print first. Surrounding spaces are ignored.
A line that is not such an integer is an error naming its line number, unless
--skip-invalid. With --range only integers of that range are accepted, and with --capacity
the bitmaps are dense (one bit per integer of the range, fixed memory) when the integers are
at least one in 16 of it. With --json the summary is one JSON object on standard error.

EXAMPLES:
  bloomkit sort-unique ids.txt > sorted-ids.txt
  seq 10 -1 1 | bloomkit sort-unique
  bloomkit sort-unique -f ids.txt -f more-ids.txt --json 2> summary.json
  bloomkit sort-unique --range 0..1e6 -n 1e5 < ids.txt | wc -l")]
    SortUnique(Integers),

    /// Print the integers that occur exactly once, ascending (sort -n | uniq -u), in memory.
    #[command(after_help = "\
Reads decimal integers like sort-unique and prints those that occur exactly once, in
ascending numeric order: what `sort -n | uniq -u` prints for integers. Each integer has a
two-bit cell (absent, once, more than once) kept in roaring bitmaps, so memory follows the
number of distinct integers.

EXAMPLES:
  bloomkit singles calls-today.txt > called-once.txt
  find . -name '*.ids' -print0 | xargs -0 cat | bloomkit singles --skip-empty")]
    Singles(Integers),

    /// Print a shell completion script.
    #[command(after_help = "\
EXAMPLES:
  mkdir -p ~/.local/share/bash-completion/completions
  bloomkit completions bash > ~/.local/share/bash-completion/completions/bloomkit
  mkdir -p ~/.zfunc && bloomkit completions zsh > ~/.zfunc/_bloomkit")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },

    /// Print a man page (roff), or write one page per command into a directory.
    #[command(after_help = "\
EXAMPLES:
  bloomkit man > bloomkit.1
  bloomkit man check > bloomkit-check.1
  mkdir -p ~/.local/share/man/man1
  bloomkit man --dir ~/.local/share/man/man1   # bloomkit.1, bloomkit-create.1, ...")]
    Man {
        /// The command whose page to print (none: the page of bloomkit itself).
        command: Option<String>,
        /// Write every page (bloomkit.1 and bloomkit-COMMAND.1) into DIR instead.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        dir: Option<PathBuf>,
    },
}

fn strip_underscores(s: &str) -> String {
    s.trim().chars().filter(|&c| c != '_').collect()
}

/// Parses a count: `1000000`, `1_000_000` or `1e6` (must be a whole number), saying what is
/// wrong in the user's terms: negative, fractional, too large or not a number.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = strip_underscores(s);
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_nan() => Err(format!("'{s}' is not a number (e.g. 1000000 or 1e6)")),
        Ok(x) if x < 0.0 => Err(format!("'{s}' is negative; give a count of at least 1")),
        Ok(x) if x >= u64::MAX as f64 => Err(format!(
            "'{s}' is too large: at most {} (about 1.8e19)",
            u64::MAX
        )),
        Ok(x) if x.fract() != 0.0 => {
            Err(format!("'{s}' is not a whole number (e.g. 1000000 or 1e6)"))
        }
        Ok(x) => Ok(x as u64),
        Err(_) => Err(format!("'{s}' is not a number (e.g. 1000000 or 1e6)")),
    }
}

/// Parses `--capacity`: a count of at least 1 element.
pub fn parse_capacity(s: &str) -> Result<u64, String> {
    match parse_count(s)? {
        0 => Err(format!(
            "'{s}': a filter for 0 elements holds nothing; give a capacity of at least 1"
        )),
        n => Ok(n),
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
    match parse_count(&t)? {
        0 => Err(format!("'{s}': a filter needs at least 1 bit")),
        m => Ok(m),
    }
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
        assert!(parse_count("-3").unwrap_err().contains("negative"));
        assert!(parse_count("1e99").unwrap_err().contains("too large"));
        assert!(parse_count("ten").unwrap_err().contains("not a number"));
        assert!(parse_capacity("0").unwrap_err().contains("at least 1"));
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
