//! Aligned text tables (CJK characters take two columns).

/// Display width: CJK and other wide characters take two columns.
fn width(s: &str) -> usize {
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

/// Aligned columns; `left` lists the left-aligned columns (the rest align right).
pub(super) fn render_table(header: &[String], rows: &[Vec<String>], left: &[usize]) -> String {
    let cols = header.len();
    let mut w = vec![0usize; cols];
    for r in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        for (i, c) in r.iter().enumerate().take(cols) {
            w[i] = w[i].max(width(c));
        }
    }
    let mut out = String::new();
    for r in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate().take(cols) {
            let pad = " ".repeat(w[i] - width(c));
            if i > 0 {
                line.push_str("  ");
            }
            if left.contains(&i) || i + 1 == cols {
                line.push_str(c);
                line.push_str(&pad);
            } else {
                line.push_str(&pad);
                line.push_str(c);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("场分"), 4);
    }
}
