//! The counting filter against real redis-server processes (see common/mod.rs): counts,
//! removal across processes and its refusals, saturation, concurrent removers, identity, the
//! false-positive rate of small filters at low rates under both layout names.

mod common;

use bloomkit::Scheme;
use bloomkit_redis::counting::{COUNTING_MIXED_SCHEME, COUNTING_SCHEME};
use bloomkit_redis::{Connection, CountingRedisFilter, Error};
use common::{connect, connect_cluster, fpr_bound, Server};

fn items(range: std::ops::Range<u64>) -> Vec<String> {
    range.map(|i| format!("session-{i:010}")).collect()
}

/// Every segment's bytes, to compare states.
async fn snapshot(conn: &Connection, f: &CountingRedisFilter) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for s in 0..f.layout().segments() {
        out.push(
            conn.query(redis::cmd("GET").arg(f.segment_key(s)))
                .await
                .unwrap(),
        );
    }
    out
}

/// A new server and a counting filter `name` on it for 1000 elements at 1%.
async fn small_filter(name: &str) -> (common::Server, Connection, CountingRedisFilter) {
    let (server, conn) = common::start().await;
    let f = CountingRedisFilter::create(&conn, name, 1_000, 0.01)
        .await
        .unwrap();
    (server, conn, f)
}

#[tokio::test]
async fn adds_checks_counts_and_removes_across_clients() {
    let (server, a) = common::start().await;
    let b = connect(&server).await;
    let n = 20_000u64;
    // Small segments: elements spread over several keys.
    let opts = common::segments_of(1 << 16);
    let f = CountingRedisFilter::create_with(&a, "sessions", n, 0.01, opts)
        .await
        .unwrap();
    assert!(f.layout().segments() > 4);
    let data = items(0..n);
    let new = f.insert_batch(&data).await.unwrap();
    assert!(new.iter().filter(|&&x| x).count() as f64 > 0.98 * n as f64);
    // Another process opens it by name and sees them all.
    let g = CountingRedisFilter::open(&b, "sessions").await.unwrap();
    assert!(g.contains_batch(&data).await.unwrap().iter().all(|&x| x));
    let absent = items(1_000_000..1_040_000);
    let fp = common::count_true(&g.contains_batch(&absent).await.unwrap());
    assert!(fp <= fpr_bound(0.01, absent.len()), "fp = {fp}");
    // Counts: the minimum counter, at least the true number of insertions.
    f.insert_batch(&data[..10]).await.unwrap();
    let counts = g.count_batch(&data[..20]).await.unwrap();
    assert!(counts[..10].iter().all(|&c| c >= 2), "{counts:?}");
    assert!(counts[10..].iter().all(|&c| c >= 1), "{counts:?}");

    // The other client removes half of them: gone for everyone (up to false positives).
    let removed = g.remove_batch(&data[..10_000]).await.unwrap();
    assert!(removed.iter().all(|&r| r));
    let still = common::count_true(&f.contains_batch(&data[10..10_000]).await.unwrap());
    assert!(still <= fpr_bound(0.02, 9_990), "{still}");
    // Removing never creates a false negative for what stays.
    let found = f.contains_batch(&data[10_000..]).await.unwrap();
    assert!(found.iter().all(|&x| x), "a false negative");
    // The ten inserted twice are still there once.
    let found = f.contains_batch(&data[..10]).await.unwrap();
    assert!(found.iter().all(|&x| x), "a false negative");

    // Removing what is not there: a typed error, and not one counter changes.
    let before = snapshot(&a, &f).await;
    let never = items(5_000_000..5_000_200);
    let present = f.contains_batch(&never).await.unwrap();
    let absent_one = never
        .iter()
        .zip(&present)
        .find(|(_, &p)| !p)
        .map(|(x, _)| x.clone())
        .unwrap();
    match f.remove(&absent_one).await {
        Err(Error::Core(bloomkit::Error::NotPresent)) => {}
        other => panic!("expected NotPresent, got {other:?}"),
    }
    assert_eq!(snapshot(&a, &f).await, before);
    // In a batch, refused elements change nothing and the others are removed, in order:
    // the same element twice after one insertion is removed once and refused once.
    let x = "inserted-once".to_string();
    f.insert(&x).await.unwrap();
    let before = snapshot(&a, &f).await;
    let r = f
        .remove_batch(&[x.clone(), absent_one.clone(), x.clone()])
        .await
        .unwrap();
    assert_eq!(r, [true, false, false]);
    f.insert(&x).await.unwrap();
    assert_eq!(
        snapshot(&a, &f).await,
        before,
        "remove then insert restores"
    );
    let info = g.info().await.unwrap();
    assert_eq!(info.layout, *f.layout());
    assert_eq!(info.saturated_counters, 0);
    assert!(
        (info.estimated_count - 10_001.0).abs() < 0.05 * 10_001.0,
        "{info:?}"
    );
}

#[tokio::test]
async fn saturation_is_reported_and_saturated_counters_never_decrease() {
    let (_server, _conn, f) = small_filter("sat").await;
    let mut reported = 0;
    for i in 0..20 {
        let r = f.insert_batch_report(&["hot"]).await.unwrap();
        assert_eq!(r.new, [i == 0]);
        reported += usize::from(r.saturated[0]);
    }
    // Saturated from the 15th insertion on.
    assert_eq!(reported, 6);
    assert_eq!(f.count_batch(&["hot"]).await.unwrap(), [15]);
    assert!(f.info().await.unwrap().saturated_counters >= 1);
    // Its count is unknown past 15: removing never brings a saturated counter down, so
    // the element stays present however often it is removed.
    for _ in 0..30 {
        f.remove(&"hot").await.unwrap();
    }
    assert!(f.contains(&"hot").await.unwrap());
    assert_eq!(f.count_batch(&["hot"]).await.unwrap(), [15]);
}

#[tokio::test]
async fn concurrent_removers_remove_each_insertion_exactly_once() {
    let server = Server::start();
    let n = 4_000u64;
    let conn = connect(&server).await;
    let f = CountingRedisFilter::create(&conn, "race", n, 0.01)
        .await
        .unwrap();
    let data = items(0..n);
    f.insert_batch(&data).await.unwrap();
    // Four processes remove the same elements at once, in different orders.
    let mut tasks = Vec::new();
    for t in 0..4u64 {
        let c = connect(&server).await;
        let mut mine = data.clone();
        mine.rotate_left((t * 1000) as usize);
        tasks.push(tokio::spawn(async move {
            let g = CountingRedisFilter::open(&c, "race").await.unwrap();
            let mut removed = 0usize;
            for chunk in mine.chunks(250) {
                removed += common::count_true(&g.remove_batch(chunk).await.unwrap());
            }
            removed
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    // Each removal takes exactly one unit from each of an element's k counters, atomically,
    // and no counter goes below 0: whatever the interleaving, the counters hold exactly the
    // units of the insertions not removed. (A second removal of an element passes only when it
    // has become a false positive, taking other elements' units, which the others then miss:
    // the documented hazard; that is why the total can fall short of n by a little.)
    let k = f.layout().hashes() as u64;
    let mut sum = 0u64;
    for s in 0..f.layout().segments() {
        let bytes: Vec<u8> = conn
            .query(redis::cmd("GET").arg(f.segment_key(s)))
            .await
            .unwrap();
        sum += bytes
            .iter()
            .map(|b| u64::from(b >> 4) + u64::from(b & 15))
            .sum::<u64>();
    }
    assert!(total <= n as usize);
    assert_eq!(sum, k * (n - total as u64), "{total} removed");
    // Extra removals need false positives: at most 3n·p of them, each blocking ≤ k others.
    assert!(
        n as usize - total <= k as usize * fpr_bound(0.01, 3 * n as usize),
        "{total}"
    );
}

#[tokio::test]
async fn a_deleted_or_recreated_counting_filter_is_gone_for_old_handles() {
    let (_server, conn, f) = small_filter("c").await;
    f.insert(&"a").await.unwrap();
    let old = f.clone();
    bloomkit_redis::delete_filter(&conn, "c").await.unwrap();
    let new = CountingRedisFilter::create(&conn, "c", 1_000, 0.01)
        .await
        .unwrap();
    for r in [
        old.insert(&"b").await.map(|_| ()),
        old.remove(&"a").await,
        old.contains(&"a").await.map(|_| ()),
    ] {
        assert!(matches!(r, Err(Error::Gone(_))), "{r:?}");
    }
    assert!(!new.contains(&"b").await.unwrap());
    assert_eq!(
        bloomkit_redis::stored_kind(&conn, "c").await.unwrap(),
        Some(bloomkit_redis::StoredKind::Counting)
    );
    // A different size under the same name is refused.
    assert!(matches!(
        CountingRedisFilter::create(&conn, "c", 100_000, 0.01).await,
        Err(Error::Core(bloomkit::Error::Incompatible(_)))
    ));
    new.delete().await.unwrap();
    let keys: Vec<String> = conn.query(redis::cmd("KEYS").arg("*")).await.unwrap();
    assert!(keys.is_empty(), "{keys:?}");
}

/// On a cluster the adds run as the guarded script (a transaction cannot be undone there):
/// elements spread over segments on several nodes are added, counted, removed (and refused
/// when absent) as on one server, and a re-created filter's old handle gets `Gone`.
#[tokio::test]
async fn counting_filter_works_across_a_cluster() {
    let cluster = common::Cluster::start();
    let conn = connect_cluster(&cluster).await;
    let opts = common::segments_of(1 << 14);
    let f = CountingRedisFilter::create_with(&conn, "cc", 5_000, 0.01, opts.clone())
        .await
        .unwrap();
    assert!(f.layout().segments() >= 3);
    let data = items(0..5_000);
    let new = f.insert_batch_report(&data).await.unwrap();
    assert!(new.new.iter().filter(|&&x| x).count() > 4_900);
    assert!(f.contains_batch(&data).await.unwrap().iter().all(|&x| x));
    f.insert_batch(&data[..100]).await.unwrap();
    assert!(f
        .count_batch(&data[..100])
        .await
        .unwrap()
        .iter()
        .all(|&c| c >= 2));
    assert!(f.remove_batch(&data).await.unwrap().iter().all(|&r| r));
    let found = f.contains_batch(&data[..100]).await.unwrap();
    assert!(found.iter().all(|&x| x), "a false negative");
    let absent = items(9_000_000..9_000_050);
    let present = f.contains_batch(&absent).await.unwrap();
    let removed = f.remove_batch(&absent).await.unwrap();
    for (p, r) in present.iter().zip(&removed) {
        assert!(*p || !*r, "an absent element was removed");
    }
    let old = f.clone();
    bloomkit_redis::delete_filter(&conn, "cc").await.unwrap();
    let again = CountingRedisFilter::create_with(&conn, "cc", 5_000, 0.01, opts)
        .await
        .unwrap();
    assert!(matches!(old.insert(&"x").await, Err(Error::Gone(_))));
    assert!(!again.contains(&"x").await.unwrap());
    // Corrupt metadata on a cluster: purged, saying which keys may remain and why.
    set_meta_field(&conn, "cc", "segments", "-1").await;
    match bloomkit_redis::purge_filter(&conn, "cc").await.unwrap() {
        bloomkit_redis::Purge::MetadataOnly { why } => {
            assert!(why.contains("cluster") && why.contains(again.id()), "{why}")
        }
        other => panic!("{other:?}"),
    }
    common::assert_absent(&conn, "cc").await;
}

/// The blocking counting filter: the same filter without an async runtime, shared with an
/// async handle by name.
#[test]
fn blocking_counting_filter_adds_counts_removes_and_refuses() {
    use bloomkit_redis::blocking::CountingRedisFilter as Blocking;
    let (server, c) = common::start_blocking();
    let f = Blocking::create(&c, "bc", 2_000, 0.01).unwrap();
    assert_eq!(f.layout().hashes(), 4);
    let data = items(0..2_000);
    assert!(common::count_true(&f.insert_batch(&data).unwrap()) > 1_950);
    assert!(f.insert("twice").unwrap());
    assert!(!f.insert("twice").unwrap());
    assert_eq!(f.count_batch(&["twice"]).unwrap(), vec![2]);
    let g = Blocking::open(&c, "bc").unwrap();
    assert!(g.contains_batch(&data).unwrap().iter().all(|&x| x));
    assert!(g.remove_batch(&data[..1_000]).unwrap().iter().all(|&r| r));
    g.remove("twice").unwrap();
    assert!(g.contains("twice").unwrap());
    g.remove("twice").unwrap();
    assert!(!g.contains("twice").unwrap());
    assert!(matches!(
        g.remove("twice"),
        Err(Error::Core(bloomkit::Error::NotPresent))
    ));
    let report = g.insert_batch_report(&["r"]).unwrap();
    assert_eq!((report.new, report.saturated), (vec![true], vec![false]));
    let info = g.info().unwrap();
    assert!(info.nonzero_counters > 0);
    assert_eq!(g.as_async().name(), "bc");
    g.clear().unwrap();
    assert!(!f.contains("r").unwrap());
    f.expire(std::time::Duration::from_secs(60)).unwrap();
    let ttl: i64 = common::cli(server.port, &["PTTL", &bloomkit_redis::keys::meta("bc")])
        .parse()
        .unwrap();
    assert!(ttl > 0 && ttl <= 60_000, "{ttl}");
    f.delete().unwrap();
    assert!(matches!(Blocking::open(&c, "bc"), Err(Error::NotFound(_))));
}

/// Segment 0's counters, `u4 #j` for `j` in `0..segment_counters`.
async fn counters(conn: &Connection, f: &CountingRedisFilter) -> Vec<u8> {
    let bytes: Vec<u8> = conn
        .query(redis::cmd("GET").arg(f.segment_key(0)))
        .await
        .unwrap();
    (0..f.layout().segment_counters() as usize)
        .map(|j| {
            let b = bytes.get(j / 2).copied().unwrap_or(0);
            if j % 2 == 0 {
                b >> 4
            } else {
                b & 15
            }
        })
        .collect()
}

/// Sets field `field` of filter `name`'s metadata to `value`, as another client (or an older
/// version) would have written it.
async fn set_meta_field(conn: &Connection, name: &str, field: &str, value: &str) {
    let _: i64 = conn
        .query(
            redis::cmd("HSET")
                .arg(bloomkit_redis::keys::meta(name))
                .arg(field)
                .arg(value),
        )
        .await
        .unwrap();
}

/// A new counting filter `name` stored as filters were before `counters4-mixed`: the same
/// creation with the metadata's `scheme` set to `counters4`, then opened by name.
async fn old_layout_filter(conn: &Connection, name: &str, n: u64, p: f64) -> CountingRedisFilter {
    CountingRedisFilter::create(conn, name, n, p).await.unwrap();
    set_meta_field(conn, name, "scheme", COUNTING_SCHEME).await;
    let f = CountingRedisFilter::open(conn, name).await.unwrap();
    assert_eq!(
        (f.layout_name(), f.scheme()),
        (COUNTING_SCHEME, Scheme::EnhancedDouble)
    );
    f
}

/// False positives of `filters` counting filters of one layout (each with its own `n`
/// members), `trials` absent keys each.
struct Fpr {
    measured: f64,
    expected: f64,
    sigmas: f64,
}

/// Fills `filters` filters made by `make(i)` with `n` members each and counts the false
/// positives of `trials` absent keys per filter. The answers are the client's positions
/// (`probe`, the counter indexes it sends) read against the segment's counters, fetched
/// once with `GET`; the first 2,000 keys of each filter are also asked of the server with
/// `contains_batch`, which must agree. The bound is `tests/fpr.rs`'s: `X` false positives
/// of `T` queries at the model's rate `q` have variance `T·q(1-q)` (the queries) plus
/// `T²·Var(q̂)` (the spread of each filter's fill, by the delta method).
async fn measure_fpr<F, Fut>(conn: &Connection, n: u64, filters: u64, trials: u64, make: F) -> Fpr
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = CountingRedisFilter>,
{
    let (mut hits, mut mean, mut var) = (0u64, 0.0, 0.0);
    for i in 0..filters {
        let f = make(i).await;
        let members: Vec<String> = (0..n).map(|j| format!("member:{i}:{j}")).collect();
        f.insert_batch(&members).await.unwrap();
        let c = counters(conn, &f).await;
        let stranger = |j: u64| format!("stranger:{i}:{j}");
        let asked: Vec<String> = (0..2_000).map(stranger).collect();
        let answers = f.contains_batch(&asked).await.unwrap();
        for j in 0..trials {
            let p = f.probe(&stranger(j));
            let hit = p.counters.iter().all(|&x| c[x as usize] > 0);
            if let Some(&a) = answers.get(j as usize) {
                assert_eq!(hit, a, "the server answers otherwise for {}", stranger(j));
            }
            hits += u64::from(hit);
        }
        let (m, k) = (
            f.layout().segment_counters() as f64,
            f64::from(f.layout().hashes()),
        );
        let q = f.layout().expected_fpp(n);
        let (t, load) = (trials as f64, k * n as f64 / m);
        let empty = (-load).exp();
        let var_fill = (empty * (1.0 - (1.0 + load) * empty) / m).max(0.0);
        let sd_q = k * (1.0 - empty).powf(k - 1.0) * var_fill.sqrt();
        mean += t * q;
        var += t * q * (1.0 - q) + t * t * sd_q * sd_q;
        f.delete().await.unwrap();
    }
    let total = (filters * trials) as f64;
    Fpr {
        measured: hits as f64 / total,
        expected: mean / total,
        sigmas: (hits as f64 - mean) / var.sqrt(),
    }
}

/// Small counting filters at low rates, where `m·k` is small: new filters
/// (`counters4-mixed`) hold `tests/fpr.rs`'s 5σ bound around the classic model, and filters
/// of the old layout (`counters4`, enhanced double hashing) break it with the excess of about
/// `2/(m·k)` that made the layout change. Per cell, filters × absent keys each:
/// - `n = 20, p = 10⁻⁴` (`m = 449`, `k = 7`): 10 × 500,000, about 500 false positives
///   expected; the old layout has about 3.7× that;
/// - `n = 200, p = 10⁻⁵` (`m = 5521`, `k = 9`): 4 × 2,500,000, about 100 expected; the old
///   layout about 2.5×;
/// - `n = 1000, p = 10⁻⁵` (`m = 27601`, `k = 9`): 2 × 5,000,000, about 100 expected; the old
///   layout's excess (about 1.3×) is too small to show at this size, so only the new
///   layout's bound is checked there.
///
/// Keys and hashing are fixed, so every run counts the same false positives (the filter ids,
/// which are random, name keys but place no counter).
#[tokio::test]
async fn small_counting_filters_at_low_rates() {
    let (_server, conn) = common::start().await;
    let mut report = String::new();
    let mut failures = Vec::new();
    for (n, p, filters, trials, old_excess) in [
        (20, 1e-4, 10, 500_000, true),
        (200, 1e-5, 4, 2_500_000, true),
        (1000, 1e-5, 2, 5_000_000, false),
    ] {
        let (new, old) = both_layouts(&conn, n, p, filters, trials, &mut report).await;
        if new.sigmas.abs() > 5.0 {
            failures.push(format!("n={n} p={p}: new layout {:+.2} sigma", new.sigmas));
        }
        if old_excess && old.sigmas <= 5.0 {
            failures.push(format!(
                "n={n} p={p}: the old layout's excess vanished ({:+.2} sigma)",
                old.sigmas
            ));
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{failures:?}\n{report}");
}

/// The figures in docs/REDIS.md, section 12: both layouts, 4 filters × `2000/p` absent keys
/// each (about 8,000 false positives expected per cell). Minutes in release:
/// `cargo test --release -p bloomkit-redis --test counting -- --ignored
/// small_counting_filters_survey --nocapture`.
#[tokio::test]
#[ignore]
async fn small_counting_filters_survey() {
    let (_server, conn) = common::start().await;
    let mut report = String::new();
    let mut failures = Vec::new();
    for (n, p) in [
        (20, 1e-3),
        (20, 1e-4),
        (200, 1e-4),
        (200, 1e-5),
        (1000, 1e-5),
    ] {
        let (new, _) = both_layouts(&conn, n, p, 4, (2000.0 / p) as u64, &mut report).await;
        failures.extend(
            (new.sigmas.abs() > 5.0)
                .then(|| format!("n={n} p={p}: new layout {:+.2} sigma", new.sigmas)),
        );
    }
    println!("{report}");
    assert!(failures.is_empty(), "{failures:?}\n{report}");
}

/// [`measure_fpr`] of new filters (`counters4-mixed`) and of the old layout (`counters4`),
/// with the same members and absent keys; appends a line to `report`.
async fn both_layouts(
    conn: &Connection,
    n: u64,
    p: f64,
    filters: u64,
    trials: u64,
    report: &mut String,
) -> (Fpr, Fpr) {
    let new = measure_fpr(conn, n, filters, trials, |i| async move {
        let f = CountingRedisFilter::create(conn, &format!("new-{n}-{i}"), n, p)
            .await
            .unwrap();
        assert_eq!(f.layout_name(), COUNTING_MIXED_SCHEME);
        f
    })
    .await;
    let old = measure_fpr(conn, n, filters, trials, |i| async move {
        old_layout_filter(conn, &format!("old-{n}-{i}"), n, p).await
    })
    .await;
    *report += &format!(
        "n={n} p={p}, {filters} filters x {trials} keys: model {:.3e}, {COUNTING_MIXED_SCHEME} \
         {:.3e} ({:.2}x, {:+.2} sigma), {COUNTING_SCHEME} {:.3e} ({:.2}x, {:+.2} sigma)\n",
        new.expected,
        new.measured,
        new.measured / new.expected,
        new.sigmas,
        old.measured,
        old.measured / old.expected,
        old.sigmas
    );
    (new, old)
}

/// A filter stored with the old layout name (`counters4`) keeps its meaning: it opens (by
/// `open`, by `create` with its parameters, and as a blocking handle), probes with enhanced
/// double hashing over the segment's counters, and the counters an old client set for its
/// elements (written here from those positions, independently of the filter's code) answer
/// for them: present, counted, removed back to zero. A name this version does not know is
/// refused.
#[tokio::test]
async fn filters_of_the_old_layout_name_keep_their_positions() {
    let (server, conn) = common::start().await;
    let f = old_layout_filter(&conn, "old", 1_000, 0.01).await;
    let (m, k) = (f.layout().segment_counters(), f.layout().hashes());
    assert_eq!(f.layout().segments(), 1);
    let spec = bloomkit::Spec::new(
        bloomkit::math::Params { bits: m, hashes: k },
        Scheme::EnhancedDouble,
        bloomkit::Hashing::Xxh3,
    )
    .unwrap();
    let data = items(0..1_000);
    for key in &data[..50] {
        assert_eq!(f.probe(key).counters, spec.positions(key), "{key}");
    }
    // The segment as an old client leaves it after inserting `data` once.
    let mut nibbles = vec![0u8; m as usize];
    for key in &data {
        for j in spec.positions(key) {
            nibbles[j as usize] += 1;
        }
    }
    assert!(nibbles.iter().all(|&c| c < 15));
    let bytes: Vec<u8> = nibbles
        .chunks(2)
        .map(|c| c[0] << 4 | c.get(1).copied().unwrap_or(0))
        .collect();
    let _: () = conn
        .query(redis::cmd("SET").arg(f.segment_key(0)).arg(bytes))
        .await
        .unwrap();
    // Reopened every way, it is still the old layout and finds every element.
    let again = CountingRedisFilter::create(&conn, "old", 1_000, 0.01)
        .await
        .unwrap();
    assert_eq!(again.layout_name(), COUNTING_SCHEME);
    let (url, first) = (server.url(), data[0].clone());
    let blocking = std::thread::spawn(move || {
        let options = bloomkit_redis::Options::default();
        let c = bloomkit_redis::blocking::BlockingConnection::open(&url, &options).unwrap();
        let g = bloomkit_redis::blocking::CountingRedisFilter::open(&c, "old").unwrap();
        (g.layout_name(), g.contains(&first).unwrap())
    });
    assert_eq!(blocking.join().unwrap(), (COUNTING_SCHEME, true));
    assert!(again
        .contains_batch(&data)
        .await
        .unwrap()
        .iter()
        .all(|&x| x));
    assert!(again
        .count_batch(&data)
        .await
        .unwrap()
        .iter()
        .all(|&c| c >= 1));
    assert!(again.remove_batch(&data).await.unwrap().iter().all(|&r| r));
    assert!(counters(&conn, &f).await.iter().all(|&c| c == 0));
    // New filters get the new name; a name this version does not know is refused.
    let new = CountingRedisFilter::create(&conn, "new", 1_000, 0.01)
        .await
        .unwrap();
    assert_eq!(
        (new.layout_name(), new.scheme()),
        (COUNTING_MIXED_SCHEME, Scheme::MixedDouble)
    );
    assert_eq!(
        common::cli(
            server.port,
            &["HGET", &bloomkit_redis::keys::meta("new"), "scheme"]
        ),
        COUNTING_MIXED_SCHEME
    );
    set_meta_field(&conn, "new", "scheme", "counters5").await;
    assert!(matches!(
        CountingRedisFilter::open(&conn, "new").await,
        Err(Error::Core(bloomkit::Error::Incompatible(
            bloomkit::Incompatibility::Scheme(..)
        )))
    ));
    assert!(bloomkit_redis::delete_filter(&conn, "old").await.unwrap());
    common::assert_absent(&conn, "old").await;
}

/// Counter reads of a batch (byte ranges, as a small filter's batch gets them) and of one
/// element at a time (fields) give the same answers and counts; the command counts show which
/// reads ran.
#[tokio::test]
async fn batch_counter_reads_by_byte_ranges_answer_as_field_reads() {
    let (server, conn) = common::start().await;
    let present = items(0..5_000);
    let f = CountingRedisFilter::create(&conn, "ranges", 20_000, 0.01)
        .await
        .unwrap();
    f.insert_batch(&present).await.unwrap();
    f.insert_batch(&present[4_000..4_500]).await.unwrap(); // counted twice
    let admin = connect(&server).await;
    let mixed = items(4_000..8_000); // the first quarter present
    common::reset_stats(&admin).await;
    let hits = f.contains_batch(&mixed).await.unwrap();
    let counts = f.count_batch(&mixed).await.unwrap();
    assert!(common::calls(&admin, "getrange").await >= 2);
    assert_eq!(common::calls(&admin, "bitfield_ro").await, 0);
    for (i, k) in mixed.iter().enumerate() {
        assert_eq!(hits[i], f.contains(k).await.unwrap(), "{k}");
        assert_eq!(counts[i], f.count_batch(&[k]).await.unwrap()[0], "{k}");
    }
    let fields = common::calls(&admin, "bitfield_ro").await;
    assert_eq!(fields, 2 * mixed.len() as u64);
    assert!(hits[..1_000].iter().all(|&h| h), "no false negative");
    assert!(
        counts[..500].iter().all(|&c| c >= 2),
        "{:?}",
        &counts[..500]
    );
    assert!(counts[500..1_000].iter().all(|&c| c >= 1));
    let fp = hits[1_000..].iter().filter(|&&h| h).count();
    assert!(fp <= fpr_bound(0.01, 3_000), "{fp} false positives");
}
