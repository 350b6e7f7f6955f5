//! Memory-mapped filters: answers equal to loaded filters, in-place inserts from several real
//! processes at once that lose no bit, the dirty mark and sealing, read-only mappings that
//! refuse to write.
//!
//! The writer processes are this test binary run again with `--ignored --exact
//! mapped_writer_process` and the file, the key range and the exit mode in the environment.

use bloomkit::codec::native;
use bloomkit::mmap::MappedFilter;
use bloomkit::{
    file, AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, Error, Filter,
};
use std::path::Path;
use std::process::{Command, Stdio};

/// Keys are `(tag, i)` pairs; each process adds its own range of `i`.
fn keys(from: u64, to: u64) -> Vec<(u64, u64)> {
    (from..to).map(|i| (7, i)).collect()
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

/// A writer process (run by the tests below, not on its own): maps the file shared, marks it
/// dirty and adds its keys in batches of 64, without any lock, so that it writes at the same
/// time as the other writer. With `BLOOMKIT_SEAL=0` it exits without sealing, as a writer that
/// died would.
#[test]
#[ignore = "a child process of the tests in this file"]
fn mapped_writer_process() {
    let path = env("BLOOMKIT_FILE");
    let from: u64 = env("BLOOMKIT_FROM").parse().unwrap();
    let to: u64 = env("BLOOMKIT_TO").parse().unwrap();
    let f = MappedFilter::open_shared(Path::new(&path), &[]).unwrap();
    f.mark_dirty().unwrap();
    // Start together: wait for the parent's signal file.
    let go = Path::new(&path).with_extension("go");
    while !go.exists() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    for batch in keys(from, to).chunks(64) {
        let mut new = vec![false; batch.len()];
        f.insert_batch_into(batch, &mut new).unwrap();
    }
    if env("BLOOMKIT_SEAL") == "1" {
        f.seal().unwrap();
    }
}

/// Runs writers for the key ranges at once and waits for all of them.
fn run_writers(path: &Path, ranges: &[(u64, u64)], seal: bool) {
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ranges
        .iter()
        .map(|(from, to)| {
            Command::new(&exe)
                .args(["--ignored", "--exact", "mapped_writer_process", "--quiet"])
                .env("BLOOMKIT_FILE", path)
                .env("BLOOMKIT_FROM", from.to_string())
                .env("BLOOMKIT_TO", to.to_string())
                .env("BLOOMKIT_SEAL", if seal { "1" } else { "0" })
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    std::fs::write(path.with_extension("go"), b"").unwrap();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    std::fs::remove_file(path.with_extension("go")).unwrap();
}

/// Two processes add 150,000 keys each into one mapped file at the same time (many share words
/// and blocks): afterwards the file holds exactly the bits of a filter built in memory from all
/// 300,000 keys, for a classic and a blocked filter. Then it seals and loads.
#[test]
fn two_processes_writing_one_mapped_file_lose_no_bit() {
    let dir = tempfile::tempdir().unwrap();
    let filters: [AnyFilter; 2] = [
        BloomFilter::new(300_000, 0.01).unwrap().into(),
        BlockedBloomFilter::new(300_000, 0.01).unwrap().into(),
    ];
    for empty in filters {
        let path = dir.path().join("shared.bloom");
        file::save(&path, &empty, None).unwrap();
        run_writers(&path, &[(0, 150_000), (150_000, 300_000)], false);
        let mut expected = empty.clone();
        for k in keys(0, 300_000) {
            Filter::insert_key(&mut expected, &k).unwrap();
        }
        let shared = MappedFilter::open_shared(&path, &[]).unwrap();
        assert!(shared.is_dirty());
        assert_eq!(shared.to_filter().unwrap(), expected, "{}", shared.kind());
        shared.seal().unwrap();
        drop(shared);
        assert_eq!(file::load(&path, &[]).unwrap().filter, expected);
    }
}

/// Marking a file dirty makes its checksum stale (detected by every checked reader); sealing
/// makes the file byte for byte what a fresh save of the same filter writes.
#[test]
fn dirty_and_seal_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.bloom");
    file::save(&path, &BloomFilter::new(1000, 0.01).unwrap().into(), None).unwrap();
    let f = MappedFilter::open_shared(&path, &[]).unwrap();
    assert!(!f.is_dirty());
    f.verify().unwrap();
    f.mark_dirty().unwrap();
    assert!(f.is_dirty());
    assert_eq!(std::fs::read(&path).unwrap()[88], 1);
    assert!(matches!(f.verify(), Err(Error::Checksum { .. })));
    assert!(f.insert("x").unwrap());
    assert!(!f.insert("x").unwrap());
    f.seal().unwrap();
    assert!(!f.is_dirty());
    f.verify().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let loaded = native::from_bytes(&bytes, &[]).unwrap().filter;
    assert!(loaded.contains_key("x"));
    assert_eq!(native::to_bytes(&loaded, None).unwrap(), bytes);
}

/// A writer that dies without sealing leaves the file dirty; the next writer re-seals it and
/// every key the dead writer added is there.
#[test]
fn a_file_left_dirty_is_resealable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("left.bloom");
    file::save(
        &path,
        &BlockedBloomFilter::new(10_000, 0.01).unwrap().into(),
        None,
    )
    .unwrap();
    run_writers(&path, &[(0, 5_000)], false);
    let f = MappedFilter::open_shared(&path, &[]).unwrap();
    assert!(f.is_dirty());
    f.seal().unwrap();
    drop(f);
    let loaded = file::load(&path, &[]).unwrap().filter;
    assert!(keys(0, 5_000).iter().all(|k| loaded.contains_key(k)));
    let again = MappedFilter::open(&path, &[]).unwrap();
    assert!(!again.is_dirty());
    again.verify().unwrap();
}

/// A dirty mark other than 0 or 1 is damage: the file is refused, never resealed over it.
#[test]
fn a_mark_that_is_neither_sealed_nor_dirty_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("marked.bloom");
    file::save(
        &path,
        &BlockedBloomFilter::new(1_000, 0.01).unwrap().into(),
        None,
    )
    .unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[native::DIRTY_MARK_OFFSET] = 2;
    std::fs::write(&path, &bytes).unwrap();
    for open in [MappedFilter::open, MappedFilter::open_shared] {
        let Err(e) = open(&path, &[]) else {
            panic!("a file marked 2 was mapped")
        };
        assert!(matches!(e, Error::Corrupt { .. }), "{e:?}");
        assert!(e.to_string().contains("dirty mark is 0x2"), "{e}");
    }
    assert!(file::load(&path, &[]).is_err(), "the checksum still tells");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file is left as it was"
    );
}

/// A read-only mapping answers queries and refuses every write, leaving the file unchanged.
#[test]
fn read_only_mappings_refuse_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ro.bloom");
    file::save(&path, &BloomFilter::new(1000, 0.01).unwrap().into(), None).unwrap();
    let before = std::fs::read(&path).unwrap();
    let f = MappedFilter::open(&path, &[]).unwrap();
    let mut new = [false];
    assert!(matches!(
        f.insert_batch_into(&["x"], &mut new),
        Err(Error::Unsupported { .. })
    ));
    assert!(matches!(f.insert("x"), Err(Error::Unsupported { .. })));
    assert!(f.mark_dirty().is_err() && f.seal().is_err());
    assert!(!f.contains("x"));
    // A file opened for reading only cannot be mapped for writing either.
    let file = std::fs::File::open(&path).unwrap();
    assert!(matches!(
        MappedFilter::shared_from_file(file, &path, &[]),
        Err(Error::Io { .. })
    ));
    let file = std::fs::File::open(&path).unwrap();
    let again = MappedFilter::from_file(file, &path, &[]).unwrap();
    assert_eq!(again.to_filter().unwrap(), f.to_filter().unwrap());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// Mapped classic and blocked filters answer exactly as the loaded ones, single and batch.
#[test]
fn mapped_filters_answer_like_loaded_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.bloom");
    let mut classic = BloomFilter::new(200_000, 0.01).unwrap();
    let mut blocked = BlockedBloomFilter::new(200_000, 0.01).unwrap();
    let members: Vec<u64> = (0..100_000).collect();
    classic.extend(&members);
    blocked.insert_batch(&members);
    let all: Vec<u64> = (0..200_000).collect();
    for f in [AnyFilter::from(classic), blocked.into()] {
        file::save(&path, &f, None).unwrap();
        let mapped = MappedFilter::open(&path, &[]).unwrap();
        mapped.verify().unwrap();
        assert_eq!(mapped.to_filter().unwrap(), f);
        let mut out = vec![false; all.len()];
        mapped.contains_batch_into(&all, &mut out);
        for (k, o) in all.iter().zip(&out) {
            assert_eq!(mapped.contains(k), f.contains_key(k));
            assert_eq!(*o, f.contains_key(k));
        }
        assert_eq!(mapped.params(), Filter::params(&f));
        assert!((mapped.estimated_len() - f.estimated_len()).abs() < 1e-6);
        assert_eq!(mapped.kind(), f.kind());
        match &f {
            AnyFilter::Classic(c) => assert_eq!(mapped.spec(), Some(c.spec())),
            AnyFilter::Blocked(b) => assert_eq!(mapped.block_spec(), Some(b.spec())),
            _ => panic!("kind changed"),
        }
    }
}

/// Kinds that cannot be used in place, and files that are not filters, are refused.
#[test]
fn only_classic_and_blocked_files_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.bloom");
    let counting = CountingBloomFilter::new(10, 0.1).unwrap();
    file::save(&path, &counting.into(), None).unwrap();
    // A valid file of another kind: not "corrupt", but a kind that is not mapped.
    let Err(e) = MappedFilter::open(&path, &[]) else {
        panic!("a counting file was mapped")
    };
    assert!(
        matches!(e, Error::NotMappable { kind: "counting" }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("a counting file cannot be memory-mapped"),
        "{e}"
    );
    std::fs::write(&path, b"short").unwrap();
    assert!(matches!(
        MappedFilter::open(&path, &[]),
        Err(Error::Truncated { .. })
    ));
    assert!(MappedFilter::open(dir.path(), &[]).is_err());
}

/// A FIFO, a device or a directory is refused before it is opened: opening a FIFO would wait
/// for a writer (it did, in both modes), and such a refusal is an I/O error that says what the
/// path is.
#[test]
fn special_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.bloom");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (path, what) in [
        (fifo.as_path(), "FIFO"),
        (Path::new("/dev/zero"), "character device"),
        (dir.path(), "directory"),
    ] {
        for shared in [false, true] {
            let opened = if shared {
                MappedFilter::open_shared(path, &[])
            } else {
                MappedFilter::open(path, &[])
            };
            match opened {
                Err(e @ Error::Io { .. }) => assert!(e.to_string().contains(what), "{e}"),
                Err(e) => panic!("{path:?}: {e}"),
                Ok(_) => panic!("{path:?} mapped"),
            }
        }
    }
}

/// The state read in the verifying or sealing pass (`verify_with_fill`, `seal_with_fill`) is
/// the one `fill`, `count_ones`, `estimated_len` and `estimated_fpp` read on their own, and the
/// loaded filter's, for classic filters and every blocked layout (so a writer that seals gets
/// its filter's state without another pass over the file).
#[test]
fn fill_read_with_the_checksum_equals_the_filters_own() {
    use bloomkit::probe::blocked::BlockLayout;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bloom");
    let layouts = [
        BlockLayout::SplitBlock256,
        BlockLayout::SplitBlock,
        BlockLayout::Bits(7),
    ];
    let mut filters: Vec<AnyFilter> = vec![BloomFilter::new(5000, 0.01).unwrap().into()];
    for layout in layouts {
        filters.push(
            BlockedBloomFilter::with_layout(300, layout, bloomkit::Hashing::Xxh3)
                .unwrap()
                .into(),
        );
    }
    for filter in filters {
        file::save(&path, &filter, None).unwrap();
        let shared = MappedFilter::open_shared(&path, &[]).unwrap();
        let empty = shared.verify_with_fill().unwrap();
        assert_eq!((empty.ones, empty.estimated_len), (0, 0.0));
        shared.mark_dirty().unwrap();
        let mut new = vec![false; 3000];
        shared.insert_batch_into(&keys(0, 3000), &mut new).unwrap();
        let sealed = shared.seal_with_fill().unwrap();
        let mapped = MappedFilter::open(&path, &[]).unwrap();
        let loaded = file::load(&path, &[]).unwrap().filter;
        assert!(sealed.ones > 1000, "{sealed:?}");
        assert_eq!(sealed, mapped.verify_with_fill().unwrap());
        assert_eq!(sealed, mapped.fill());
        assert_eq!(
            (
                sealed.ones,
                sealed.estimated_len,
                sealed.estimated_fpp.to_bits()
            ),
            (
                mapped.count_ones(),
                loaded.estimated_len(),
                loaded.estimated_fpp().to_bits()
            ),
            "{:?}",
            loaded.kind()
        );
        drop((shared, mapped));
        std::fs::remove_file(&path).unwrap();
    }
}
