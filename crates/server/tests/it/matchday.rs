//! The match day's routes (league/pages_api.rs) on a real server: an event file uploaded as
//! TOML (checked with its refusal's line and column, then created), a player's "my games" and a
//! captain's teams, and names for ids.

use serde_json::Value;

use crate::harness::{Cluster, Result, http};

const FILE: &str = r#"name = "象甲 it"
system = "round_robin"
legs = 1
boards = 2
result_chain = { preset = "single", time_control = "10m+5s" }
arbiters = ["裁判 甲"]

[[teams]]
name = "红队"
players = ["红一", "红二"]
captains = ["红队 领队"]

[[teams]]
name = "黑队"
players = ["黑一"]

[schedule]
first_round = "2030-03-06T14:00:00+08:00"
every = "7d"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_file_uploaded_as_toml_then_my_games() -> Result<()> {
    let mut c = Cluster::start(1).await?;
    let addr = c.nodes[0].addr;
    let org = c.cast.organizer.clone();
    // Refused at the second team's players line, with nothing created.
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/leagues/upload?format=toml&check=true",
        Some(&org),
        Some(FILE),
    )
    .await?;
    assert_eq!(status, 400, "{body}");
    let v: Value = serde_json::from_str(&body)?;
    assert_eq!(
        (v["code"].as_str(), v["line"].as_u64(), v["column"].as_u64()),
        (Some("invalid_event"), Some(15), Some(1)),
        "{v}"
    );
    assert_eq!(v["field"], "teams[1].players");
    // A syntax error: the parser's position.
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/leagues/upload?format=toml",
        Some(&org),
        Some("name = \n"),
    )
    .await?;
    assert_eq!(status, 400);
    assert_eq!(serde_json::from_str::<Value>(&body)?["line"], 1);
    // Not an organiser: refused.
    let (status, _) = http(
        addr,
        "POST",
        "/api/v1/leagues/upload",
        Some(&c.cast.red),
        Some(FILE),
    )
    .await?;
    assert_eq!(status, 403);

    let good = FILE.replace("players = [\"黑一\"]", "players = [\"黑一\", \"黑二\"]");
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/leagues/upload?format=toml&check=true",
        Some(&org),
        Some(&good),
    )
    .await?;
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body)?["event"]["rounds"], 1);
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/leagues/upload?format=toml",
        Some(&org),
        Some(&good),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    let id = serde_json::from_str::<Value>(&body)?["id"]
        .as_str()
        .ok_or("no id")?
        .to_string();
    let (status, _) = http(
        addr,
        "POST",
        &format!("/api/v1/leagues/{id}/publish"),
        Some(&org),
        None,
    )
    .await?;
    assert_eq!(status, 200);
    let (_, body) = http(
        addr,
        "POST",
        &format!("/api/v1/leagues/{id}/tokens"),
        Some(&org),
        Some("{}"),
    )
    .await?;
    let tokens: Value = serde_json::from_str(&body)?;
    let token = |name: &str| -> Result<(String, String)> {
        let t = tokens["tokens"]
            .as_array()
            .ok_or("no tokens")?
            .iter()
            .find(|t| t["name"] == name)
            .ok_or("no such person")?;
        Ok((
            t["token"].as_str().unwrap_or("").to_string(),
            t["principalId"].as_str().unwrap_or("").to_string(),
        ))
    };

    // A player before the lineups are out: its team's match, no board yet.
    let (player, player_id) = token("红二")?;
    let (status, body) = http(addr, "GET", "/api/v1/me/leagues", Some(&player), None).await?;
    assert_eq!(status, 200, "{body}");
    let me: Value = serde_json::from_str(&body)?;
    assert_eq!(me["principalId"], player_id.as_str());
    let boards = me["boards"].as_array().ok_or("no boards")?;
    assert_eq!(boards.len(), 1);
    assert_eq!(
        (
            boards[0]["revealed"].as_bool(),
            boards[0]["opponentTeamName"].as_str()
        ),
        (Some(false), Some("黑队"))
    );

    // Both lineups in: revealed, and the player's board, colour and opponent are known.
    for (captain, team, players) in [
        ("红队 领队", 0, r#"["红一", "红二"]"#),
        ("黑队 领队", 1, r#"["黑一", "黑二"]"#),
    ] {
        let body = format!(r#"{{"round": 1, "table": 1, "team": {team}, "players": {players}}}"#);
        let (status, answer) = http(
            addr,
            "POST",
            &format!("/api/v1/leagues/{id}/lineups"),
            Some(&token(captain)?.0),
            Some(&body),
        )
        .await?;
        assert_eq!(status, 200, "{answer}");
    }
    let (_, body) = http(addr, "GET", "/api/v1/me/leagues", Some(&player), None).await?;
    let me: Value = serde_json::from_str(&body)?;
    let b = &me["boards"][0];
    assert_eq!(
        (
            b["board"].as_u64(),
            b["colour"].as_str(),
            b["opponent"]["name"].as_str()
        ),
        (Some(2), Some("black"), Some("黑二")),
        "{b}"
    );
    assert_eq!(b["current"], Value::Null);

    // A captain: its team; an arbiter: its event; no token: 401.
    let (_, body) = http(
        addr,
        "GET",
        "/api/v1/me/leagues",
        Some(&token("红队 领队")?.0),
        None,
    )
    .await?;
    assert_eq!(
        serde_json::from_str::<Value>(&body)?["captainOf"][0]["teamName"],
        "红队"
    );
    let (_, body) = http(
        addr,
        "GET",
        "/api/v1/me/leagues",
        Some(&token("裁判 甲")?.0),
        None,
    )
    .await?;
    assert_eq!(
        serde_json::from_str::<Value>(&body)?["arbiterOf"][0]["leagueId"],
        id.as_str()
    );
    let (status, _) = http(addr, "GET", "/api/v1/me/leagues", None, None).await?;
    assert_eq!(status, 401);

    // Names for ids (unknown ones left out).
    let (_, body) = http(
        addr,
        "GET",
        &format!("/api/v1/names?ids={player_id},999999"),
        None,
        None,
    )
    .await?;
    let names: Value = serde_json::from_str(&body)?;
    assert_eq!(names["names"][player_id.as_str()], "红二");
    assert_eq!(names["names"].as_object().map(|o| o.len()), Some(1));
    c.nodes[0].stop().await?;
    Ok(())
}
