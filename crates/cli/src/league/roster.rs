//! Rosters from CSV (`chuhe league event … --roster teams.csv`), merged into an event file
//! before it is checked or sent. The columns (a header row names them, in any order, any
//! case):
//!
//! | column | | meaning |
//! |---|---|---|
//! | `team` | required | the team's name |
//! | `name` | required | the person's name (a player's as registered; a captain's account name) |
//! | `role` | optional | `player` (default) or `captain` |
//! | `tags` | optional | the player's tags for eligibility rules, separated by `;` or spaces (e.g. `W;U20`) |
//! | `rating` | optional | the player's rating, a whole number |
//! | `unit` | optional | the team's 参赛单位 (Swiss round-1 avoidance) |
//!
//! Players are in registered order (board order of 12.1/12.2, substitutes last) as the rows
//! list them. A team of the CSV replaces the players (and, if it lists any, the captains) of
//! the file's team of the same name; a team the file lacks is added after the file's teams.
//! RFC 4180 quoting (`"a, b"`, `""` for a quote), a UTF-8 byte order mark (Excel's) is skipped.

use anyhow::{Result, bail};
use chuhe_league_core::spec::{EventSpec, PlayerSpec, TeamSpec};

/// The records of a CSV text with the line each starts on (1-based); blank lines are skipped.
pub fn records(text: &str) -> Result<Vec<(usize, Vec<String>)>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut line = 1;
    let mut start = 1;
    let mut quoted = false;
    let mut was_quoted = false;
    let mut chars = text.chars().peekable();
    let end_record = |fields: &mut Vec<String>, out: &mut Vec<(usize, Vec<String>)>, start| {
        let f = std::mem::take(fields);
        if !(f.len() == 1 && f[0].is_empty()) {
            out.push((start, f));
        }
    };
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
            }
            '"' => bail!("line {line}: a quote inside an unquoted field (quote the whole field)"),
            ',' => {
                fields.push(std::mem::take(&mut field));
                was_quoted = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                fields.push(std::mem::take(&mut field));
                was_quoted = false;
                end_record(&mut fields, &mut out, start);
                line += 1;
                start = line;
            }
            _ if was_quoted => bail!("line {line}: text after a quoted field's closing quote"),
            _ => field.push(c),
        }
    }
    if quoted {
        bail!("line {start}: a quoted field is not closed");
    }
    if !field.is_empty() || !fields.is_empty() || was_quoted {
        fields.push(field);
        end_record(&mut fields, &mut out, start);
    }
    Ok(out)
}

const COLUMNS: [&str; 6] = ["team", "name", "role", "tags", "rating", "unit"];

/// One team as the CSV lists it.
#[derive(Debug, Default)]
struct CsvTeam {
    name: String,
    unit: Option<(usize, String)>,
    players: Vec<PlayerSpec>,
    captains: Vec<String>,
}

/// Merges the CSV's rosters into `spec`; `source` names the file in errors.
pub fn merge(spec: &mut EventSpec, csv: &str, source: &str) -> Result<()> {
    let recs = records(csv).map_err(|e| anyhow::anyhow!("{source} {e}"))?;
    let Some(((_, header), rows)) = recs.split_first() else {
        bail!("{source}: empty (a header row `team,name,…` and one row per person)");
    };
    let mut col = [None; COLUMNS.len()];
    for (i, h) in header.iter().enumerate() {
        let h = h.trim().to_lowercase();
        let Some(k) = COLUMNS.iter().position(|c| *c == h) else {
            bail!(
                "{source} line 1: unknown column {h:?} (the columns are {})",
                COLUMNS.join(", ")
            );
        };
        if col[k].replace(i).is_some() {
            bail!("{source} line 1: column {h:?} twice");
        }
    }
    for required in ["team", "name"] {
        if col[COLUMNS.iter().position(|c| *c == required).unwrap_or(0)].is_none() {
            bail!("{source} line 1: no {required:?} column (the header names the columns)");
        }
    }
    let mut teams: Vec<CsvTeam> = Vec::new();
    for (line, row) in rows {
        let get = |c: &str| -> &str {
            COLUMNS
                .iter()
                .position(|x| *x == c)
                .and_then(|k| col[k])
                .and_then(|i| row.get(i))
                .map_or("", |s| s.trim())
        };
        let at = format!("{source} line {line}");
        if row.len() > header.len() {
            bail!(
                "{at}: {} fields, the header has {}",
                row.len(),
                header.len()
            );
        }
        let team = get("team");
        let name = get("name");
        if team.is_empty() || name.is_empty() {
            bail!("{at}: every row needs a team and a name");
        }
        let k = match teams.iter().position(|t| t.name == team) {
            Some(k) => k,
            None => {
                teams.push(CsvTeam {
                    name: team.to_string(),
                    ..CsvTeam::default()
                });
                teams.len() - 1
            }
        };
        let t = &mut teams[k];
        let unit = get("unit");
        if !unit.is_empty() {
            match &t.unit {
                Some((first, u)) if u != unit => {
                    bail!("{at}: team {team:?} has unit {unit:?} here and {u:?} on line {first}")
                }
                Some(_) => {}
                None => t.unit = Some((*line, unit.to_string())),
            }
        }
        let tags: Vec<String> = get("tags")
            .split([';', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let rating = match get("rating") {
            "" => None,
            r => Some(
                r.parse::<i32>()
                    .map_err(|_| anyhow::anyhow!("{at}: rating {r:?} is not a whole number"))?,
            ),
        };
        match get("role").to_lowercase().as_str() {
            "" | "player" => t.players.push(if tags.is_empty() && rating.is_none() {
                PlayerSpec::Name(name.to_string())
            } else {
                PlayerSpec::Full {
                    name: name.to_string(),
                    tags,
                    rating,
                    rated_games: None,
                }
            }),
            "captain" => {
                if !tags.is_empty() || rating.is_some() {
                    bail!(
                        "{at}: a captain has no tags or rating (list the person as a player too)"
                    );
                }
                t.captains.push(name.to_string());
            }
            other => bail!("{at}: role {other:?} is player or captain"),
        }
    }
    for t in teams {
        match spec.teams.iter_mut().find(|s| s.name == t.name) {
            Some(s) => {
                if !t.players.is_empty() {
                    s.players = t.players;
                }
                if !t.captains.is_empty() {
                    s.captains = t.captains;
                }
                if let Some((_, u)) = t.unit {
                    s.unit = u;
                }
            }
            None => {
                if t.players.is_empty() {
                    bail!(
                        "{source}: team {:?} is not in the event file and has no players",
                        t.name
                    );
                }
                spec.teams.push(TeamSpec {
                    name: t.name,
                    unit: t.unit.map(|(_, u)| u).unwrap_or_default(),
                    players: t.players,
                    captains: t.captains,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn spec() -> EventSpec {
        serde_json::from_value(serde_json::json!({
            "name": "t", "system": "round_robin", "boards": 2,
            "teams": [{"name": "A", "players": ["a1", "a2"], "captains": ["A cap"]}],
            "schedule": {"first_round": "2099-01-01T10:00Z", "every": "1d"}
        }))
        .unwrap()
    }

    #[test]
    fn quoting_as_rfc_4180() {
        let r =
            records("\u{feff}a,\"b, c\",\"say \"\"hi\"\"\"\r\n\r\n\"two\nlines\",x,\n").unwrap();
        assert_eq!(
            r,
            vec![
                (1, vec!["a".into(), "b, c".into(), "say \"hi\"".into()]),
                (3, vec!["two\nlines".into(), "x".into(), String::new()]),
            ]
        );
        assert!(records("a,\"open\n").is_err());
        assert!(records("a,b\"c\n").is_err());
        assert!(records("\"a\"b\n").is_err());
    }

    proptest! {
        /// What `chuhe-league` writes as CSV reads back as the same fields.
        #[test]
        fn what_csv_line_writes_reads_back(rows in proptest::collection::vec(
            proptest::collection::vec("[a-z ,\"\n象棋]{0,8}", 1..5), 1..5)) {
            let text: String = rows.iter().map(|r| chuhe_league::text::csv_line(r)).collect();
            let back: Vec<Vec<String>> = records(&text).unwrap().into_iter().map(|(_, f)| f).collect();
            let want: Vec<Vec<String>> = rows.into_iter().filter(|r| !(r.len() == 1 && r[0].is_empty())).collect();
            prop_assert_eq!(back, want);
        }
    }

    #[test]
    fn a_roster_replaces_a_team_and_adds_one() {
        let mut s = spec();
        let csv = "Team,Name,Role,Tags,Rating,Unit\n\
                   A,a9,,W,2400,\n\
                   A,a8,player,,,\n\
                   B,b1,,W;U20,,北京\n\
                   B,b2,,,,\n\
                   B,B 领队,captain,,,北京\n";
        merge(&mut s, csv, "teams.csv").unwrap();
        assert_eq!(s.teams.len(), 2);
        assert_eq!(s.teams[0].players[0].name(), "a9");
        assert_eq!(
            s.teams[0].captains,
            vec!["A cap".to_string()],
            "kept: none listed"
        );
        assert_eq!(s.teams[1].unit, "北京");
        assert_eq!(s.teams[1].captains, vec!["B 领队".to_string()]);
        assert_eq!(
            s.teams[1].players[0],
            PlayerSpec::Full {
                name: "b1".into(),
                tags: vec!["W".into(), "U20".into()],
                rating: None,
                rated_games: None,
            }
        );
        assert!(s.rules().is_ok());
    }

    #[test]
    fn every_mistake_names_its_line() {
        let cases = [
            ("team,player\nA,x\n", "line 1: unknown column \"player\""),
            ("team,unit\nA,x\n", "no \"name\" column"),
            (
                "team,name\nA,x\n,y\n",
                "line 3: every row needs a team and a name",
            ),
            ("team,name,rating\nA,x,high\n", "line 2: rating \"high\""),
            ("team,name,role\nA,x,coach\n", "line 2: role \"coach\""),
            (
                "team,name,unit\nB,x,u1\nB,y,u2\n",
                "line 3: team \"B\" has unit \"u2\"",
            ),
            (
                "team,name,role\nC,c,captain\n",
                "team \"C\" is not in the event file",
            ),
            ("team,name\nA,x,extra\n", "line 2: 3 fields"),
            ("", "empty"),
        ];
        for (csv, want) in cases {
            let e = merge(&mut spec(), csv, "r.csv").unwrap_err().to_string();
            assert!(e.starts_with("r.csv") && e.contains(want), "{csv:?}: {e}");
        }
    }
}
