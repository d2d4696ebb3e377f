//! Text helpers shared by the printouts: the label language, display width, CSV and HTML
//! escaping. Pure string functions.

/// The language of a printout's labels. Names (teams, players, events) are printed as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Lang {
    /// Chinese labels, as the rules and the seed's forms print them (default).
    #[default]
    Zh,
    /// English labels.
    En,
}

impl Lang {
    /// `zh` or `en`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::Zh => "zh",
            Lang::En => "en",
        }
    }

    /// Picks the label of this language.
    pub fn pick<'s>(self, zh: &'s str, en: &'s str) -> &'s str {
        match self {
            Lang::Zh => zh,
            Lang::En => en,
        }
    }
}

/// The UTF-8 byte order mark: Excel and WPS read a CSV as UTF-8 (Chinese intact) only with it.
pub const BOM: &str = "\u{feff}";

/// Display width in a monospaced terminal: CJK and other wide characters take two columns.
pub fn width(s: &str) -> usize {
    s.chars()
        .map(|c| {
            let u = c as u32;
            let wide = (0x1100..=0x115F).contains(&u)
                || (0x2E80..=0xA4CF).contains(&u)
                || (0xAC00..=0xD7A3).contains(&u)
                || (0xF900..=0xFAFF).contains(&u)
                || (0xFE30..=0xFE4F).contains(&u)
                || (0xFF00..=0xFF60).contains(&u)
                || (0xFFE0..=0xFFE6).contains(&u)
                || (0x20000..=0x3FFFD).contains(&u);
            if wide { 2 } else { 1 }
        })
        .sum()
}

/// A text cell for a spreadsheet: text that a spreadsheet would read as a formula (starting
/// with `=`, `+`, `-`, `@`) gets a leading `'`. The forfeit marks `+` and `-` alone stay as
/// they are.
pub fn text_cell(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@']) && s != "+" && s != "-" {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

/// A cell that must stay text in a spreadsheet although Excel (and LibreOffice with "detect
/// special numbers") would read it as a time, a date or a number: a score `3:1` or `6 : 4`
/// (a time), `1/2` (a date), a board's points with its forfeit mark `2+` / `0-` (a number,
/// the mark lost). Written as the formula `="3:1"`, which Excel, WPS and LibreOffice show as
/// exactly that text; any other cell goes through [`text_cell`].
pub fn keep_text(s: &str) -> String {
    let digits = s.chars().any(|c| c.is_ascii_digit());
    let risky = digits && (s.contains([':', '/']) || s.ends_with(['+', '-']));
    if risky {
        format!("=\"{}\"", s.replace('"', "\"\""))
    } else {
        text_cell(s)
    }
}

/// Quotes a CSV field (RFC 4180) when it holds a comma, a quote or a line break.
pub fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One CSV line (ending CRLF) of already formatted fields.
pub fn csv_line(fields: &[String]) -> String {
    let mut out = fields
        .iter()
        .map(|f| csv_quote(f))
        .collect::<Vec<_>>()
        .join(",");
    out.push_str("\r\n");
    out
}

/// Escapes text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A date `YYYY-MM-DD` as Chinese arbiters write it: `2026年1月5日` (no spaces, no leading
/// zeros); an empty date gives the form's blanks `____年__月__日`; anything else is printed as
/// given.
pub fn date_zh(date: &str) -> String {
    match parse_date(date) {
        Some((y, m, d)) => format!("{y}年{m}月{d}日"),
        None if date.trim().is_empty() => "____年__月__日".to_string(),
        None => date.to_string(),
    }
}

/// How a team is named on sheets and tables: its name, and its unit (参赛单位) in brackets when
/// it has one that differs — `浙江一队（浙江）` — so that two teams of one unit are told apart.
pub fn team_label(name: &str, unit: &str) -> String {
    let (name, unit) = (name.trim(), unit.trim());
    if unit.is_empty() || unit == name {
        name.to_string()
    } else if name.is_empty() {
        unit.to_string()
    } else {
        format!("{name}（{unit}）")
    }
}

/// `(year, month, day)` of a `YYYY-MM-DD` date with a valid month and day.
pub fn parse_date(date: &str) -> Option<(u32, u32, u32)> {
    let mut it = date.split('-');
    let (y, m, d) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some()
        || y.len() != 4
        || m.len() != 2
        || d.len() != 2
        || !(y.bytes().chain(m.bytes()).chain(d.bytes())).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (y, m, d): (u32, u32, u32) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days).contains(&d).then_some((y, m, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_escapes() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("场分"), 4);
        assert_eq!(csv_quote("a,b"), "\"a,b\"");
        assert_eq!(csv_quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(text_cell("=1+1"), "'=1+1");
        assert_eq!(text_cell("-1"), "'-1");
        assert_eq!(text_cell("+"), "+");
        assert_eq!(keep_text("3:1"), "=\"3:1\"");
        assert_eq!(keep_text("6 : 4"), "=\"6 : 4\"");
        assert_eq!(keep_text("2+"), "=\"2+\"");
        assert_eq!(keep_text("0-"), "=\"0-\"");
        assert_eq!(keep_text("+"), "+");
        assert_eq!(keep_text("浙江"), "浙江");
        assert_eq!(keep_text("=1:1"), "=\"=1:1\"");
        assert_eq!(csv_quote(&keep_text("3:1")), "\"=\"\"3:1\"\"\"");
        assert_eq!(
            html_escape("<a href='x'>&</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn dates() {
        assert_eq!(date_zh("2026-11-29"), "2026年11月29日");
        assert_eq!(date_zh("2026-01-05"), "2026年1月5日");
        assert_eq!(date_zh(""), "____年__月__日");
        assert_eq!(team_label("浙江一队", "浙江"), "浙江一队（浙江）");
        assert_eq!(team_label("浙江", "浙江"), "浙江");
        assert_eq!(team_label("杭州", ""), "杭州");
        assert_eq!(parse_date("2024-02-29"), Some((2024, 2, 29)));
        assert_eq!(parse_date("2023-02-29"), None);
        assert_eq!(parse_date("2026-13-01"), None);
        assert_eq!(parse_date("2026-1-01"), None);
        assert_eq!(parse_date("２０２６-11-01"), None);
    }
}
