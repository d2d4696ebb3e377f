//! The crate's integration tests (one binary), each against a throwaway `redis-server` it
//! starts on a free port (skipped with one stderr line when `redis-server` is not installed)
//! and a random key prefix.

use std::future::Future;
use std::time::{Duration, Instant};

use chuhe_cluster::testing::ThrowawayRedis;
use chuhe_cluster::{Config, Message, RedisCluster, random_suffix};
use tokio::sync::{mpsc, watch};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const DEADLINE: Duration = Duration::from_secs(10);

fn config(redis: &ThrowawayRedis, prefix: &str, node: &str) -> Config {
    Config {
        prefix: prefix.to_owned(),
        ..Config::new(redis.url(), node)
    }
}

fn prefix() -> String {
    format!("t{}", random_suffix())
}

/// Calls `f` until it gives `Some`, or fails after [`DEADLINE`].
async fn eventually<T, F, Fut>(what: &str, mut f: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = f().await {
            return Ok(v);
        }
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn next_message(rx: &mut mpsc::Receiver<Message>) -> Result<Message, String> {
    match tokio::time::timeout(DEADLINE, rx.recv()).await {
        Ok(Some(m)) => Ok(m),
        Ok(None) => Err("the message channel closed".into()),
        Err(_) => Err("no message within the deadline".into()),
    }
}

async fn wait_connected(rx: &mut watch::Receiver<bool>, want: bool) -> Result<(), String> {
    tokio::time::timeout(DEADLINE, rx.wait_for(|c| *c == want))
        .await
        .map_err(|_| format!("connected did not become {want}"))?
        .map_err(|_| "the connected watch closed".to_string())?;
    Ok(())
}

fn check(cond: bool, what: &str) -> TestResult {
    if cond { Ok(()) } else { Err(what.into()) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_is_exclusive_between_two_nodes_until_released() -> TestResult {
    let Some(redis) = ThrowawayRedis::start_or_skip("a_lease_is_exclusive")? else {
        return Ok(());
    };
    let p = prefix();
    let a = RedisCluster::connect(config(&redis, &p, "node-a")).await?;
    let b = RedisCluster::connect(config(&redis, &p, "node-b")).await?;
    check(a.acquire("game:1").await?.is_none(), "a takes it")?;
    check(
        b.acquire("game:1").await? == Some("node-a".into()),
        "b is told a holds it",
    )?;
    check(a.acquire("game:1").await?.is_none(), "a holds it already")?;
    check(b.holder("game:1").await? == Some("node-a".into()), "holder")?;
    check(a.held() == vec!["game:1".to_string()], "a's held leases")?;
    check(b.held().is_empty(), "b holds nothing")?;
    b.release("game:1").await?;
    check(
        a.holder("game:1").await? == Some("node-a".into()),
        "b's release of a's lease does nothing",
    )?;
    a.release("game:1").await?;
    check(a.holder("game:1").await?.is_none(), "released")?;
    check(a.held().is_empty(), "a forgot it")?;
    check(b.acquire("game:1").await?.is_none(), "b takes it now")?;
    // Another prefix is another cluster.
    let c = RedisCluster::connect(config(&redis, &prefix(), "node-c")).await?;
    check(
        c.acquire("game:1").await?.is_none(),
        "prefixes separate clusters",
    )?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_lives_while_renewed_and_expires_when_its_holder_stops() -> TestResult {
    let Some(redis) = ThrowawayRedis::start_or_skip("a_lease_expires")? else {
        return Ok(());
    };
    let p = prefix();
    let ttl = Duration::from_millis(300);
    let a = RedisCluster::connect(config(&redis, &p, "node-a").with_lease_ttl(ttl)).await?;
    let b = RedisCluster::connect(config(&redis, &p, "node-b")).await?;
    check(a.acquire("league:7").await?.is_none(), "a takes it")?;
    // Renewed every 100 ms: held for many TTLs.
    let until = Instant::now() + ttl * 5;
    while Instant::now() < until {
        check(
            b.holder("league:7").await? == Some("node-a".into()),
            "a's renewed lease is still a's",
        )?;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // a stops (as if killed): its lease expires and b can take it.
    let stopped = Instant::now();
    a.close();
    eventually("the lease to expire", || async {
        b.acquire("league:7")
            .await
            .ok()
            .flatten()
            .is_none()
            .then_some(())
    })
    .await?;
    check(stopped.elapsed() >= ttl / 2, "not before (most of) the TTL")?;
    check(
        b.holder("league:7").await? == Some("node-b".into()),
        "b holds it",
    )?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_reports_a_lease_found_held_by_another_node_or_gone() -> TestResult {
    let Some(redis) = ThrowawayRedis::start_or_skip("a_renewal_reports_lost")? else {
        return Ok(());
    };
    let p = prefix();
    let mut cfg = config(&redis, &p, "node-a");
    cfg.renew_every = Duration::from_secs(3600); // by hand only
    let a = RedisCluster::connect(cfg).await?;
    let mut lost = a.take_lost().ok_or("lost taken")?;
    check(a.take_lost().is_none(), "taken once")?;
    for k in ["game:1", "game:2", "game:3"] {
        check(a.acquire(k).await?.is_none(), "a takes it")?;
    }
    let client = redis::Client::open(redis.url())?;
    let mut raw = client.get_multiplexed_async_connection().await?;
    let _: () = redis::cmd("SET")
        .arg(format!("{p}:lease:game:1"))
        .arg("node-z")
        .query_async(&mut raw)
        .await?;
    let _: () = redis::cmd("DEL")
        .arg(format!("{p}:lease:game:3"))
        .query_async(&mut raw)
        .await?;
    a.renew_now().await?;
    let mut found = vec![
        lost.recv().await.ok_or("lost closed")?,
        lost.recv().await.ok_or("lost closed")?,
    ];
    found.sort();
    check(found == ["game:1", "game:3"], "both reported")?;
    check(lost.try_recv().is_err(), "nothing else reported")?;
    check(a.held() == vec!["game:2".to_string()], "game:2 still held")?;
    check(
        a.holder("game:1").await? == Some("node-z".into()),
        "node-z keeps it",
    )?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_reach_the_subscribed_nodes_only() -> TestResult {
    let Some(redis) = ThrowawayRedis::start_or_skip("messages_reach_subscribers")? else {
        return Ok(());
    };
    let p = prefix();
    let a = RedisCluster::connect(config(&redis, &p, "node-a")).await?;
    let b = RedisCluster::connect(config(&redis, &p, "node-b")).await?;
    let mut inbox = a.take_messages().ok_or("messages taken")?;
    check(a.take_messages().is_none(), "taken once")?;
    wait_connected(&mut a.connected(), true).await?;
    a.subscribe("node:a").await?;
    a.subscribe("game:9").await?;
    b.publish("node:a", b"hello \x00 bytes").await?;
    let m = next_message(&mut inbox).await?;
    check(
        m == Message {
            channel: "node:a".into(),
            payload: b"hello \x00 bytes".to_vec(),
        },
        "round trip",
    )?;
    a.unsubscribe("node:a").await?;
    b.publish("node:a", b"missed").await?;
    b.publish("game:9", b"seen").await?;
    let m = next_message(&mut inbox).await?;
    check(
        m.channel == "game:9" && m.payload == b"seen",
        "unsubscribed channel skipped",
    )?;
    // Another cluster's channel of the same name is not ours.
    let other = RedisCluster::connect(config(&redis, &prefix(), "node-x")).await?;
    other.publish("game:9", b"other cluster").await?;
    b.publish("game:9", b"ours").await?;
    let m = next_message(&mut inbox).await?;
    check(m.payload == b"ours", "prefixes separate clusters")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipelined_batch_arrives_whole_and_in_order() -> TestResult {
    let Some(redis) = ThrowawayRedis::start_or_skip("pipelined_batch")? else {
        return Ok(());
    };
    let p = prefix();
    let a = RedisCluster::connect(config(&redis, &p, "node-a")).await?;
    let b = RedisCluster::connect(config(&redis, &p, "node-b")).await?;
    let mut inbox = a.take_messages().ok_or("messages taken")?;
    wait_connected(&mut a.connected(), true).await?;
    a.subscribe("game:1").await?;
    a.subscribe("node:a").await?;
    let batch: Vec<(String, Vec<u8>)> = (0..500)
        .map(|i| {
            let channel = if i % 3 == 0 { "node:a" } else { "game:1" };
            (channel.to_string(), format!("m{i}").into_bytes())
        })
        .chain(std::iter::once(("game:2".to_string(), b"nobody".to_vec())))
        .collect();
    b.publish_many(&batch).await?;
    b.publish_many::<Vec<u8>>(&[]).await?;
    b.publish("game:1", b"after").await?;
    for (channel, payload) in batch.iter().take(500) {
        let m = next_message(&mut inbox).await?;
        check(
            &m.channel == channel && &m.payload == payload,
            "each message, in the order published",
        )?;
    }
    let m = next_message(&mut inbox).await?;
    check(
        m.payload == b"after",
        "an unsubscribed channel's message is not delivered",
    )?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connecting_to_no_redis_fails_fast() -> TestResult {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let started = Instant::now();
    let r = RedisCluster::connect(Config::new(format!("redis://127.0.0.1:{port}"), "n")).await;
    check(r.is_err(), "no Redis, no cluster")?;
    check(started.elapsed() < Duration::from_secs(5), "fast")?;
    let r = RedisCluster::connect(Config::new("http://nope", "n")).await;
    check(
        matches!(r, Err(chuhe_cluster::Error::Url { .. })),
        "a bad URL",
    )?;
    Ok(())
}

/// Redis is killed and started again, empty: `connected` goes false then true, the
/// subscriptions come back, a node's leases are taken back at once (the renewal that runs on
/// reconnecting), and a lease another node took first is reported lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_redis_restart_subscriptions_and_leases_come_back() -> TestResult {
    let Some(mut redis) = ThrowawayRedis::start_or_skip("after_a_redis_restart")? else {
        return Ok(());
    };
    let p = prefix();
    let mut cfg = config(&redis, &p, "node-a");
    cfg.lease_ttl = Duration::from_secs(60);
    cfg.renew_every = Duration::from_secs(3600); // only the renewal on reconnecting
    let a = RedisCluster::connect(cfg).await?;
    // c renews by hand only, so the test decides who comes first after the restart.
    let mut cfg = config(&redis, &p, "node-c");
    cfg.lease_ttl = Duration::from_secs(60);
    cfg.renew_every = Duration::from_secs(3600);
    cfg.renew_on_reconnect = false;
    let c = RedisCluster::connect(cfg).await?;
    let b = RedisCluster::connect(config(&redis, &p, "node-b")).await?;
    let mut lost_a = a.take_lost().ok_or("lost taken")?;
    let mut lost_c = c.take_lost().ok_or("lost taken")?;
    let mut inbox = a.take_messages().ok_or("messages taken")?;
    let mut connected = a.connected();
    wait_connected(&mut connected, true).await?;
    a.subscribe("node:a").await?;
    check(a.acquire("game:1").await?.is_none(), "a takes game:1")?;
    check(a.acquire("game:2").await?.is_none(), "a takes game:2")?;
    check(c.acquire("game:3").await?.is_none(), "c takes game:3")?;
    c.acquire("game:4").await?;
    a.renew_now().await?;
    c.renew_now().await?;

    redis.kill()?;
    wait_connected(&mut connected, false).await?;
    // Unreachable: a renewal fails and reports nothing.
    check(a.renew_now().await.is_err(), "no renewal without Redis")?;
    check(
        lost_a.try_recv().is_err(),
        "nothing reported during the outage",
    )?;
    // Subscribed during the outage: subscribed once the connection is back.
    a.subscribe("game:5").await?;
    redis.start()?;
    wait_connected(&mut connected, true).await?;

    // a takes its leases back by itself.
    for key in ["game:1", "game:2"] {
        eventually("a to take its lease back", || async {
            (a.holder(key).await.ok()? == Some("node-a".into())).then_some(())
        })
        .await?;
    }
    // b comes first to c's game:3 (as a node would after seeing no holder).
    eventually("b to take game:3", || async {
        b.acquire("game:3").await.ok().map(|h| h.is_none())
    })
    .await?;
    eventually("c's renewal", || async { c.renew_now().await.ok() }).await?;
    check(
        c.holder("game:4").await? == Some("node-c".into()),
        "c took game:4 back",
    )?;
    let l = tokio::time::timeout(DEADLINE, lost_c.recv()).await?;
    check(l.as_deref() == Some("game:3"), "game:3 reported lost")?;
    check(
        c.held() == vec!["game:4".to_string()],
        "c holds game:4 only",
    )?;
    check(lost_a.try_recv().is_err(), "a lost nothing")?;
    check(
        a.held() == vec!["game:1".to_string(), "game:2".to_string()],
        "a holds both",
    )?;

    for channel in ["node:a", "game:5"] {
        eventually("b's publish", || async {
            b.publish(channel, channel.as_bytes()).await.ok()
        })
        .await?;
        let m = next_message(&mut inbox).await?;
        check(m.channel == channel, "subscribed again after the restart")?;
    }
    Ok(())
}

/// Redis stops answering (frozen, the connections still open): `connected` goes false (the
/// pub/sub connection's ping times out), renewals fail without reporting anything, and once
/// Redis answers again (its data intact) everything carries on: the lease is still held and
/// messages flow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_redis_is_noticed_and_nothing_is_lost_when_it_answers_again() -> TestResult {
    let Some(redis) = ThrowawayRedis::start_or_skip("a_hung_redis")? else {
        return Ok(());
    };
    let p = prefix();
    let mut cfg = config(&redis, &p, "node-a");
    cfg.lease_ttl = Duration::from_secs(60);
    cfg.renew_every = Duration::from_secs(3600);
    cfg.timeout = Duration::from_millis(300);
    let a = RedisCluster::connect(cfg).await?;
    let b = RedisCluster::connect(config(&redis, &p, "node-b")).await?;
    let mut lost = a.take_lost().ok_or("lost taken")?;
    let mut inbox = a.take_messages().ok_or("messages taken")?;
    let mut connected = a.connected();
    wait_connected(&mut connected, true).await?;
    a.subscribe("node:a").await?;
    check(a.acquire("game:1").await?.is_none(), "a takes game:1")?;

    redis.freeze()?;
    let outcome = async {
        wait_connected(&mut connected, false).await?;
        check(a.renew_now().await.is_err(), "no renewal from a hung Redis")?;
        check(lost.try_recv().is_err(), "nothing reported")?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    }
    .await;
    redis.thaw()?;
    outcome?;
    wait_connected(&mut connected, true).await?;
    eventually("a's renewal", || async { a.renew_now().await.ok() }).await?;
    check(lost.try_recv().is_err(), "nothing lost")?;
    check(a.held() == vec!["game:1".to_string()], "still held")?;
    eventually("b's publish", || async {
        b.publish("node:a", b"back").await.ok()
    })
    .await?;
    let m = next_message(&mut inbox).await?;
    check(m.payload == b"back", "messages flow again")?;
    Ok(())
}

/// A subscribed connection stays up: its keep-alive pings (every second) are answered in
/// subscribed mode too, and `connected` does not flicker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribed_connection_stays_up() -> TestResult {
    let Some(redis) = ThrowawayRedis::start_or_skip("a_subscribed_connection_stays_up")? else {
        return Ok(());
    };
    let a = RedisCluster::connect(config(&redis, &prefix(), "node-a")).await?;
    let mut connected = a.connected();
    wait_connected(&mut connected, true).await?;
    a.subscribe("node:a").await?;
    connected.mark_unchanged();
    // Three pings' worth of time: a ping failing in subscribed mode would reconnect.
    let changed = tokio::time::timeout(Duration::from_millis(3500), connected.changed()).await;
    check(changed.is_err(), "connected changed while Redis was up")?;
    Ok(())
}

/// Redis unreachable for longer than the TTL (frozen here, its data kept): nothing is
/// reported during the outage; once it answers, the renewal finds the leases expired and
/// reports them lost (Redis did not restart, so nothing is taken back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_that_expired_during_an_outage_are_reported_lost_afterwards() -> TestResult {
    let Some(redis) = ThrowawayRedis::start_or_skip("leases_expired_during_an_outage")? else {
        return Ok(());
    };
    let mut cfg = config(&redis, &prefix(), "node-a");
    cfg.lease_ttl = Duration::from_millis(400);
    cfg.renew_every = Duration::from_millis(130);
    cfg.timeout = Duration::from_millis(300);
    let a = RedisCluster::connect(cfg).await?;
    let mut lost = a.take_lost().ok_or("lost taken")?;
    let mut connected = a.connected();
    wait_connected(&mut connected, true).await?;
    check(a.acquire("game:1").await?.is_none(), "a takes game:1")?;
    a.renew_now().await?;
    let frozen = Instant::now();
    redis.freeze()?;
    let outcome = async {
        wait_connected(&mut connected, false).await?;
        // Past the TTL (measured from the freeze: the last renewal was before it).
        let mut renewals_failed = 0;
        while frozen.elapsed() < Duration::from_millis(900) || renewals_failed == 0 {
            if a.renew_now().await.is_err() {
                renewals_failed += 1;
            } else {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        check(
            lost.try_recv().is_err(),
            "nothing reported during the outage",
        )?;
        check(
            a.held() == vec!["game:1".to_string()],
            "still held as far as a knows",
        )?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    }
    .await;
    redis.thaw()?;
    outcome?;
    let l = tokio::time::timeout(DEADLINE, lost.recv()).await?;
    check(
        l.as_deref() == Some("game:1"),
        "reported lost once Redis answers",
    )?;
    check(a.held().is_empty(), "not held any more")?;
    check(a.holder("game:1").await?.is_none(), "not taken back")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_node_gives_up_all_its_leases_at_once_and_stops_even_without_redis() -> TestResult
{
    let Some(mut redis) = ThrowawayRedis::start_or_skip("release_all")? else {
        return Ok(());
    };
    let p = prefix();
    let a = RedisCluster::connect(config(&redis, &p, "node-a")).await?;
    let b = RedisCluster::connect(config(&redis, &p, "node-b")).await?;
    wait_connected(&mut a.connected(), true).await?;
    // More than one script call's worth of leases, and one that is b's.
    for i in 0..2_500 {
        check(
            a.acquire(&format!("game:{i}")).await?.is_none(),
            "a takes it",
        )?;
    }
    check(b.acquire("league:1").await?.is_none(), "b takes its own")?;
    a.release_all_and_close().await;
    check(a.held().is_empty(), "nothing held afterwards")?;
    for i in [0, 999, 1_000, 2_499] {
        check(
            b.holder(&format!("game:{i}")).await?.is_none(),
            "every lease of a's is gone at once (no TTL to wait for)",
        )?;
    }
    check(
        b.holder("league:1").await? == Some("node-b".into()),
        "another node's lease is not touched",
    )?;

    // With Redis gone, giving up the leases still ends (they expire on their own).
    let c = RedisCluster::connect(config(&redis, &p, "node-c")).await?;
    for i in 0..2_000 {
        c.acquire(&format!("game:c{i}")).await?;
    }
    redis.kill()?;
    // Not a round trip (or a timeout) per lease: a node holding thousands would take minutes.
    let limit = Config::new(redis.url(), "x").timeout * 3;
    check(
        tokio::time::timeout(limit, c.release_all_and_close())
            .await
            .is_ok(),
        "release_all_and_close returns without Redis",
    )?;
    Ok(())
}
