//! The time-window filter against real redis-server processes (see common/mod.rs): the window,
//! clock skew between clients, generation keys that expire or are deleted, parameters that
//! differ between clients, and the cost of a check in round trips and commands.

mod common;

use bloomkit::clock::{Clock, ManualClock, SystemClock};
use bloomkit_redis::{
    Connection, Error, FilterOptions, Options, TimeWindowRedisFilter, WindowParams,
};
use common::{connect, connect_cluster, fpr_bound, Cluster, Server};
use std::sync::Arc;
use std::time::{Duration, Instant};

const HOUR: u64 = 3_600_000;

fn items(range: std::ops::Range<u64>) -> Vec<String> {
    range.map(|i| format!("page-{i:09}.example.com/")).collect()
}

/// A clock `offset_ms` away from a shared true clock: a client whose clock is skewed.
#[derive(Debug)]
struct Skewed {
    truth: Arc<ManualClock>,
    offset_ms: i64,
}

impl Clock for Skewed {
    fn now_ms(&self) -> u64 {
        self.truth.now_ms().saturating_add_signed(self.offset_ms)
    }
}

/// The real time, rounded down to a whole hour, so that tests start at a generation boundary
/// and expiry times computed from it lie in the server's future.
fn hour_now() -> u64 {
    SystemClock.now_ms() / HOUR * HOUR
}

fn params(generations: u32) -> WindowParams {
    WindowParams::new(
        Duration::from_millis(u64::from(generations) * HOUR),
        generations,
        20_000,
        0.01,
    )
}

/// A new server and a time-window filter `name` of `generations` one-hour generations on it,
/// reading a manual clock that starts at the current hour.
async fn on_manual_clock(
    name: &str,
    generations: u32,
) -> (Server, Connection, Arc<ManualClock>, TimeWindowRedisFilter) {
    let (server, conn) = common::start().await;
    let clock = Arc::new(ManualClock::new(hour_now()));
    let f = TimeWindowRedisFilter::create(&conn, name, params(generations))
        .await
        .unwrap()
        .with_clock(clock.clone());
    (server, conn, clock, f)
}

#[tokio::test]
async fn remembers_the_window_then_forgets_and_reports_first_sightings() {
    let (_server, conn, clock, f) = on_manual_clock("crawl", 4).await;
    // 5,000 elements per hour for 4 hours (the window's capacity).
    let mut batches = Vec::new();
    for h in 0..4u64 {
        let b = items(h * 5_000..(h + 1) * 5_000);
        let new = f.insert_batch(&b).await.unwrap();
        // First sightings: nearly all new (a few false positives of the filter).
        assert!(new.iter().filter(|&&n| !n).count() <= fpr_bound(0.01, b.len()));
        batches.push(b);
        clock.advance(Duration::from_millis(HOUR));
    }
    // Seen again inside the window: not new.
    let again = f.insert_batch(&batches[0][..100]).await.unwrap();
    assert!(again.iter().all(|&n| !n));
    // A second client opening it by name sees every element of the window.
    let g = TimeWindowRedisFilter::open(&conn, "crawl")
        .await
        .unwrap()
        .with_clock(clock.clone());
    for b in &batches {
        assert!(g.contains_batch(b).await.unwrap().iter().all(|&x| x));
    }
    // The FPR over the window is within the target.
    let absent = items(1_000_000..1_020_000);
    let fp = common::count_true(&g.contains_batch(&absent).await.unwrap());
    assert!(fp <= fpr_bound(0.01, absent.len()), "fp = {fp}");
    let info = g.info().await.unwrap();
    assert_eq!(info.generations.len(), 5, "{info:?}"); // 4 full hours and the current one
    assert!(
        (info.estimated_count - 20_100.0).abs() < 0.05 * 20_100.0,
        "{info:?}"
    );

    // W + 2L after the last batch, every element of the first three hours is forgotten
    // (the 100 re-sighted ones were added again at hour 4); the filter answers like an
    // empty one.
    clock.advance(Duration::from_millis(6 * HOUR));
    for b in &batches {
        let hits = g.contains_batch(b).await.unwrap();
        let found = hits.iter().filter(|&&x| x).count();
        assert!(found <= fpr_bound(0.01, b.len()), "{found}");
    }
    // A clock going backwards is no time passing: nothing comes back.
    clock.set(hour_now());
    let found = common::count_true(&g.contains_batch(&batches[1]).await.unwrap());
    assert!(found <= fpr_bound(0.01, batches[1].len()), "{found}");
}

#[tokio::test]
async fn skewed_clients_find_every_element_of_the_window() {
    let server = Server::start();
    let truth = Arc::new(ManualClock::new(hour_now()));
    let l = HOUR as i64;
    // The tolerated skew: each client within L/2 of the true (and server) time.
    let skews = [l / 2, -l / 2, l / 3, -l / 4];
    let mut clients = Vec::new();
    for (i, &offset_ms) in skews.iter().enumerate() {
        let c = Connection::open(&server.url(), &Options::default())
            .await
            .unwrap();
        let f = TimeWindowRedisFilter::create(&c, "skew", params(3))
            .await
            .unwrap()
            .with_clock(Arc::new(Skewed {
                truth: truth.clone(),
                offset_ms,
            }));
        clients.push((i, f));
    }
    // 6 windows of traffic: every 7 minutes a batch from one client; after each, every other
    // client checks everything added within the last W (true time): no false negative.
    let window = 3 * HOUR;
    let mut added: Vec<(u64, String)> = Vec::new();
    let mut next = 0u64;
    let step = 7 * 60_000;
    for round in 0..(6 * window / step) {
        let writer = &clients[(round as usize * 7 + 3) % clients.len()].1;
        let b = items(next..next + 40);
        next += 40;
        writer.insert_batch(&b).await.unwrap();
        let now = truth.now_ms();
        added.extend(b.into_iter().map(|x| (now, x)));
        for (_, reader) in &clients {
            let inside: Vec<&String> = added
                .iter()
                .filter(|(t, _)| now - t <= window)
                .map(|(_, x)| x)
                .collect();
            let hits = reader.contains_batch(&inside).await.unwrap();
            let missed = hits.iter().filter(|&&h| !h).count();
            assert_eq!(missed, 0, "round {round}: {missed} false negatives");
        }
        truth.advance(Duration::from_millis(step));
    }
    // Elements older than W + 3L (the forgetting bound with skew) are forgotten by all.
    let now = truth.now_ms();
    let old: Vec<&String> = added
        .iter()
        .filter(|(t, _)| now - t > window + 3 * HOUR)
        .map(|(_, x)| x)
        .collect();
    assert!(old.len() > 1000);
    for (_, reader) in &clients {
        let found = common::count_true(&reader.contains_batch(&old).await.unwrap());
        assert!(found <= fpr_bound(0.01, old.len()), "{found}");
    }
}

#[tokio::test]
async fn generation_keys_expire_by_themselves_and_a_lost_one_is_no_error() {
    let (_server, conn, _clock, f) = on_manual_clock("ttl", 2).await;
    f.insert_batch(&items(0..100)).await.unwrap();
    let c = f.current_generation();
    let key = f.generation_key(c, 0);
    // Every client computes the same absolute expiry: (c + G + 2)·L + L/2.
    let at: i64 = conn
        .query(redis::cmd("PEXPIRETIME").arg(&key))
        .await
        .unwrap();
    assert_eq!(at as u64, (c + 4) * HOUR + HOUR / 2);
    assert_eq!(at as u64, f.expires_at_ms(c));
    // The anchor has no expiry.
    let anchor_ttl: i64 = conn
        .query(redis::cmd("PTTL").arg(f.anchor_key(0)))
        .await
        .unwrap();
    assert_eq!(anchor_ttl, -1);

    // The current generation's key is lost (evicted, deleted by hand): no error, checks read
    // it as empty, adds re-create it with its expiry.
    let _: i64 = conn.query(redis::cmd("DEL").arg(&key)).await.unwrap();
    assert!(f
        .contains_batch(&items(0..100))
        .await
        .unwrap()
        .iter()
        .all(|&x| !x));
    assert!(f.insert(&"after").await.unwrap());
    assert!(f.contains(&"after").await.unwrap());
    let at2: i64 = conn
        .query(redis::cmd("PEXPIRETIME").arg(&key))
        .await
        .unwrap();
    assert_eq!(at2, at);

    // Real expiry: a filter with 100 ms generations on the real clock; its keys vanish by
    // themselves within (G + 2)·L + L/2 = 450 ms of the end of their generation.
    let p = WindowParams::new(Duration::from_millis(200), 2, 1_000, 0.01);
    let fast = TimeWindowRedisFilter::create(&conn, "fast", p)
        .await
        .unwrap();
    fast.insert_batch(&items(0..50)).await.unwrap();
    assert!(fast.contains(&items(7..8)[0]).await.unwrap());
    let pattern = "bloomkit:{fast:*:g*";
    let start = Instant::now();
    loop {
        let keys: Vec<String> = conn.query(redis::cmd("KEYS").arg(pattern)).await.unwrap();
        if keys.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "generation keys never expired: {keys:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!fast.contains(&items(7..8)[0]).await.unwrap());
    assert!(fast.insert(&"again").await.unwrap(), "the filter lives on");
}

/// The calls `INFO commandstats` counts for `command` (0 if none).
async fn calls(conn: &Connection, command: &str) -> u64 {
    common::command_stats(conn)
        .await
        .get(command)
        .map_or(0, |&(calls, _)| calls)
}

/// `command key`'s integer reply (`PTTL`, `PEXPIRETIME`).
async fn int(conn: &Connection, command: &str, key: &str) -> i64 {
    conn.query(redis::cmd(command).arg(key)).await.unwrap()
}

/// Whether every answer is `want`.
fn all(answers: Vec<bool>, want: bool) -> bool {
    answers.iter().all(|&x| x == want)
}

/// Deletes the filter through `f`; then `other`, another handle of it, gets `Gone` for an add
/// and a check, and no key is left (none re-created).
async fn assert_gone_after_delete(
    conn: &Connection,
    f: TimeWindowRedisFilter,
    other: &TimeWindowRedisFilter,
) {
    f.delete().await.unwrap();
    assert!(matches!(other.insert(&"x").await, Err(Error::Gone(_))));
    assert!(matches!(other.contains(&"x").await, Err(Error::Gone(_))));
    let keys: Vec<String> = conn.query(redis::cmd("KEYS").arg("*")).await.unwrap();
    assert!(keys.is_empty(), "{keys:?}");
}

/// On a standalone server an add is a transaction (`EXEC`, no script) that keeps every
/// guarantee of the script: the generation key gets the shared absolute expiry; once the
/// filter has a time to live, no generation key outlives the anchor, even one first written by
/// a handle that did not know; a handle of a deleted filter gets `Gone` and leaves no key.
#[tokio::test]
async fn adds_are_transactions_that_keep_the_scripts_guarantees() {
    let (_server, conn, _clock, f) = on_manual_clock("tx", 2).await;
    let _: () = conn
        .query(redis::cmd("CONFIG").arg("RESETSTAT"))
        .await
        .unwrap();
    let data = items(0..600);
    assert!(all(f.insert_batch(&data).await.unwrap(), true));
    assert!(all(f.insert_batch(&data).await.unwrap(), false));
    assert!(all(f.contains_batch(&data).await.unwrap(), true));
    assert!(
        calls(&conn, "exec").await >= 6,
        "3 groups of at most 256, twice"
    );
    assert_eq!(
        calls(&conn, "evalsha").await + calls(&conn, "eval").await,
        0
    );
    let c = f.current_generation();
    let at = int(&conn, "PEXPIRETIME", &f.generation_key(c, 0)).await;
    assert_eq!(at as u64, f.expires_at_ms(c));

    // The filter gets a time to live; a handle opened before adds into a new generation.
    let old = f
        .clone()
        .with_clock(Arc::new(ManualClock::new(hour_now() + HOUR)));
    f.expire(Duration::from_secs(600)).await.unwrap();
    assert!(all(old.insert_batch(&items(600..900)).await.unwrap(), true));
    let anchor = int(&conn, "PTTL", &f.anchor_key(0)).await;
    let ttl = int(&conn, "PTTL", &f.generation_key(c + 1, 0)).await;
    assert!(anchor > 0 && anchor <= 600_000, "{anchor}");
    assert!(
        ttl > 0 && ttl <= anchor,
        "generation key {ttl} ms, anchor {anchor} ms"
    );
    assert!(all(old.contains_batch(&items(0..900)).await.unwrap(), true));

    // Deleted under a writer that never read it: Gone, and the key its transaction wrote is
    // deleted again.
    let writer = TimeWindowRedisFilter::open(&conn, "tx").await.unwrap();
    assert_gone_after_delete(&conn, f, &writer).await;
}

#[tokio::test]
async fn different_window_parameters_are_refused_naming_both() {
    let (_server, conn) = common::start().await;
    let day = Duration::from_secs(86_400);
    TimeWindowRedisFilter::create(&conn, "w", WindowParams::new(30 * day, 30, 3_000, 0.01))
        .await
        .unwrap();
    // The same parameters: opens it.
    TimeWindowRedisFilter::create(&conn, "w", WindowParams::new(30 * day, 30, 3_000, 0.01))
        .await
        .unwrap();
    match TimeWindowRedisFilter::create(&conn, "w", WindowParams::new(7 * day, 7, 3_000, 0.01))
        .await
    {
        Err(e @ Error::WindowMismatch { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("30d in 30 generations of 1d"), "{msg}");
            assert!(msg.contains("7d in 7 generations of 1d"), "{msg}");
        }
        other => panic!("expected WindowMismatch, got {other:?}"),
    }
    match TimeWindowRedisFilter::create(&conn, "w", WindowParams::new(30 * day, 10, 3_000, 0.01))
        .await
    {
        Err(Error::WindowMismatch {
            stored, requested, ..
        }) => {
            assert!(stored.contains("30 generations") && requested.contains("10 generations"))
        }
        other => panic!("expected WindowMismatch, got {other:?}"),
    }
    // Bad parameters are typed errors, before anything is written.
    for bad in [
        WindowParams::new(Duration::ZERO, 3, 100, 0.01),
        WindowParams::new(day, 0, 100, 0.01),
        WindowParams::new(day, 10, 5, 0.01),
    ] {
        assert!(matches!(
            TimeWindowRedisFilter::create(&conn, "bad", bad).await,
            Err(Error::Core(bloomkit::Error::InvalidParameters(_)))
        ));
    }
    let n: i64 = conn
        .query(redis::cmd("EXISTS").arg(bloomkit_redis::keys::meta("bad")))
        .await
        .unwrap();
    assert_eq!(n, 0);
    // Another kind under the name: a typed error.
    assert!(matches!(
        bloomkit_redis::RedisFilter::open(&conn, "w").await,
        Err(Error::Core(bloomkit::Error::Incompatible(_)))
    ));
    // Deleted under a client: Gone, and nothing re-created.
    let f = TimeWindowRedisFilter::open(&conn, "w").await.unwrap();
    let g = f.clone();
    assert_gone_after_delete(&conn, f, &g).await;
}

#[tokio::test]
async fn a_check_costs_one_round_trip_whatever_the_number_of_generations() {
    let (server, admin) = common::start().await;
    for generations in [1u32, 4, 16] {
        let clock = Arc::new(ManualClock::new(hour_now()));
        let conn = connect(&server).await;
        let name = format!("rt{generations}");
        let mut p = params(generations);
        p.capacity = 1_000 * u64::from(generations);
        let f = TimeWindowRedisFilter::create(&conn, &name, p)
            .await
            .unwrap()
            .with_clock(clock.clone());
        // Fill every generation a check reads.
        for g in 0..=generations + 1 {
            f.insert_batch(&items(u64::from(g) * 1000..u64::from(g + 1) * 1000))
                .await
                .unwrap();
            clock.advance(Duration::from_millis(HOUR));
        }
        clock.set(clock.now_ms() - HOUR);
        let reader = TimeWindowRedisFilter::open(&conn, &name)
            .await
            .unwrap()
            .with_clock(clock.clone());
        let batch = items(0..1000);
        reader.contains_batch(&batch).await.unwrap(); // learns which generations exist
        let _: () = admin
            .query(redis::cmd("CONFIG").arg("RESETSTAT"))
            .await
            .unwrap();
        let before = conn.round_trips();
        let batches = 10u64;
        for _ in 0..batches {
            let hits = reader.contains_batch(&batch).await.unwrap();
            assert!(hits.iter().all(|&h| h));
        }
        // Client side: one request per batch, whatever G.
        assert_eq!(conn.round_trips() - before, batches, "G = {generations}");
        // Server side: only reads of existing generation keys and EXISTS, per batch: one
        // GETRANGE per existing generation key (a batch of 1,000 in generations of 1,000 has
        // its words close together, so each key is read as one byte range, not as 1,000
        // BITFIELD_RO fields), EXISTS of the anchor and of the one generation ahead (c + 1)
        // that no one has written.
        let calls: std::collections::HashMap<String, u64> = common::command_stats(&admin)
            .await
            .into_iter()
            .map(|(k, (calls, _))| (k, calls))
            .collect();
        let live = u64::from(generations) + 2; // c − G − 1 ..= c
        let segments = u64::from(reader.layout().segments());
        assert_eq!(
            calls.get("getrange"),
            Some(&(batches * segments * live)),
            "{calls:?}"
        );
        assert_eq!(calls.get("bitfield_ro"), None, "{calls:?}");
        assert_eq!(calls.get("exists"), Some(&(batches * 2)), "{calls:?}");
        let others: u64 = calls
            .iter()
            .filter(|(k, _)| !["getrange", "exists", "info"].contains(&k.as_str()))
            .filter(|(k, _)| !k.starts_with("config|"))
            .map(|(_, v)| v)
            .sum();
        assert_eq!(others, 0, "{calls:?}");
    }
}

#[tokio::test]
async fn window_filter_spreads_over_a_cluster_without_crossslot() {
    let cluster = Cluster::start();
    let conn = connect_cluster(&cluster).await;
    let clock = Arc::new(ManualClock::new(hour_now()));
    let mut p = params(3);
    p.max_segment_bits = 1 << 14; // several segments, over all nodes
    let f =
        TimeWindowRedisFilter::create_with(&conn, "cw", p, FilterOptions::random_key().unwrap())
            .await
            .unwrap()
            .with_clock(clock.clone());
    assert!(f.layout().segments() > 3);
    let data = items(0..6_000);
    for chunk in data.chunks(2_000) {
        f.insert_batch(chunk).await.unwrap();
        clock.advance(Duration::from_millis(HOUR));
    }
    assert!(f.contains_batch(&data).await.unwrap().iter().all(|&x| x));
    f.expire(Duration::from_secs(100)).await.unwrap();
    let key = f.generation_key(f.current_generation() - 1, 0);
    let node_ttl: Vec<i64> = cluster
        .nodes
        .iter()
        .map(|n| n.cli(&["PTTL", &key]).parse().unwrap_or(-2))
        .collect();
    assert!(
        node_ttl.iter().any(|&t| t > 0 && t <= 100_000),
        "{key}: {node_ttl:?}"
    );
    f.delete().await.unwrap();
}

/// The blocking time-window filter: adds, checks and counts without an async runtime, opened
/// by name by a second handle.
#[test]
fn blocking_time_window_filter_round_trip() {
    use bloomkit_redis::blocking::TimeWindowRedisFilter as Blocking;
    let (_server, c) = common::start_blocking();
    let f = Blocking::create(&c, "bw", params(4)).unwrap();
    assert_eq!(f.params().generations, 4);
    let data = items(0..2_000);
    assert!(common::count_true(&f.insert_batch(&data).unwrap()) > 1_950);
    assert!(f.insert("one").unwrap());
    assert!(!f.insert("one").unwrap());
    let g = Blocking::open(&c, "bw").unwrap();
    assert!(g.contains_batch(&data).unwrap().iter().all(|&x| x));
    assert!(g.contains("one").unwrap());
    let n = g.count().unwrap();
    assert!((1_900.0..2_100.0).contains(&n), "{n}");
    assert_eq!(g.info().unwrap().generations.len(), 1);
    g.clear().unwrap();
    assert!(!f.contains("one").unwrap());
    g.expire(Duration::from_secs(60)).unwrap();
    f.delete().unwrap();
    assert!(matches!(Blocking::open(&c, "bw"), Err(Error::NotFound(_))));
}

/// A generation key is only as long as its highest written byte: a batch check that reads it as
/// a byte range past its end reads zeros there, as field reads do, and answers as one element
/// at a time.
#[tokio::test]
async fn batch_checks_read_past_a_short_generation_key_as_zeros() {
    let (_server, conn) = common::start().await;
    let clock = Arc::new(ManualClock::new(hour_now()));
    let f = TimeWindowRedisFilter::create(&conn, "short", params(1))
        .await
        .unwrap()
        .with_clock(clock);
    let words = f.layout().segment_words();
    let low: Vec<String> = items(0..100_000)
        .into_iter()
        .filter(|k| f.probe(k).word < words / 4)
        .take(200)
        .collect();
    assert_eq!(low.len(), 200);
    f.insert_batch(&low).await.unwrap();
    let key = f.generation_key(f.current_generation(), 0);
    let len: u64 = conn.query(redis::cmd("STRLEN").arg(&key)).await.unwrap();
    assert!(len > 0 && len <= words * 2, "{len} bytes of {}", words * 8);
    let batch: Vec<String> = low.iter().cloned().chain(items(500_000..502_000)).collect();
    common::reset_stats(&conn).await;
    let hits = f.contains_batch(&batch).await.unwrap();
    // The elements spread over the whole segment were read as byte ranges, some past the
    // key's end.
    assert!(common::calls(&conn, "getrange").await >= 1);
    assert_eq!(common::calls(&conn, "bitfield_ro").await, 0);
    assert!(batch.iter().any(|k| f.probe(k).word * 8 >= len));
    assert!(hits[..200].iter().all(|&h| h), "no false negative");
    for (k, hit) in batch.iter().zip(&hits) {
        assert_eq!(*hit, f.contains(k).await.unwrap(), "{k}");
    }
}
