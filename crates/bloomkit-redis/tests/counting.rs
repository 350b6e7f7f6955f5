//! The counting filter against real redis-server processes (see common/mod.rs): counts,
//! removal across processes and its refusals, saturation, concurrent removers, identity.

mod common;

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
    let _: i64 = conn
        .query(
            redis::cmd("HSET")
                .arg(bloomkit_redis::keys::meta("cc"))
                .arg("segments")
                .arg("-1"),
        )
        .await
        .unwrap();
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
