//! Server faults and hostile state on real redis-server processes: a server killed mid-batch,
//! out of memory, evicting, paused, keys of another type under a filter's names, tampered
//! metadata.

mod common;

use bloomkit_redis::{
    purge_filter, Connection, CountingRedisFilter, Error, Options, Purge, RedisFilter,
    ScalableParams, ScalableRedisFilter, TimeWindowRedisFilter, WindowParams,
};
use common::{items, segments_of, Server};
use std::time::{Duration, Instant};

/// Keys matching `pattern` (KEYS: test servers hold a few keys).
/// A plain filter "f" for `n` elements at 1 %, in segments of `segment_bits`.
async fn plain(conn: &Connection, n: u64, segment_bits: u64) -> RedisFilter {
    RedisFilter::create_with(conn, "f", n, 0.01, segments_of(segment_bits))
        .await
        .unwrap()
}

async fn keys(conn: &Connection, pattern: &str) -> Vec<String> {
    conn.query(redis::cmd("KEYS").arg(pattern)).await.unwrap()
}

/// Sets `maxmemory` to the memory the server has allocated now plus `margin` bytes.
fn set_maxmemory(server: &Server, margin: i64) {
    let used: i64 = server
        .cli(&["MEMORY", "STATS"])
        .lines()
        .skip_while(|l| *l != "total.allocated")
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let limit = (used + margin).to_string();
    server.cli(&["CONFIG", "SET", "maxmemory", &limit]);
}

/// Retries `op` while it fails with a fault (the server restarting), for up to 10 s.
async fn after_restart<T: std::fmt::Debug, F: std::future::Future<Output = Result<T, Error>>>(
    mut op: impl FnMut() -> F,
) -> T {
    let start = Instant::now();
    loop {
        match op().await {
            Err(e) if e.is_fault() && start.elapsed() < Duration::from_secs(10) => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            r => return r.unwrap(),
        }
    }
}

#[tokio::test]
async fn keys_of_another_type_are_named_and_create_force_clears_a_bad_meta_key() {
    let (server, conn) = common::start().await;
    let f = plain(&conn, 20_000, 1 << 14).await;
    let c = CountingRedisFilter::create(&conn, "c", 1000, 0.01)
        .await
        .unwrap();
    let xs = items(0..2000);
    f.insert_batch(&xs).await.unwrap();
    // Someone replaces one segment of each with a list.
    let seg = keys(&conn, "bloomkit:{f:*:s1}").await.remove(0);
    let cseg = keys(&conn, "bloomkit:{c:*:s0}").await.remove(0);
    for k in [&seg, &cseg] {
        server.cli(&["DEL", k]);
        server.cli(&["RPUSH", k, "someone-elses"]);
    }
    let named_as = |r: Result<_, Error>, key: &str, held: &str| match r {
        Err(Error::WrongType(found)) => {
            assert_eq!(found, vec![(key.to_string(), held.to_string())]);
            let msg = Error::WrongType(found).to_string();
            assert!(msg.contains(key) && msg.contains("WRONGTYPE"), "{msg}");
        }
        r => panic!("expected WrongType naming {key}, got {r:?}"),
    };
    let named = |r, key: &str| named_as(r, key, "list");
    named(f.insert_batch(&xs).await.map(drop), &seg);
    named(f.insert_bulk(&xs).await.map(drop), &seg);
    named(f.contains_batch(&xs).await.map(drop), &seg);
    named(f.count().await.map(drop), &seg);
    named(c.insert_batch(&xs[..10]).await.map(drop), &cseg);
    named(c.contains_batch(&xs[..10]).await.map(drop), &cseg);
    named(c.remove_batch(&xs[..10]).await.map(drop), &cseg);
    // The list is untouched: nothing was written into it.
    assert_eq!(server.cli(&["LRANGE", &seg, "0", "-1"]), "someone-elses");
    // A metadata key that is not a hash: opening names it; purging (create --force) deletes it.
    server.cli(&["DEL", "bloomkit:{f}:meta"]);
    server.cli(&["SET", "bloomkit:{f}:meta", "x"]);
    named_as(
        RedisFilter::open(&conn, "f").await.map(drop),
        "bloomkit:{f}:meta",
        "string",
    );
    assert!(matches!(
        purge_filter(&conn, "f").await.unwrap(),
        Purge::MetadataOnly { .. }
    ));
    RedisFilter::create(&conn, "f", 100, 0.01).await.unwrap();
}

#[tokio::test]
async fn tampered_scalable_parameters_are_corrupt_metadata() {
    let (server, conn) = common::start().await;
    ScalableRedisFilter::create(&conn, "s", ScalableParams::new(1000, 0.01))
        .await
        .unwrap();
    let meta = "bloomkit:{s}:meta";
    for (field, value) in [
        ("growth", "0"),
        ("growth", "1"),
        ("tightening", "2"),
        ("tightening", "0"),
        ("max_segment_bits", "0"),
        ("max_segment_bits", "99999999999999"),
        ("fpp", "nan"),
        ("fpp", "1.5"),
    ] {
        let old = server.cli(&["HGET", meta, field]);
        server.cli(&["HSET", meta, field, value]);
        let r = ScalableRedisFilter::open(&conn, "s").await;
        assert!(
            matches!(&r, Err(Error::CorruptMetadata { .. })),
            "{field} = {value}: {r:?}"
        );
        server.cli(&["HSET", meta, field, &old]);
    }
    let s = ScalableRedisFilter::open(&conn, "s").await.unwrap();
    s.insert("ok").await.unwrap();
}

/// Tampered fields (a plain or counting filter's `fpp` outside (0, 1) among them) are corrupt
/// metadata naming the filter and saying what is wrong, at open.
#[tokio::test]
async fn tampered_plain_counting_and_window_metadata_is_corrupt() {
    let (server, conn) = common::start().await;
    RedisFilter::create(&conn, "p", 1000, 0.01).await.unwrap();
    CountingRedisFilter::create(&conn, "c", 1000, 0.01)
        .await
        .unwrap();
    let params = WindowParams::new(Duration::from_secs(3600), 4, 1000, 0.01);
    TimeWindowRedisFilter::create(&conn, "w", params)
        .await
        .unwrap();
    let mut cases = vec![
        ("c", "hashes", "0", "at least one hash"),
        ("c", "hashes", "1000", "more than the maximum"),
        ("c", "segment_counters", "99999999999999", "too large"),
        ("w", "max_segment_bits", "1", "segment size"),
        ("w", "generations", "4000000000", "generations"),
    ];
    for name in ["p", "c"] {
        for value in ["abc", "NaN", "0", "1", "-0.01", "1.5", "inf", ""] {
            cases.push((name, "fpp", value, "field fpp"));
        }
    }
    for (name, field, value, says) in cases {
        let meta = format!("bloomkit:{{{name}}}:meta");
        let old = server.cli(&["HGET", &meta, field]);
        server.cli(&["HSET", &meta, field, value]);
        let r = match name {
            "p" => RedisFilter::open(&conn, name).await.map(drop),
            "c" => CountingRedisFilter::open(&conn, name).await.map(drop),
            _ => TimeWindowRedisFilter::open(&conn, name).await.map(drop),
        };
        match r {
            Err(e @ Error::CorruptMetadata { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(says), "{field} = {value}: {msg}");
                assert!(msg.contains(&format!("{name:?}")), "{msg}");
            }
            r => panic!("{name}: {field} = {value:?}: {r:?}"),
        }
        server.cli(&["HSET", &meta, field, &old]);
    }
    RedisFilter::open(&conn, "p").await.unwrap();
    CountingRedisFilter::open(&conn, "c").await.unwrap();
    TimeWindowRedisFilter::open(&conn, "w").await.unwrap();
}

/// Runs `op` (a large batch) and SIGKILLs the server (AOF `always`: every acknowledged write is
/// on disk) while it runs; the operation either fails with a fault or succeeded, and then
/// `check` (after the restart) must confirm it took effect. The next operation succeeds.
async fn kill_during<F>(server: &mut Server, delay_ms: u64, op: F) -> Result<(), Error>
where
    F: std::future::Future<Output = Result<(), Error>> + Send + 'static,
{
    let task = tokio::spawn(op);
    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
    server.kill();
    let r = task.await.unwrap();
    server.restart();
    if let Err(e) = &r {
        assert!(e.is_fault(), "not a fault: {e:?}");
    }
    r
}

/// Runs `$filter.$add(&$part)` and kills the server meanwhile ([`kill_during`]): a fault
/// counts in `$faults`; a success must have written every element.
macro_rules! killed_add {
    ($server:ident, $delay:expr, $faults:ident, $part:ident, $filter:ident, $add:ident) => {{
        let (f2, p2) = ($filter.clone(), $part.clone());
        let op = async move { f2.$add(&p2).await.map(drop) };
        if kill_during(&mut $server, $delay, op).await.is_ok() {
            let present = after_restart(|| $filter.contains_batch(&$part)).await;
            assert!(
                present.iter().all(|&p| p),
                "{}.{} acknowledged elements it did not write",
                stringify!($filter),
                stringify!($add)
            );
        } else {
            $faults += 1;
        }
    }};
}

#[tokio::test]
async fn a_server_killed_mid_batch_never_acknowledges_unwritten_elements() {
    let mut server = Server::start_durable();
    let conn = common::connect_with_timeout(&server, 2000).await.unwrap();
    let f = plain(&conn, 400_000, 1 << 20).await;
    let c = CountingRedisFilter::create(&conn, "c", 200_000, 0.01)
        .await
        .unwrap();
    let w = common::hour_window(&conn, "w", 200_000).await;
    let xs = items(0..150_000);
    let mut faults = 0;
    for (round, delay) in [5u64, 40, 150].into_iter().enumerate() {
        let part = xs[round * 50_000..(round + 1) * 50_000].to_vec();
        killed_add!(server, delay, faults, part, f, insert_batch);
        killed_add!(server, delay, faults, part, f, insert_bulk);
        killed_add!(server, delay, faults, part, c, insert_batch);
        killed_add!(server, delay, faults, part, w, insert_batch);
        let (f2, p2) = (f.clone(), part.clone());
        let _ = kill_during(&mut server, delay, async move {
            f2.contains_batch(&p2).await.map(drop)
        })
        .await;
    }
    // The kills do land mid-batch (else this test would test nothing).
    assert!(faults > 0, "no kill interrupted a batch");
    // Every handle works again after the restarts.
    after_restart(|| f.insert("after")).await;
    after_restart(|| c.insert("after")).await;
    after_restart(|| w.insert("after")).await;
    assert!(f.contains("after").await.unwrap() && c.contains("after").await.unwrap());
}

#[tokio::test]
async fn out_of_memory_is_a_typed_error_with_no_partial_acknowledgement() {
    let (server, conn) = common::start().await;
    let f = RedisFilter::create(&conn, "big", 2_000_000, 0.01)
        .await
        .unwrap();
    let c = CountingRedisFilter::create(&conn, "c", 2_000_000, 0.01)
        .await
        .unwrap();
    set_maxmemory(&server, 512 << 10);
    server.cli(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    let xs = items(0..300_000);
    let oom = |r: Result<Vec<bool>, Error>| match r {
        Err(e @ Error::OutOfMemory(_)) => assert!(e.to_string().contains("out of memory")),
        r => panic!("expected OOM, got {:?}", r.map(|v| v.len())),
    };
    oom(f.insert_bulk(&xs).await);
    assert!(
        keys(&conn, "*tmp*").await.is_empty(),
        "a temporary key was left"
    );
    oom(f.insert_batch(&xs).await);
    oom(c.insert_batch(&xs).await);
    server.cli(&["CONFIG", "SET", "maxmemory", "0"]);
    // The filters work again and hold what a successful add writes.
    let r = f.insert_bulk(&xs[..1000]).await.unwrap();
    assert_eq!(r.len(), 1000);
    let found = f.contains_batch(&xs[..1000]).await.unwrap();
    assert!(found.iter().all(|&x| x));
}

#[tokio::test]
async fn an_evicted_segment_gives_gone_never_absent_answers() {
    let (server, conn) = common::start().await;
    let f = plain(&conn, 200_000, 1 << 18).await;
    let xs = items(0..100_000);
    f.insert_bulk(&xs).await.unwrap();
    let total = f.info().await.unwrap().segments as usize;
    // Memory runs short under allkeys-lru: Redis evicts keys, segments among them.
    server.cli(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
    set_maxmemory(&server, -(200 << 10));
    server.cli(&["SET", "trigger", "x"]); // a write makes Redis evict
    let segments = keys(&conn, "bloomkit:{f:*:s*}").await.len();
    assert!(
        segments < total,
        "nothing evicted: {segments} of {total} segments"
    );
    match f.contains_batch(&xs).await {
        Err(Error::Gone(name)) => assert_eq!(name, "f"),
        r => panic!("expected Gone, got {:?}", r.map(|v| v.len())),
    }
    let r = f.insert_batch(&xs).await;
    assert!(matches!(r, Err(Error::Gone(_))), "{:?}", r.map(|v| v.len()));
}

#[tokio::test]
async fn a_paused_server_times_out_and_a_timed_out_add_may_land_later() {
    let (server, _) = common::start().await;
    let conn = common::connect_with_timeout(&server, 400).await.unwrap();
    let f = RedisFilter::create(&conn, "f", 1000, 0.01).await.unwrap();
    f.insert("before").await.unwrap();
    server.cli(&["CLIENT", "PAUSE", "1500", "WRITE"]);
    let start = Instant::now();
    let r = f.insert("during").await;
    assert!(matches!(r, Err(Error::Timeout(_))), "{r:?}");
    assert!(start.elapsed() < Duration::from_millis(1200));
    // Other clients read on during a write pause; on this connection, later commands wait
    // behind the timed-out one until the server answers it.
    let other = common::connect(&server).await;
    let g = RedisFilter::open(&other, "f").await.unwrap();
    assert!(g.contains("before").await.unwrap());
    assert!(matches!(f.contains("before").await, Err(Error::Timeout(_))));
    // The timed-out add was sent: the server runs it when the pause ends (docs/REDIS.md,
    // section 9: an add that timed out may or may not have been written).
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert!(
        f.contains("during").await.unwrap(),
        "the timed-out add did not land"
    );
    f.insert("after").await.unwrap();
    assert!(f.contains("after").await.unwrap());
}

#[tokio::test]
async fn passwords_in_urls_never_appear_in_errors_or_debug_output() {
    let secret = "pw-Hx93-never-shown";
    let server = Server::start();
    server.cli(&["CONFIG", "SET", "requirepass", secret]);
    let port = server.port;
    let options = Options {
        timeout: Duration::from_millis(1500),
    };
    let good = format!("redis://default:{secret}@127.0.0.1:{port}/");
    let conn = Connection::open(&good, &options).await.unwrap();
    let f = RedisFilter::create(&conn, "f", 100, 0.01).await.unwrap();
    let mut shown = vec![format!("{conn:?}"), format!("{f:?}")];
    for url in [
        format!("redis://default:{secret}x@127.0.0.1:{port}/"), // WRONGPASS
        format!("redis://default:{secret}@127.0.0.1:1/"),       // unreachable
        format!("redis://default:{secret}@no-such-host.invalid:{port}/"),
        format!("redis://default:{secret}@[::1:{port}/"), // bad syntax
        format!("redis://default:{secret}@127.0.0.1:{port}x/"),
        format!("rediss://default:{secret}@127.0.0.1:{port}/"),
        format!("redis://default:{secret}@127.0.0.1:{port}/99999"),
    ] {
        let e = Connection::open(&url, &options).await.unwrap_err();
        shown.push(format!("{e} / {e:?}"));
        let e = Connection::open_cluster(&[&url], &options)
            .await
            .unwrap_err();
        shown.push(format!("{e} / {e:?}"));
    }
    for s in &shown {
        assert!(!s.contains(secret), "the password shows in: {s}");
    }
}

#[tokio::test]
async fn a_read_only_replica_answers_checks_and_refuses_writes_typed() {
    let (primary, conn) = common::start().await;
    let f = RedisFilter::create(&conn, "f", 1000, 0.01).await.unwrap();
    let c = CountingRedisFilter::create(&conn, "c", 1000, 0.01)
        .await
        .unwrap();
    f.insert("a").await.unwrap();
    c.insert("a").await.unwrap();
    let port = primary.port.to_string();
    let replica = Server::start_with(&["--save", "", "--replicaof", "127.0.0.1", &port]);
    let rconn = common::connect(&replica).await;
    let start = Instant::now();
    while replica.cli(&["DBSIZE"]) != primary.cli(&["DBSIZE"]) {
        assert!(start.elapsed() < Duration::from_secs(20), "no sync");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rf = RedisFilter::open(&rconn, "f").await.unwrap();
    let rc = CountingRedisFilter::open(&rconn, "c").await.unwrap();
    assert!(rf.contains("a").await.unwrap() && rc.contains("a").await.unwrap());
    let ro = |r: Result<(), Error>| assert!(matches!(r, Err(Error::ReadOnly(_))), "{r:?}");
    ro(rf.insert("b").await.map(drop));
    ro(rf.insert_bulk(&items(0..100)).await.map(drop));
    ro(rc.insert("b").await.map(drop));
    ro(rc.remove("a").await);
    ro(RedisFilter::create(&rconn, "g", 10, 0.1).await.map(drop));
    assert!(!f.contains("b").await.unwrap());
}

#[tokio::test]
async fn hostile_names_are_refused_or_kept_apart_and_deleted_whole() {
    let (_server, conn) = common::start().await;
    for bad in ["", "a{b", "a}b", "{", "}"] {
        let plain = RedisFilter::create(&conn, bad, 10, 0.1).await;
        let counting = CountingRedisFilter::create(&conn, bad, 10, 0.1).await;
        let scalable = ScalableRedisFilter::create(&conn, bad, ScalableParams::new(10, 0.1)).await;
        assert!(matches!(plain, Err(Error::InvalidName(_))), "{bad:?}");
        assert!(matches!(counting, Err(Error::InvalidName(_))), "{bad:?}");
        assert!(matches!(scalable, Err(Error::InvalidName(_))), "{bad:?}");
    }
    assert!(matches!(
        RedisFilter::open(&conn, "a{b").await,
        Err(Error::InvalidName(_))
    ));
    let long = "n".repeat(1 << 20);
    let names = [
        "a:b", "a%3Ab", "a%b", "%", "a b", "a\nb", "a\0b", ":meta", "x:meta", &long,
    ];
    let mut filters = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let f = RedisFilter::create(&conn, name, 1000, 0.01).await.unwrap();
        f.insert(&format!("only-in-{i}")).await.unwrap();
        filters.push(f);
    }
    for (i, name) in names.iter().enumerate() {
        let f = RedisFilter::open(&conn, name).await.unwrap();
        for j in 0..names.len() {
            let found = f.contains(&format!("only-in-{j}")).await.unwrap();
            assert_eq!(found, i == j, "{i} sees {j}'s element");
        }
    }
    for f in filters {
        f.delete().await.unwrap();
    }
    let left: i64 = conn.query(&redis::cmd("DBSIZE")).await.unwrap();
    assert_eq!(left, 0);
}
