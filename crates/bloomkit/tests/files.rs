//! Files: atomic saves that survive a killed writer, checked loads, memory-mapped filters.

use bloomkit::codec::native::Design;
use bloomkit::{file, AnyFilter, BloomFilter, CountingBloomFilter, Error};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Two different filters of about 1.2 MB each: a torn write of one over the other cannot pass
/// for either.
fn generation(g: u64) -> BloomFilter {
    let mut f = BloomFilter::new(1_000_000, 0.01).unwrap();
    for i in 0..10_000u64 {
        f.insert(&(g, i));
    }
    f
}

/// Not a test on its own: the child process of `killed_writer_never_leaves_a_torn_file`. It
/// saves generation 0 and 1 alternately to the path in `BLOOMKIT_CRASH_CHILD` until killed.
#[test]
fn crash_child() {
    let Ok(path) = std::env::var("BLOOMKIT_CRASH_CHILD") else {
        return;
    };
    let gens = [generation(0), generation(1)];
    for i in 0.. {
        file::save(Path::new(&path), &gens[i % 2].clone().into(), None).unwrap();
    }
}

/// A writer process is SIGKILLed at 25 pseudo-random moments while it saves in a loop; every
/// time, the file then loads (checksum verified) as one of the two generations.
#[cfg(unix)]
#[test]
fn killed_writer_never_leaves_a_torn_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("filter.bloom");
    file::save(&path, &generation(0).into(), None).unwrap();
    let gens = [
        AnyFilter::from(generation(0)),
        AnyFilter::from(generation(1)),
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..25 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env("BLOOMKIT_CRASH_CHILD", &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(20 + seed % 180));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let loaded = file::load(&path, &[]).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(
            gens.contains(&loaded.filter),
            "round {round}: neither generation"
        );
    }
}

#[test]
fn save_and_load_keep_design_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.bloom");
    let mut c = CountingBloomFilter::new(100, 0.01).unwrap();
    c.insert("x");
    let design = Some(Design {
        capacity: 100,
        fpp: 0.01,
    });
    file::save(&path, &c.clone().into(), design).unwrap();
    let back = file::load(&path, &[]).unwrap();
    assert_eq!(back.filter, c.into());
    assert_eq!(back.design, design);
    // No temporary files are left behind by successful saves.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // Missing files and directories are typed I/O errors naming the path.
    let err = file::load(&dir.path().join("nope.bloom"), &[]).unwrap_err();
    assert!(
        matches!(err, Error::Io { .. }) && err.to_string().contains("nope.bloom"),
        "{err}"
    );
    let err = file::save(
        &dir.path().join("no/such/dir.bloom"),
        &BloomFilter::new(1, 0.5).unwrap().into(),
        None,
    );
    assert!(matches!(err, Err(Error::Io { .. })));
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips() {
    let mut f = BloomFilter::new(100, 0.01).unwrap();
    f.insert("x");
    let json = serde_json::to_string(&f).unwrap();
    let back: BloomFilter = serde_json::from_str(&json).unwrap();
    assert_eq!(back, f);
    let wrong: Result<CountingBloomFilter, _> = serde_json::from_str(&json);
    assert!(wrong
        .unwrap_err()
        .to_string()
        .contains("expected a counting filter"));
    let any: AnyFilter = serde_json::from_str(&json).unwrap();
    assert_eq!(any, f.into());
}

#[test]
fn a_save_waits_for_the_lock_of_the_file_it_replaces() {
    let dir = std::env::temp_dir().join(format!("bloomkit-save-lock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("shared.bloom");
    file::save(&path, &generation(0).into(), None).unwrap();
    // Another holder of the file's exclusive lock (as an in-place writer holds it per batch).
    let holder = std::fs::File::open(&path).unwrap();
    holder.lock().unwrap();
    let p = path.clone();
    let saver = std::thread::spawn(move || file::save(&p, &generation(1).into(), None));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!saver.is_finished(), "the save did not wait for the lock");
    assert_eq!(
        file::load(&path, &[]).unwrap().filter,
        generation(0).into(),
        "the file was replaced while locked"
    );
    holder.unlock().unwrap();
    saver.join().unwrap().unwrap();
    assert_eq!(file::load(&path, &[]).unwrap().filter, generation(1).into());
    std::fs::remove_dir_all(&dir).unwrap();
}
