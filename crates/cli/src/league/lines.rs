//! Where each value of a JSON text starts: errors name the path and the line
//! (`matches[1].second (line 11): unknown team "Z"`).

use anyhow::anyhow;
use std::collections::BTreeMap;

/// Maps JSON paths (`matches[2].boards[0]`) to the line where their value starts.
pub(super) struct Lines(pub(super) BTreeMap<String, usize>);

impl Lines {
    pub(super) fn err(&self, path: &str, msg: impl std::fmt::Display) -> anyhow::Error {
        // The nearest enclosing path with a known line.
        let mut p = path.to_string();
        loop {
            if let Some(l) = self.0.get(&p) {
                return anyhow!("{path} (line {l}): {msg}");
            }
            match p.rfind(['.', '[']) {
                Some(i) => p.truncate(i),
                None => return anyhow!("{path}: {msg}"),
            }
        }
    }
}

/// The line on which each JSON value starts, by path (`matches[0].boards[1]`). The text has
/// already been parsed by serde_json, so this scanner only needs to follow valid JSON; on
/// anything unexpected it stops and returns what it has.
pub(super) fn json_lines(text: &str) -> BTreeMap<String, usize> {
    struct Scan<'a> {
        b: &'a [u8],
        i: usize,
        line: usize,
        out: BTreeMap<String, usize>,
    }
    impl Scan<'_> {
        fn ws(&mut self) {
            while let Some(&c) = self.b.get(self.i) {
                match c {
                    b'\n' => {
                        self.line += 1;
                        self.i += 1;
                    }
                    b' ' | b'\t' | b'\r' => self.i += 1,
                    _ => break,
                }
            }
        }
        fn string(&mut self) -> Option<String> {
            if self.b.get(self.i) != Some(&b'"') {
                return None;
            }
            self.i += 1;
            let start = self.i;
            while let Some(&c) = self.b.get(self.i) {
                match c {
                    b'\\' => self.i += 2,
                    b'"' => {
                        let s = String::from_utf8_lossy(&self.b[start..self.i]).into_owned();
                        self.i += 1;
                        return Some(s);
                    }
                    _ => self.i += 1,
                }
            }
            None
        }
        fn value(&mut self, path: &str, depth: usize) -> Option<()> {
            if depth > 128 {
                return None;
            }
            self.ws();
            self.out.insert(path.to_string(), self.line);
            match *self.b.get(self.i)? {
                b'{' => {
                    self.i += 1;
                    loop {
                        self.ws();
                        match *self.b.get(self.i)? {
                            b'}' => {
                                self.i += 1;
                                return Some(());
                            }
                            b',' => self.i += 1,
                            _ => {
                                let key_line = self.line;
                                let key = self.string()?;
                                let p = if path.is_empty() {
                                    key
                                } else {
                                    format!("{path}.{key}")
                                };
                                self.ws();
                                if self.b.get(self.i) != Some(&b':') {
                                    return None;
                                }
                                self.i += 1;
                                self.value(&p, depth + 1)?;
                                // Point errors about a field at its key's line.
                                self.out.insert(p, key_line);
                            }
                        }
                    }
                }
                b'[' => {
                    self.i += 1;
                    let mut n = 0;
                    loop {
                        self.ws();
                        match *self.b.get(self.i)? {
                            b']' => {
                                self.i += 1;
                                return Some(());
                            }
                            b',' => self.i += 1,
                            _ => {
                                self.value(&format!("{path}[{n}]"), depth + 1)?;
                                n += 1;
                            }
                        }
                    }
                }
                b'"' => self.string().map(|_| ()),
                _ => {
                    while let Some(&c) = self.b.get(self.i) {
                        if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                            break;
                        }
                        self.i += 1;
                    }
                    Some(())
                }
            }
        }
    }
    let mut s = Scan {
        b: text.as_bytes(),
        i: 0,
        line: 1,
        out: BTreeMap::new(),
    };
    let _ = s.value("", 0);
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_track_paths() {
        let text = "{\n  \"a\": 1,\n  \"m\": [\n    {\"x\": \"q\\\"[\"},\n    {\n      \"y\": [true]\n    }\n  ]\n}\n";
        let l = json_lines(text);
        assert_eq!(l.get("a"), Some(&2));
        assert_eq!(l.get("m[0]"), Some(&4));
        assert_eq!(l.get("m[1]"), Some(&5));
        assert_eq!(l.get("m[1].y"), Some(&6));
        assert_eq!(l.get("m[1].y[0]"), Some(&6));
    }
}
