//! bloomkit-redis against real redis-server processes (see common/mod.rs).

mod common;

use bloomkit_redis::{AddMethod, Connection, Error, FilterOptions, Options, RedisFilter};
use common::{connect, connect_cluster, fpr_bound, items, Cluster, Server};
use std::time::{Duration, Instant};

/// Segment `i`'s key name.
fn seg_key(f: &RedisFilter, i: u32) -> String {
    bloomkit_redis::keys::SegmentKeys::with_id(f.name(), f.id().unwrap()).segment(i)
}

#[tokio::test]
async fn create_open_add_check_count_clear_delete() {
    let (server, conn) = common::start().await;
    let n = 20_000u64;
    let f = RedisFilter::create(&conn, "users", n, 0.01).await.unwrap();
    let present = items(0..n);
    let new = f.insert_batch(&present).await.unwrap();
    // Nearly every element is new; a few may collide with earlier ones (FPR ≤ 1 %).
    assert!(new.iter().filter(|&&b| b).count() as f64 > 0.98 * n as f64);
    assert!(
        !f.insert(&present[0]).await.unwrap(),
        "re-adding is not new"
    );

    // A second client opens it by name alone and sees the same elements: no false negatives.
    let conn2 = connect(&server).await;
    let g = RedisFilter::open(&conn2, "users").await.unwrap();
    assert_eq!(g.layout(), f.layout());
    assert!(g.contains_batch(&present).await.unwrap().iter().all(|&b| b));
    assert!(g.contains(&present[123]).await.unwrap());

    // Measured FPR on absent elements.
    let absent = items(1_000_000..1_050_000);
    let fp = common::count_true(&g.contains_batch(&absent).await.unwrap());
    assert!(fp <= fpr_bound(0.01, absent.len()), "fp = {fp}");

    // Count estimate: within 3 % (its standard error here is < 1 %).
    let c = g.count().await.unwrap();
    assert!((c - n as f64).abs() < 0.03 * n as f64, "count {c}");
    let info = g.info().await.unwrap();
    assert_eq!(info.kind, "register");
    assert_eq!(info.scheme, "register64");
    assert_eq!(info.hashing, "xxh3");
    assert_eq!(info.capacity, n);
    assert_eq!(info.bits, f.layout().bits());
    // Full to capacity, the modelled FPR (an upper bound) is the target; the count estimate it
    // is computed from is within about 1 %, which moves it by a few percent.
    assert!(info.set_bits > 0 && info.estimated_fpp < 0.0105, "{info:?}");

    // Creating the same name with the same parameters opens it; different ones are refused.
    assert!(RedisFilter::create(&conn2, "users", n, 0.01).await.is_ok());
    match RedisFilter::create(&conn2, "users", 10 * n, 0.01).await {
        Err(Error::Core(bloomkit::Error::Incompatible(_))) => {}
        other => panic!("expected Incompatible, got {other:?}"),
    }
    common::assert_absent(&conn2, "nobody").await;
    assert!(matches!(
        RedisFilter::create(&conn2, "a{b}", 10, 0.01).await,
        Err(Error::InvalidName(_))
    ));
    assert!(matches!(
        RedisFilter::create(&conn2, "bad", 10, 1.5).await,
        Err(Error::Core(bloomkit::Error::InvalidFpp(_)))
    ));

    g.clear().await.unwrap();
    assert_eq!(
        f.contains_batch(&present)
            .await
            .unwrap()
            .iter()
            .filter(|&&b| b)
            .count(),
        0
    );
    f.delete().await.unwrap();
    common::assert_absent(&conn2, "users").await;
}

#[tokio::test]
async fn script_bitfield_and_bulk_write_identical_bits_in_redis_order() {
    let (server, conn) = common::start().await;
    // Small segments so that the 30,000 elements spread over several segment keys.
    let opts = |m| FilterOptions {
        max_segment_bits: 1 << 16,
        add_method: m,
        ..FilterOptions::default()
    };
    let mut fs = Vec::new();
    for (name, m) in [
        ("script", AddMethod::Script),
        ("bitfield", AddMethod::Bitfield),
        ("bulk", AddMethod::Script),
    ] {
        fs.push(
            RedisFilter::create_with(&conn, name, 30_000, 0.01, opts(m))
                .await
                .unwrap(),
        );
    }
    assert!(fs[0].layout().segments() > 4);
    let data = items(0..30_000);
    // Batches of 256 make at most one command per segment, so the order in which the server
    // runs them cannot change which elements count as new (different segments share no word).
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for chunk in data.chunks(256) {
        a.extend(fs[0].insert_batch(chunk).await.unwrap());
        b.extend(fs[1].insert_batch(chunk).await.unwrap());
    }
    assert!(a == b, "both methods report the same new elements");
    assert!(a.iter().filter(|&&x| x).count() > 29_000);
    fs[2].insert_bulk(&data[..10_000]).await.unwrap();
    fs[2].insert_bulk(&data[10_000..]).await.unwrap();
    let raw = redis::Client::open(server.url()).unwrap();
    for s in 0..fs[0].layout().segments() {
        let get = |f: &RedisFilter| -> Vec<u8> {
            redis::cmd("GET")
                .arg(seg_key(f, s))
                .query(&mut raw.get_connection().unwrap())
                .unwrap()
        };
        let (x, y, z) = (get(&fs[0]), get(&fs[1]), get(&fs[2]));
        assert!(!x.is_empty());
        // Lazily grown strings may differ in trailing zero bytes only.
        let trim = |v: Vec<u8>| {
            let end = v.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            v[..end].to_vec()
        };
        let (x, y, z) = (trim(x), trim(y), trim(z));
        assert_eq!(x, y, "segment {s}");
        assert_eq!(x, z, "segment {s}");
    }
    // No temporary merge keys are left behind.
    let tmp: Vec<String> = redis::cmd("KEYS")
        .arg("*:tmp:*")
        .query(&mut raw.get_connection().unwrap())
        .unwrap();
    assert!(tmp.is_empty(), "{tmp:?}");
    // Bit order: the element's word, read as 8 big-endian bytes, contains its mask, and every
    // bit offset of the mask reads 1 with GETBIT.
    let p = fs[0].probe(&data[7]);
    let key = seg_key(&fs[0], p.segment);
    let mut c = raw.get_connection().unwrap();
    let word: Vec<u8> = redis::cmd("GETRANGE")
        .arg(&key)
        .arg(p.byte_offset())
        .arg(p.byte_offset() + 7)
        .query(&mut c)
        .unwrap();
    let w = u64::from_be_bytes(word.try_into().unwrap());
    assert_eq!(w & p.mask, p.mask);
    for off in p.bit_offsets() {
        let bit: u8 = redis::cmd("GETBIT")
            .arg(&key)
            .arg(off)
            .query(&mut c)
            .unwrap();
        assert_eq!(bit, 1);
    }
    let found = fs[2].contains_batch(&data).await.unwrap();
    assert!(found.iter().all(|&x| x));
}

#[tokio::test]
async fn concurrent_clients_lose_nothing() {
    let (server, conn) = common::start().await;
    RedisFilter::create(&conn, "shared", 40_000, 0.01)
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for t in 0..4u64 {
        let url = server.url();
        tasks.push(tokio::spawn(async move {
            let c = Connection::open(&url, &Options::default()).await.unwrap();
            let f = RedisFilter::open(&c, "shared").await.unwrap();
            // Interleaved batches: all four clients write the same words at the same time.
            let mine: Vec<String> = items(0..40_000)
                .into_iter()
                .skip(t as usize)
                .step_by(4)
                .collect();
            for chunk in mine.chunks(500) {
                f.insert_batch(chunk).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let f = RedisFilter::open(&conn, "shared").await.unwrap();
    let all = items(0..40_000);
    let missing = f
        .contains_batch(&all)
        .await
        .unwrap()
        .iter()
        .filter(|&&b| !b)
        .count();
    assert_eq!(missing, 0, "false negatives after concurrent adds");
}

#[tokio::test]
async fn redisson_golden_values_and_interop() {
    use bloomkit_redis::RedissonFilter;
    let (server, conn) = common::start().await;
    let mut raw = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();

    // Create as Redisson's tryInit(100, 0.01) would: size 958, 7 hashes (vectors.txt).
    let f = RedissonFilter::create(&conn, "bf", 100, 0.01)
        .await
        .unwrap();
    let cfg: std::collections::HashMap<String, String> = redis::cmd("HGETALL")
        .arg("{bf}:config")
        .query(&mut raw)
        .unwrap();
    assert_eq!(cfg["size"], "958");
    assert_eq!(cfg["hashIterations"], "7");
    assert_eq!(cfg["expectedInsertions"], "100");
    assert_eq!(cfg["falseProbability"], "0.01");
    assert!(f.insert("hello").await.unwrap());
    for i in [635u64, 186, 859, 410, 125, 634, 349] {
        let b: u8 = redis::cmd("GETBIT")
            .arg("bf")
            .arg(i)
            .query(&mut raw)
            .unwrap();
        assert_eq!(b, 1, "bit {i}");
    }
    let ones: u64 = redis::cmd("BITCOUNT").arg("bf").query(&mut raw).unwrap();
    assert_eq!(ones, 7);
    assert!(f.contains("hello").await.unwrap());
    assert_eq!(f.count().await.unwrap(), 1);

    // A filter "created by Redisson": config + the bits its SETBITs leave for "hello" and
    // "world" in tryInit(100, 0.01) (golden indexes from Redisson, vectors.txt).
    let _: () = redis::cmd("HSET")
        .arg("{j}:config")
        .arg(&["size", "958", "hashIterations", "7"])
        .arg(&["expectedInsertions", "100", "falseProbability", "0.01"])
        .query(&mut raw)
        .unwrap();
    for i in [
        635u64, 186, 859, 410, 125, 634, 349, 93, 567, 698, 214, 345, 819, 950,
    ] {
        let _: u8 = redis::cmd("SETBIT")
            .arg("j")
            .arg(i)
            .arg(1)
            .query(&mut raw)
            .unwrap();
    }
    let j = RedissonFilter::open(&conn, "j").await.unwrap();
    assert_eq!(j.spec().bits(), 958);
    assert!(j.contains("hello").await.unwrap());
    assert!(j.contains("world").await.unwrap());
    assert!(!j.insert("world").await.unwrap(), "already there");
    assert!(!j.contains("x").await.unwrap() || !j.contains("y").await.unwrap());
    // tryInit(1000, 0.03) with an existing (100, 0.01) config is refused with a typed error.
    assert!(matches!(
        RedissonFilter::create(&conn, "j", 1000, 0.03).await,
        Err(Error::Core(bloomkit::Error::Incompatible(_)))
    ));
    // A different golden set: tryInit(1000, 0.03) gives size 7298, k 5.
    let g = RedissonFilter::create(&conn, "g", 1000, 0.03)
        .await
        .unwrap();
    g.insert("hello").await.unwrap();
    for i in [6595u64, 980, 1089, 2772, 2881] {
        let b: u8 = redis::cmd("GETBIT")
            .arg("g")
            .arg(i)
            .query(&mut raw)
            .unwrap();
        assert_eq!(b, 1, "bit {i}");
    }
    // Corrupt config is a typed error, not a panic.
    let _: () = redis::cmd("HSET")
        .arg("{c}:config")
        .arg(&["size", "0", "hashIterations", "7"])
        .query(&mut raw)
        .unwrap();
    assert!(matches!(
        RedissonFilter::open(&conn, "c").await,
        Err(Error::CorruptMetadata { .. })
    ));
}

#[tokio::test]
async fn killed_server_gives_typed_errors_then_reconnects() {
    let mut server = Server::start();
    let conn = common::connect_with_timeout(&server, 1500).await.unwrap();
    let f = RedisFilter::create(&conn, "f", 1000, 0.01).await.unwrap();
    f.insert("before").await.unwrap();
    server.kill();
    for _ in 0..3 {
        let start = Instant::now();
        let r = f.contains("before").await;
        assert!(
            matches!(&r, Err(e) if e.is_fault()),
            "expected a connection fault, got {r:?}"
        );
        // Never a hang past the timeout (plus scheduling slack).
        assert!(start.elapsed() < Duration::from_millis(3000));
    }
    // Back, but empty (no persistence): the same handle reconnects and finds its filter gone,
    // a typed error, and writes nothing (no key is created).
    server.restart();
    let start = Instant::now();
    loop {
        match f.insert("after").await {
            Err(Error::Gone(_)) => break,
            Err(e) => {
                assert!(e.is_fault(), "{e:?}");
                assert!(start.elapsed() < Duration::from_secs(10), "no reconnect");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Ok(_) => panic!("wrote into a filter that is gone"),
        }
    }
    let dbsize: i64 = conn.query(&redis::cmd("DBSIZE")).await.unwrap();
    assert_eq!(dbsize, 0);
    let f = RedisFilter::create(&conn, "f", 1000, 0.01).await.unwrap();
    f.insert("after").await.unwrap();
    assert!(f.contains("after").await.unwrap());
    // A fresh connection to a dead port fails with a typed error within the timeout.
    server.kill();
    let start = Instant::now();
    let r = common::connect_with_timeout(&server, 1500).await;
    assert!(matches!(&r, Err(e) if e.is_fault()), "{r:?}");
    assert!(start.elapsed() < Duration::from_millis(3000));
}

#[tokio::test]
async fn acknowledged_adds_survive_sigkill_with_aof_always() {
    let mut server = Server::start_durable();
    let conn = common::connect_with_timeout(&server, 1000).await.unwrap();
    let f = RedisFilter::create(&conn, "durable", 200_000, 0.01)
        .await
        .unwrap();
    let writer = {
        let f = f.clone();
        tokio::spawn(async move {
            let mut acked = Vec::new();
            for b in 0..10_000u64 {
                let batch = items(b * 50..(b + 1) * 50);
                match f.insert_batch(&batch).await {
                    Ok(_) => acked.extend(batch),
                    Err(e) => {
                        assert!(e.is_fault(), "{e:?}");
                        break;
                    }
                }
            }
            acked
        })
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    server.kill(); // SIGKILL mid-stream
    let acked = writer.await.unwrap();
    assert!(
        acked.len() >= 50,
        "the writer made progress before the kill"
    );
    server.restart();
    let conn = common::connect_with_timeout(&server, 1000).await.unwrap();
    let g = RedisFilter::open(&conn, "durable").await.unwrap();
    let lost = g
        .contains_batch(&acked)
        .await
        .unwrap()
        .iter()
        .filter(|&&b| !b)
        .count();
    assert_eq!(lost, 0, "{lost} of {} acknowledged adds lost", acked.len());
}

#[tokio::test]
async fn cluster_spreads_segments_without_crossslot() {
    let cluster = Cluster::start();
    let conn = connect_cluster(&cluster).await;
    let opts = common::segments_of(1 << 14);
    let f = RedisFilter::create_with(&conn, "c", 20_000, 0.01, opts.clone())
        .await
        .unwrap();
    assert!(f.layout().segments() >= 16);
    let data = items(0..20_000);
    f.insert_batch(&data[..10_000]).await.unwrap();
    f.insert_bulk(&data[10_000..]).await.unwrap();
    let conn2 = connect_cluster(&cluster).await;
    let g = RedisFilter::open(&conn2, "c").await.unwrap();
    assert!(g.contains_batch(&data).await.unwrap().iter().all(|&b| b));
    let fp = g
        .contains_batch(&items(500_000..520_000))
        .await
        .unwrap()
        .iter()
        .filter(|&&b| b)
        .count();
    assert!(fp <= fpr_bound(0.01, 20_000), "fp {fp}");
    // Every node holds some of the segments.
    for node in &cluster.nodes {
        let n: u64 = node.cli(&["DBSIZE"]).parse().unwrap();
        assert!(n > 0, "node {} holds no segment", node.port);
    }
    let c = g.count().await.unwrap();
    assert!((c - 20_000.0).abs() < 600.0, "{c}");
    g.clear().await.unwrap();
    assert!(!g.contains(&data[0]).await.unwrap());
}

/// A cluster master killed mid-use: operations that touch its segments fail with a typed fault
/// within the timeout (never a hang); when it comes back (same port and `nodes.conf`, its data
/// lost: no persistence) the same handles reconnect, and re-added elements are found.
#[tokio::test]
async fn killed_cluster_node_gives_typed_errors_then_reconnects() {
    let mut cluster = Cluster::start();
    let urls = cluster.urls();
    let url_refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let options = Options {
        timeout: Duration::from_millis(1500),
    };
    let conn = Connection::open_cluster(&url_refs, &options).await.unwrap();
    let opts = common::segments_of(1 << 12);
    let f = RedisFilter::create_with(&conn, "cf", 5_000, 0.01, opts)
        .await
        .unwrap();
    assert!(f.layout().segments() >= 6);
    let data = items(0..5_000);
    f.insert_batch(&data).await.unwrap();
    // The metadata key may live on any node; kill one that holds segments but not the
    // metadata, so that the failure is in the data path.
    let victim = (0..3)
        .find(|&i| {
            let node = &cluster.nodes[i];
            let n: u64 = node.cli(&["DBSIZE"]).parse().unwrap();
            n > 0 && node.cli(&["EXISTS", "bloomkit:{cf}:meta"]) != "1"
        })
        .expect("a node with segments and without the metadata");
    cluster.nodes[victim].kill();
    for _ in 0..2 {
        let start = Instant::now();
        let r = f.contains_batch(&data).await;
        assert!(
            matches!(&r, Err(e) if e.is_fault()),
            "expected a fault, got {:?}",
            r.map(|v| v.len())
        );
        assert!(
            start.elapsed() < Duration::from_millis(4000),
            "{:?}",
            start.elapsed()
        );
    }
    // The node comes back empty (no persistence): once reconnected, the client finds the
    // segments it held gone, a typed error, and creates none of them again.
    cluster.nodes[victim].restart();
    let start = Instant::now();
    loop {
        match f.insert_batch(&data).await {
            Err(Error::Gone(_)) => break,
            Err(e) => {
                assert!(e.is_fault(), "{e:?}");
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "no reconnect: {e:?}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Ok(_) => panic!("wrote into segments that are gone"),
        }
    }
    assert_eq!(cluster.nodes[victim].cli(&["DBSIZE"]), "0");
}

#[test]
fn blocking_api_round_trip() {
    use bloomkit_redis::blocking::{BlockingConnection, RedisFilter, RedissonFilter};
    let server = Server::start();
    let f = RedisFilter::create(&server.url(), "b", 5_000, 0.01, &Options::default()).unwrap();
    let data = items(0..5_000);
    f.insert_batch(&data).unwrap();
    let c = BlockingConnection::open(&server.url(), &Options::default()).unwrap();
    let g = RedisFilter::open(&c, "b").unwrap();
    assert!(g.contains_batch(&data).unwrap().iter().all(|&b| b));
    assert!(g.insert("x").unwrap());
    assert!(g.contains("x").unwrap());
    assert!(g.count().unwrap() > 4_800.0);
    let r = RedissonFilter::create(&c, "r", 100, 0.01).unwrap();
    assert!(r.insert("hello").unwrap());
    assert!(RedissonFilter::open(&c, "r")
        .unwrap()
        .contains("hello")
        .unwrap());
    g.delete().unwrap();
}

#[tokio::test]
async fn scalable_filter_grows_consistently_under_concurrency() {
    use bloomkit_redis::{ScalableParams, ScalableRedisFilter};
    let (server, conn) = common::start().await;
    let params = ScalableParams::new(2_000, 0.01);
    let f = ScalableRedisFilter::create(&conn, "grow", params)
        .await
        .unwrap();
    let n = 30_000u64;
    let mut tasks = Vec::new();
    for t in 0..3u64 {
        let url = server.url();
        tasks.push(tokio::spawn(async move {
            let c = Connection::open(&url, &Options::default()).await.unwrap();
            let f = ScalableRedisFilter::open(&c, "grow").await.unwrap();
            let mine: Vec<String> = items(0..n)
                .into_iter()
                .skip(t as usize)
                .step_by(3)
                .collect();
            for chunk in mine.chunks(700) {
                f.insert_batch(chunk).await.unwrap();
            }
            f.layers()
        }));
    }
    let mut views = Vec::new();
    for t in tasks {
        views.push(t.await.unwrap());
    }
    f.contains(&"x").await.unwrap(); // reloads the layer list
    let layers = f.layers();
    // 2,000 + 4,000 + 8,000 + 16,000 = 30,000: four layers, perhaps a fifth if false positives
    // made some elements look present (then fewer are reserved, not more).
    assert!((4..=5).contains(&layers.len()), "{} layers", layers.len());
    // Every client saw a prefix of the same layer list.
    for v in &views {
        assert_eq!(v[..], layers[..v.len()]);
    }
    // No layer was reserved beyond its capacity (zero overfill) and all but the last are full.
    let fills = f.fills().await.unwrap();
    for (j, (fill, layer)) in fills.iter().zip(&layers).enumerate() {
        assert!(
            *fill <= layer.capacity,
            "layer {j}: {fill} > {}",
            layer.capacity
        );
        if j + 1 < layers.len() {
            assert_eq!(*fill, layer.capacity, "layer {j} not full");
        }
    }
    assert!(fills.iter().sum::<u64>() <= n);
    // No false negatives.
    let all = items(0..n);
    assert!(f.contains_batch(&all).await.unwrap().iter().all(|&b| b));
    // Compound FPR ≤ Σ p(1-r)r^j < p, measured with the 4-sd bound of `fpr_bound`.
    let absent = items(2_000_000..2_050_000);
    let fp = common::count_true(&f.contains_batch(&absent).await.unwrap());
    assert!(f.fpp_bound() < 0.01);
    assert!(fp <= fpr_bound(f.fpp_bound(), absent.len()), "fp {fp}");
    let c = f.count().await.unwrap();
    assert!((c - n as f64).abs() < 0.05 * n as f64, "count {c}");
    // Re-creating with other parameters is a typed error.
    assert!(matches!(
        ScalableRedisFilter::create(&conn, "grow", ScalableParams::new(10, 0.01)).await,
        Err(Error::Core(bloomkit::Error::Incompatible(_)))
    ));
    f.delete().await.unwrap();
    common::assert_absent(&conn, "grow").await;
}

#[tokio::test]
async fn large_segments_are_grown_in_steps_and_hashing_mismatch_is_typed() {
    let (_server, conn) = common::start().await;
    // With 2^32-bit segments allowed, a 20,000,000-element filter is one ~34 MB segment, larger
    // than the 16 MiB step, so creation pre-grows it in 3 steps.
    let opts = common::segments_of(1 << 32);
    let big = RedisFilter::create_with(&conn, "big", 20_000_000, 0.01, opts.clone())
        .await
        .unwrap();
    assert_eq!(big.layout().segments(), 1);
    let bytes = big.layout().segment_words() * 8;
    assert!(bytes > 2 * bloomkit_redis::segments::GROW_STEP_BYTES);
    let len: u64 = conn
        .query(redis::cmd("STRLEN").arg(seg_key(&big, 0)))
        .await
        .unwrap();
    assert_eq!(len, bytes, "pre-grown to the full segment");
    big.insert("x").await.unwrap();
    assert!(big.contains("x").await.unwrap());
    // Growing again (clear) keeps working; the bits are gone.
    big.clear().await.unwrap();
    assert!(!big.contains("x").await.unwrap());
    // A client that insists on another hash function gets a typed error.
    let r = RedisFilter::open_with(&conn, "big", bloomkit::Hashing::Murmur3).await;
    assert!(
        matches!(r, Err(Error::Core(bloomkit::Error::Incompatible(_)))),
        "{r:?}"
    );
    big.delete().await.unwrap();
}

/// Every key in the server's database 0.
async fn all_keys(conn: &Connection) -> Vec<String> {
    let mut k: Vec<String> = conn.query(redis::cmd("KEYS").arg("*")).await.unwrap();
    k.sort();
    k
}

#[tokio::test]
async fn writers_of_a_recreated_filter_get_gone_and_write_nothing_into_the_new_one() {
    use bloomkit_redis::{ScalableParams, ScalableRedisFilter};
    let (server, conn) = common::start().await;
    let f = RedisFilter::create(&conn, "g", 200_000, 0.01)
        .await
        .unwrap();
    let s = ScalableRedisFilter::create(&conn, "sg", ScalableParams::new(500, 0.01))
        .await
        .unwrap();
    // Four writers, one per write path, each on its own connection, adding until they fail.
    let mut writers = Vec::new();
    for path in 0..4u64 {
        let url = server.url();
        writers.push(tokio::spawn(async move {
            let c = Connection::open(&url, &Options::default()).await.unwrap();
            let mut plain = RedisFilter::open(&c, "g").await.unwrap();
            if path == 1 {
                plain.set_add_method(AddMethod::Script);
            }
            let scalable = ScalableRedisFilter::open(&c, "sg").await.unwrap();
            for i in 0.. {
                let batch = items(path * 10_000_000 + i * 300..path * 10_000_000 + i * 300 + 300);
                let r = match path {
                    0 | 1 => plain.insert_batch(&batch).await.map(|_| ()),
                    2 => plain.insert_bulk(&batch).await.map(|_| ()),
                    _ => scalable.insert_batch(&batch).await.map(|_| ()),
                };
                if let Err(e) = r {
                    return e;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            unreachable!()
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while f.count().await.unwrap() < 1_500.0 || s.count().await.unwrap() < 600.0 {
        assert!(Instant::now() < deadline, "writers made no progress");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Another client deletes both and re-creates them with other parameters.
    let c2 = connect(&server).await;
    bloomkit_redis::delete_filter(&c2, "g").await.unwrap();
    bloomkit_redis::delete_filter(&c2, "sg").await.unwrap();
    let g2 = RedisFilter::create(&c2, "g", 5_000, 0.001).await.unwrap();
    let s2 = ScalableRedisFilter::create(&c2, "sg", ScalableParams::new(800, 0.001))
        .await
        .unwrap();
    for w in writers {
        let e = w.await.unwrap();
        assert!(
            matches!(e, Error::Gone(ref n) if n == "g" || n == "sg"),
            "{e:?}"
        );
    }
    assert_eq!(
        g2.info().await.unwrap().set_bits,
        0,
        "no bit in the new filter"
    );
    assert_eq!(
        s2.info().await.unwrap().set_bits,
        0,
        "no bit in the new filter"
    );
    // Only the new filters' keys exist: no orphan of the old ones (their ids are gone).
    let (id, sid) = (g2.id().unwrap(), s2.id().unwrap());
    for k in all_keys(&conn).await {
        assert!(
            k.ends_with(":meta") || k.contains(id) || k.contains(sid),
            "orphan key {k}"
        );
    }
    // The old handles report it too, for reads as well as writes.
    assert!(matches!(f.contains("x").await, Err(Error::Gone(_))));
    assert!(matches!(s.contains("x").await, Err(Error::Gone(_))));
    assert!(matches!(f.info().await, Err(Error::Gone(_))));
    // Deleting both leaves nothing.
    g2.delete().await.unwrap();
    s2.delete().await.unwrap();
    assert_eq!(all_keys(&conn).await, Vec::<String>::new());
}

#[tokio::test]
async fn filters_of_layout_1_stay_readable_and_writable() {
    let (_server, conn) = common::start().await;
    // A filter as layout 1 stored it: no id, segments named `bloomkit:{N:s<i>}`.
    let layout =
        bloomkit::probe::register::RegisterLayout::for_capacity(1000, 0.01, 1 << 27).unwrap();
    let _: () = conn
        .query(
            redis::cmd("HSET")
                .arg("bloomkit:{old}:meta")
                .arg(&["kind", "register", "version", "1", "scheme", "register64"])
                .arg(&["hashing", "xxh3", "capacity", "1000", "fpp", "0.01"])
                .arg("segments")
                .arg(layout.segments())
                .arg("segment_words")
                .arg(layout.segment_words())
                .arg("hashes")
                .arg(layout.hashes()),
        )
        .await
        .unwrap();
    let f = RedisFilter::open(&conn, "old").await.unwrap();
    assert_eq!(f.id(), None);
    let p = f.probe("before");
    for off in p.bit_offsets() {
        let _: i64 = conn
            .query(
                redis::cmd("SETBIT")
                    .arg("bloomkit:{old:s0}")
                    .arg(off)
                    .arg(1),
            )
            .await
            .unwrap();
    }
    assert!(f.contains("before").await.unwrap());
    assert!(f.insert("after").await.unwrap());
    assert!(f.insert_bulk(&["bulk"]).await.unwrap()[0]);
    let found = f.contains_batch(&["after", "bulk"]).await.unwrap();
    assert!(found.iter().all(|&x| x));
    assert_eq!(
        all_keys(&conn).await,
        ["bloomkit:{old:s0}", "bloomkit:{old}:meta"]
    );
    f.delete().await.unwrap();
    assert!(all_keys(&conn).await.is_empty());
}

#[tokio::test]
async fn corrupt_metadata_is_refused_without_allocating_and_keys_are_stored_or_required() {
    let (_server, conn) = common::start().await;
    RedisFilter::create(&conn, "m", 1000, 0.01).await.unwrap();
    let _: i64 = conn
        .query(
            redis::cmd("HSET")
                .arg("bloomkit:{m}:meta")
                .arg("segments")
                .arg(100_000_000u64),
        )
        .await
        .unwrap();
    assert!(matches!(
        RedisFilter::open(&conn, "m").await,
        Err(Error::CorruptMetadata { .. })
    ));
    // A random key stored in the metadata: reopened by name alone.
    let f = RedisFilter::create_with(&conn, "k", 1000, 0.01, FilterOptions::random_key().unwrap())
        .await
        .unwrap();
    f.insert("x").await.unwrap();
    let g = RedisFilter::open(&conn, "k").await.unwrap();
    assert!(g.contains("x").await.unwrap());
    assert!(g.info().await.unwrap().hashing.starts_with("siphash13:"));
    // A key not stored: a typed error says it is needed.
    let opts = FilterOptions {
        hashing: bloomkit::Hashing::siphash([7; 16]),
        ..FilterOptions::default()
    };
    RedisFilter::create_with(&conn, "nk", 1000, 0.01, opts)
        .await
        .unwrap();
    assert!(matches!(
        RedisFilter::open(&conn, "nk").await,
        Err(Error::KeyRequired { .. })
    ));
}

#[tokio::test]
async fn redisson_writer_of_a_recreated_filter_gets_gone_and_recreates_nothing() {
    use bloomkit_redis::RedissonFilter;
    let (server, conn) = common::start().await;
    let f = RedissonFilter::create(&conn, "rj", 1000, 0.01)
        .await
        .unwrap();
    f.insert("a").await.unwrap();
    // Re-created with the same parameters by another client: a new id.
    let c2 = connect(&server).await;
    bloomkit_redis::delete_filter(&c2, "rj").await.unwrap();
    let g = RedissonFilter::create(&c2, "rj", 1000, 0.01).await.unwrap();
    assert!(matches!(f.insert("b").await, Err(Error::Gone(_))));
    assert!(matches!(f.contains("a").await, Err(Error::Gone(_))));
    assert_eq!(
        g.count().await.unwrap(),
        0,
        "nothing written into the new filter"
    );
    // Deleted: the old handle does not re-create the bitmap.
    g.delete().await.unwrap();
    assert!(matches!(f.insert("c").await, Err(Error::Gone(_))));
    assert_eq!(all_keys(&conn).await, Vec::<String>::new());
}

/// The two ways a batch check reads a segment (byte ranges where the batch's words lie close
/// together, `BITFIELD_RO` fields elsewhere) give the same answers; the command counts show
/// which one ran.
#[tokio::test]
async fn batch_checks_by_byte_ranges_answer_as_field_reads() {
    let (server, conn) = common::start().await;
    let admin = connect(&server).await;
    // 20,000 elements at 1 %: a segment of about 37 KB, so a batch of 10,000 has its words a
    // few bytes apart (ranges) while one element alone is a field.
    let f = RedisFilter::create(&conn, "ranges", 20_000, 0.01)
        .await
        .unwrap();
    for b in items(0..10_000).chunks(1000) {
        f.insert_batch(b).await.unwrap();
    }
    let mixed = items(5_000..15_000); // the first half present, the second absent
    common::reset_stats(&admin).await;
    let batch = f.contains_batch(&mixed).await.unwrap();
    assert!(common::calls(&admin, "getrange").await >= 1);
    assert_eq!(common::calls(&admin, "bitfield_ro").await, 0);
    let mut single = Vec::new();
    for k in &mixed {
        single.push(f.contains(k).await.unwrap());
    }
    assert_eq!(
        common::calls(&admin, "bitfield_ro").await,
        mixed.len() as u64
    );
    assert_eq!(batch, single);
    assert!(batch[..5_000].iter().all(|&x| x), "no false negative");
    let fp = common::count_true(&batch[5_000..]);
    assert!(fp <= fpr_bound(0.01, 5_000), "{fp} false positives");
    // A batch of elements whose words bunch up at the start of a large filter's segment (one
    // range) and of elements anywhere (fields), half of each inserted: answers as one element
    // at a time, and both kinds of read ran.
    let big = RedisFilter::create(&conn, "mixed-plan", 1_000_000, 0.01)
        .await
        .unwrap();
    let near: Vec<String> = items(100_000..200_000)
        .into_iter()
        .filter(|k| big.probe(k).word < 2_000)
        .take(300)
        .collect();
    assert_eq!(near.len(), 300);
    let far = items(200_000..200_300);
    let batch: Vec<String> = near.iter().chain(&far).cloned().collect();
    let inserted: Vec<String> = near[..150].iter().chain(&far[..150]).cloned().collect();
    big.insert_batch(&inserted).await.unwrap();
    common::reset_stats(&admin).await;
    let hits = big.contains_batch(&batch).await.unwrap();
    assert_eq!(common::calls(&admin, "getrange").await, 1);
    assert!(common::calls(&admin, "bitfield_ro").await >= 1);
    for (k, hit) in batch.iter().zip(&hits) {
        assert_eq!(*hit, big.contains(k).await.unwrap(), "{k}");
    }
    for k in &inserted {
        assert!(hits[batch.iter().position(|b| b == k).unwrap()], "{k}");
    }
}

/// A Redisson-compatible filter's batch check reads its bits as byte ranges where they lie
/// close together and answers as one element at a time (fields).
#[tokio::test]
async fn redisson_batch_checks_by_byte_ranges_answer_as_field_reads() {
    let (server, conn) = common::start().await;
    let admin = connect(&server).await;
    let f = bloomkit_redis::RedissonFilter::create(&conn, "rs", 20_000, 0.01)
        .await
        .unwrap();
    for b in items(0..10_000).chunks(1000) {
        f.insert_batch(b).await.unwrap();
    }
    let mixed = items(5_000..15_000);
    common::reset_stats(&admin).await;
    let batch = f.contains_batch(&mixed).await.unwrap();
    assert!(common::calls(&admin, "getrange").await >= 1);
    assert_eq!(common::calls(&admin, "bitfield_ro").await, 0);
    for (k, hit) in mixed.iter().zip(&batch) {
        assert_eq!(*hit, f.contains(k).await.unwrap(), "{k}");
    }
    // One element alone reads fields, but for the rare one whose 7 bits lie within about a
    // kilobyte of each other (a range then costs less).
    let fields = common::calls(&admin, "bitfield_ro").await;
    assert!(
        fields >= mixed.len() as u64 * 99 / 100,
        "{fields} field reads"
    );
    assert!(batch[..5_000].iter().all(|&x| x), "no false negative");
    let fp = common::count_true(&batch[5_000..]);
    assert!(fp <= fpr_bound(0.01, 5_000), "{fp} false positives");
}
