//! Reading an event file as the organiser wrote it — TOML or JSON — and checking it, a
//! refusal placed at its line and column: the one reader the server's upload and
//! `chuhe league event check` share.

use crate::spec::{EventSpec, Rules, SpecError};

/// An event file refused: what, and where in the text (1-based line and column) when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FileError {
    pub field: Option<String>,
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

/// The 1-based line and column of byte offset `at` of `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |s| s.chars().count()) + 1;
    (line, col)
}

/// Where a checked field (`teams[1].players`) is written in the file: the line and column of
/// its last key, searched after its parents' keys; None when it cannot be found.
pub fn field_position(text: &str, field: &str) -> Option<(usize, usize)> {
    let mut from = 0usize;
    let mut found = None;
    // An index the key before could not place (JSON's one `"teams": [...]`): the next key's
    // occurrence to take instead.
    let mut skip = 0usize;
    for part in field.split('.') {
        let (key, index) = match part.split_once('[') {
            Some((k, rest)) => (k.trim(), rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part.trim(), None),
        };
        if key.is_empty() {
            continue;
        }
        let rest = text.get(from..)?;
        let hits = key_hits(rest, key);
        let first = *hits.first()?;
        let hit = match index {
            // TOML's `[[teams]]`: one header per element.
            Some(n) if hits.len() > n => {
                skip = 0;
                hits[n]
            }
            Some(n) => {
                skip = n;
                first
            }
            None => {
                let h = hits.get(skip).copied().unwrap_or(first);
                skip = 0;
                h
            }
        };
        from += hit;
        found = Some(from);
    }
    found.map(|at| line_col(text, at))
}

/// Where `key` is written as a key in `text` (JSON `"key":`, TOML `key =` or `[key]`/`[[key]]`):
/// byte offsets, in order.
fn key_hits(text: &str, key: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for k in [format!("\"{key}\""), key.to_string()] {
        for (i, _) in text.match_indices(k.as_str()) {
            let after = text.get(i + k.len()..).unwrap_or("").trim_start();
            let before = text.get(..i).and_then(|b| b.chars().next_back());
            let starts = before.is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '"');
            if starts
                && (after.starts_with(':') || after.starts_with('=') || after.starts_with(']'))
            {
                out.push(i);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Reads an event file: TOML or JSON (`format`, else JSON when it starts with `{`).
pub fn parse_event_file(text: &str, format: Option<&str>) -> Result<EventSpec, FileError> {
    let json = match format {
        Some(f) => f.eq_ignore_ascii_case("json"),
        None => text.trim_start().starts_with('{'),
    };
    if json {
        serde_json::from_str(text).map_err(|e| FileError {
            field: None,
            message: e.to_string(),
            line: Some(e.line()),
            column: Some(e.column()),
        })
    } else {
        toml::from_str(text).map_err(|e| {
            let pos = e.span().map(|s| line_col(text, s.start));
            FileError {
                field: None,
                message: e.message().to_string(),
                line: pos.map(|p| p.0),
                column: pos.map(|p| p.1),
            }
        })
    }
}

/// The event's checks (its rules and its round times), as creating it would make them; a
/// refusal is placed in `text` when its field can be found there.
pub fn check_event(text: &str, spec: &EventSpec) -> Result<Checked, FileError> {
    check(spec).map_err(|e| refused(text, e))
}

/// The event's checks without its text: its rules and its round times.
pub fn check(spec: &EventSpec) -> Result<Checked, SpecError> {
    let rules = spec.rules()?;
    let rounds = spec.round_times(&rules, rules.planned_rounds())?;
    Ok(Checked { rules, rounds })
}

/// A checked event: its rules and each planned round's (start, lineup deadline), Unix ms.
#[derive(Debug, Clone)]
pub struct Checked {
    pub rules: Rules,
    pub rounds: Vec<(u64, u64)>,
}

/// A refusal of the checks, placed at its field in `text`.
pub fn refused(text: &str, e: SpecError) -> FileError {
    let pos = field_position(text, &e.field);
    FileError {
        message: e.to_string(),
        field: Some(e.field),
        line: pos.map(|p| p.0),
        column: pos.map(|p| p.1),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let toml = "name = \"x\"\nsystem = \"round_robin\"\nlegs = = 1\n";
        let e = parse_event_file(toml, None).unwrap_err();
        assert_eq!(e.line, Some(3), "{e:?}");
        assert!(e.column.is_some());
        let e = parse_event_file("{\n  \"name\": ,\n}", None).unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = parse_event_file("{\"name\": \"x\", \"nope\": 1}", None).unwrap_err();
        assert!(e.message.contains("nope"), "{e:?}");
    }

    #[test]
    fn line_and_column_of_offsets() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("ab\ncd", 99), (2, 3));
        assert_eq!(field_position("{\"a\": {\"b\": 1}}", "a.b"), Some((1, 8)));
        assert_eq!(field_position("x = 1", "nothere"), None);
        // JSON: the second element's key.
        let json = "{\"teams\": [\n {\"players\": [1]},\n {\"players\": []}\n]}";
        assert_eq!(field_position(json, "teams[1].players"), Some((3, 3)));
    }
}
