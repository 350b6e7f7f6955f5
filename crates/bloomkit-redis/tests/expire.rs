//! Expiry and purging of whole filters against a real redis-server (see common/mod.rs): every
//! key of every kind gets the time to live and vanishes, keys created later inherit it; a
//! filter with corrupt metadata is purged with the keys named after its id.

mod common;

use bloomkit_redis::{
    expire_filter, Connection, CountingRedisFilter, Error, RedisFilter, RedissonFilter,
    ScalableParams, ScalableRedisFilter, TimeWindowRedisFilter, WindowParams,
};
use std::time::{Duration, Instant};

async fn all_keys(conn: &Connection) -> Vec<String> {
    let mut keys: Vec<String> = conn.query(redis::cmd("KEYS").arg("*")).await.unwrap();
    keys.sort();
    keys
}

async fn pttl(conn: &Connection, key: &str) -> i64 {
    conn.query(redis::cmd("PTTL").arg(key)).await.unwrap()
}

#[tokio::test]
async fn every_key_of_every_kind_gets_the_ttl_and_vanishes() {
    let (_server, conn) = common::start().await;
    let small = common::segments_of(1 << 12);
    let plain = RedisFilter::create_with(&conn, "plain", 2_000, 0.01, small.clone())
        .await
        .unwrap();
    assert!(plain.layout().segments() > 1);
    let mut sp = ScalableParams::new(100, 0.01);
    sp.max_segment_bits = 1 << 12;
    let scalable = ScalableRedisFilter::create(&conn, "scalable", sp)
        .await
        .unwrap();
    let counting = CountingRedisFilter::create_with(&conn, "counting", 2_000, 0.01, small)
        .await
        .unwrap();
    let window = common::hour_window(&conn, "window", 1_000).await;
    let redisson = RedissonFilter::create(&conn, "redisson", 1_000, 0.01)
        .await
        .unwrap();
    let data: Vec<String> = (0..300).map(|i| format!("x{i}")).collect();
    plain.insert_batch(&data).await.unwrap();
    scalable.insert_batch(&data).await.unwrap(); // grows past its first layer
    counting.insert_batch(&data).await.unwrap();
    window.insert_batch(&data).await.unwrap();
    redisson.insert_batch(&data).await.unwrap();
    assert!(scalable.layers().len() > 1);
    let before = all_keys(&conn).await;
    assert!(before.len() > 15, "{before:?}");

    // A long time to live first: every key has it.
    let ttl = Duration::from_secs(600);
    plain.expire(ttl).await.unwrap();
    scalable.expire(ttl).await.unwrap();
    counting.expire(ttl).await.unwrap();
    window.expire(ttl).await.unwrap();
    assert!(expire_filter(&conn, "redisson", ttl).await.unwrap());
    for k in &before {
        let t = pttl(&conn, k).await;
        assert!(t > 0 && t <= 600_000, "{k}: {t}");
    }
    // Keys created afterwards inherit it: a new layer of the scalable filter...
    let more: Vec<String> = (300..3_000).map(|i| format!("x{i}")).collect();
    scalable.insert_batch(&more).await.unwrap();
    // ...and a new generation of the time-window filter never outlives its anchor.
    window.insert_batch(&more).await.unwrap();
    let after = all_keys(&conn).await;
    assert!(after.len() > before.len(), "the scalable filter grew");
    for k in &after {
        let t = pttl(&conn, k).await;
        assert!(t > 0 && t <= 600_000, "{k}: {t}");
    }

    // Then a short one, through the one call that takes any kind by name: all vanish.
    for name in ["plain", "scalable", "counting", "window", "redisson"] {
        assert!(expire_filter(&conn, name, Duration::from_millis(200))
            .await
            .unwrap());
    }
    let start = Instant::now();
    while !all_keys(&conn).await.is_empty() {
        assert!(start.elapsed() < Duration::from_secs(10), "keys left");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(matches!(plain.insert(&"x").await, Err(Error::Gone(_))));
    assert!(matches!(window.insert(&"x").await, Err(Error::Gone(_))));
    assert!(!expire_filter(&conn, "plain", Duration::from_secs(1))
        .await
        .unwrap());
}

#[tokio::test]
async fn expiring_a_recreated_filter_through_an_old_handle_is_refused() {
    let (_server, conn) = common::start().await;
    let old = RedisFilter::create(&conn, "f", 1_000, 0.01).await.unwrap();
    bloomkit_redis::delete_filter(&conn, "f").await.unwrap();
    let new = RedisFilter::create(&conn, "f", 1_000, 0.01).await.unwrap();
    assert!(matches!(
        old.expire(Duration::from_secs(5)).await,
        Err(Error::Gone(_))
    ));
    assert!(matches!(
        new.expire(Duration::ZERO).await,
        Err(Error::Core(bloomkit::Error::InvalidParameters(_)))
    ));
    for k in all_keys(&conn).await {
        assert_eq!(pttl(&conn, &k).await, -1, "{k} got an expiry");
    }
}

/// `purge_filter` deletes a filter whose metadata is too corrupt to open, with every key named
/// after its id (a time-window filter's anchors and generations, a counting filter's
/// segments), and leaves other filters' keys alone; without a valid id, or on a cluster, it
/// deletes the metadata and says why the rest may remain.
#[tokio::test]
async fn purge_removes_the_keys_of_a_filter_with_corrupt_metadata() {
    use bloomkit_redis::{purge_filter, Purge};
    let (_server, conn) = common::start().await;
    // A neighbour whose name looks like a glob of the others' keys, and must survive.
    let keep = RedisFilter::create(&conn, "w*", 1_000, 0.01).await.unwrap();
    keep.insert("x").await.unwrap();
    let kept = all_keys(&conn).await;
    let params = WindowParams::new(Duration::from_secs(3 * 3600), 3, 3_000, 0.01);
    let w = TimeWindowRedisFilter::create(&conn, "w", params)
        .await
        .unwrap();
    w.insert_batch(&["a", "b"]).await.unwrap();
    let c = CountingRedisFilter::create(&conn, "c", 1_000, 0.01)
        .await
        .unwrap();
    c.insert("a").await.unwrap();
    assert!(all_keys(&conn).await.len() > kept.len() + 3);
    for name in ["w", "c"] {
        let _: i64 = conn
            .query(
                redis::cmd("HSET")
                    .arg(bloomkit_redis::keys::meta(name))
                    .arg("segments")
                    .arg("99999999"),
            )
            .await
            .unwrap();
        assert!(matches!(
            bloomkit_redis::delete_filter(&conn, name).await,
            Err(Error::CorruptMetadata { .. })
        ));
        let purged = purge_filter(&conn, name).await.unwrap();
        assert!(
            matches!(purged, Purge::CorruptDeleted { keys } if keys >= 1),
            "{purged:?}"
        );
    }
    assert_eq!(all_keys(&conn).await, kept);
    assert!(keep.contains("x").await.unwrap());
    // A healthy filter is deleted whole; an absent one is nothing.
    assert_eq!(purge_filter(&conn, "w*").await.unwrap(), Purge::Deleted);
    assert_eq!(purge_filter(&conn, "w*").await.unwrap(), Purge::Nothing);
    // No valid id: the metadata goes, and the reason is given.
    let _: i64 = conn
        .query(
            redis::cmd("HSET")
                .arg(bloomkit_redis::keys::meta("old"))
                .arg("kind")
                .arg("register")
                .arg("version")
                .arg("1")
                .arg("segments")
                .arg("x"),
        )
        .await
        .unwrap();
    let _: () = conn
        .query(redis::cmd("SET").arg("bloomkit:{old:s0}").arg("z"))
        .await
        .unwrap();
    match purge_filter(&conn, "old").await.unwrap() {
        Purge::MetadataOnly { why } => assert!(why.contains("no valid filter id"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(all_keys(&conn).await, vec!["bloomkit:{old:s0}".to_string()]);
}
