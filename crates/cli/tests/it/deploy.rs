//! `deploy/` and `docs/operations.md` against the binary they deploy: every YAML file parses
//! (a small reader of the block-style YAML subset the files use; anything outside it is an
//! error, never skipped), every `chuhe serve` flag, `CHUHE_*` variable and config-file key they
//! name is one `chuhe serve --help` lists, the config files start a real server whose probe
//! paths answer 200, and the manifests agree with each other and with chuhe's shutdown grace
//! (three nodes with distinct node ids on one database and Redis, rolling updates one pod at a
//! time, termination periods, ports, selectors, the systemd unit's keys).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn deploy_dir() -> PathBuf {
    root().join("deploy")
}

/// Every file under `deploy/`, sorted, with its path relative to the repository's root.
fn deploy_files() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&deploy_dir(), &mut paths);
    paths.sort();
    let base = root().canonicalize().unwrap();
    paths
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != ".env"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let rel = p.canonicalize().unwrap();
            let rel = rel.strip_prefix(&base).unwrap().display().to_string();
            (rel, text)
        })
        .collect()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

// ---- a reader for the block-style YAML the files use ----

#[derive(Debug, Clone, PartialEq)]
enum Yaml {
    Str(String),
    Seq(Vec<Yaml>),
    Map(Vec<(String, Yaml)>),
}

impl Yaml {
    fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at a path of keys and (numeric) sequence indexes, e.g. `spec.replicas`.
    fn at(&self, path: &str) -> Option<&Yaml> {
        path.split('.')
            .try_fold(self, |v, k| match (v, k.parse::<usize>()) {
                (Yaml::Seq(s), Ok(i)) => s.get(i),
                _ => v.get(k),
            })
    }

    fn str_at(&self, path: &str) -> &str {
        match self.at(path) {
            Some(Yaml::Str(s)) => s,
            other => panic!("{path}: not a string: {other:?}"),
        }
    }

    fn strs(&self) -> Vec<&str> {
        match self {
            Yaml::Seq(s) => s
                .iter()
                .map(|v| match v {
                    Yaml::Str(s) => s.as_str(),
                    other => panic!("not a string: {other:?}"),
                })
                .collect(),
            other => panic!("not a sequence: {other:?}"),
        }
    }
}

struct Reader {
    lines: Vec<String>,
    pos: usize,
}

/// Every document of a YAML text (`---` separates them; an empty one is left out). Block
/// mappings and sequences, plain and quoted scalars, flow sequences of scalars, `{}`, literal
/// and folded block scalars; anchors, tags, flow mappings, tabs in indentation, uneven
/// indentation and duplicate keys are errors.
fn parse_yaml(text: &str) -> Result<Vec<Yaml>, String> {
    let mut docs = Vec::new();
    let mut current = Vec::new();
    for line in text.lines().chain(std::iter::once("---")) {
        if line.trim_end() == "---" {
            let mut r = Reader {
                lines: std::mem::take(&mut current),
                pos: 0,
            };
            if let Some((indent, _)) = r.peek()? {
                if indent != 0 {
                    return Err(format!("line {}: the document is indented", r.pos + 1));
                }
                docs.push(r.node(0)?);
                if r.peek()?.is_some() {
                    return Err(format!("line {}: unexpected content", r.pos + 1));
                }
            }
        } else {
            current.push(line.to_string());
        }
    }
    Ok(docs)
}

/// The line without its comment (a `#` at its start or after a space, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double, mut prev) = (false, false, ' ');
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// Where a mapping entry's `:` is (followed by a space or the end, outside quotes and
/// brackets), if the text is one.
fn key_colon(s: &str) -> Option<usize> {
    let (mut single, mut double, mut depth) = (false, false, 0i32);
    let b = s.as_bytes();
    for (i, c) in s.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '[' | '{' if !single && !double => depth += 1,
            ']' | '}' if !single && !double => depth -= 1,
            ':' if !single && !double && depth == 0 && (i + 1 == b.len() || b[i + 1] == b' ') => {
                return Some(i);
            }
            _ => {}
        }
    }
    None
}

fn scalar(s: &str) -> Result<Yaml, String> {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix('"') {
        let inner = inner
            .strip_suffix('"')
            .ok_or_else(|| format!("unclosed double quote: {s}"))?;
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(c @ ('"' | '\\' | '/')) => out.push(c),
                    other => return Err(format!("unknown escape \\{other:?} in {s}")),
                }
            } else if c == '"' {
                return Err(format!("a quote inside a double-quoted string: {s}"));
            } else {
                out.push(c);
            }
        }
        return Ok(Yaml::Str(out));
    }
    if let Some(inner) = s.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .ok_or_else(|| format!("unclosed single quote: {s}"))?;
        if inner.replace("''", "").contains('\'') {
            return Err(format!("a quote inside a single-quoted string: {s}"));
        }
        return Ok(Yaml::Str(inner.replace("''", "'")));
    }
    if let Some(inner) = s.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| format!("unclosed flow sequence: {s}"))?;
        if inner.trim().is_empty() {
            return Ok(Yaml::Seq(Vec::new()));
        }
        let mut items = Vec::new();
        let (mut single, mut double, mut start) = (false, false, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '\'' if !double => single = !single,
                '"' if !single => double = !double,
                '[' | ']' | '{' | '}' if !single && !double => {
                    return Err(format!("nested flow collections are not read here: {s}"));
                }
                ',' if !single && !double => {
                    items.push(scalar(&inner[start..i])?);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(scalar(&inner[start..])?);
        return Ok(Yaml::Seq(items));
    }
    if s == "{}" {
        return Ok(Yaml::Map(Vec::new()));
    }
    if s.is_empty() || s.starts_with(['{', ']', '}', '&', '*', '!', '%', '@', '`', '|', '>']) {
        return Err(format!("not a scalar this reader takes: {s:?}"));
    }
    if key_colon(s).is_some() {
        return Err(format!("a `: ` inside a plain scalar (quote it): {s}"));
    }
    Ok(Yaml::Str(s.to_string()))
}

impl Reader {
    /// The next line with content: (indent, content without comment), blank lines skipped.
    fn peek(&mut self) -> Result<Option<(usize, String)>, String> {
        while let Some(line) = self.lines.get(self.pos) {
            let content = strip_comment(line);
            if content.trim().is_empty() {
                self.pos += 1;
                continue;
            }
            let indent = content.len() - content.trim_start_matches(' ').len();
            if content[indent..].starts_with('\t') {
                return Err(format!("line {}: a tab in the indentation", self.pos + 1));
            }
            return Ok(Some((indent, content.trim().to_string())));
        }
        Ok(None)
    }

    fn node(&mut self, indent: usize) -> Result<Yaml, String> {
        match self.peek()? {
            Some((_, c)) if c == "-" || c.starts_with("- ") => self.seq(indent),
            Some(_) => self.map(indent),
            None => Err("a node expected at the end".into()),
        }
    }

    fn seq(&mut self, indent: usize) -> Result<Yaml, String> {
        let mut items = Vec::new();
        while let Some((i, c)) = self.peek()? {
            if i < indent || !(c == "-" || c.starts_with("- ")) {
                if i > indent {
                    return Err(format!("line {}: uneven indentation", self.pos + 1));
                }
                break;
            }
            if i > indent {
                return Err(format!("line {}: uneven indentation", self.pos + 1));
            }
            let rest = c[1..].trim_start();
            if rest.is_empty() {
                self.pos += 1;
                match self.peek()? {
                    Some((j, _)) if j > indent => items.push(self.node(j)?),
                    _ => return Err(format!("line {}: an empty item", self.pos)),
                }
            } else if key_colon(rest).is_some() && !rest.starts_with(['"', '\'', '[']) {
                // `- key: value`: a mapping whose first entry sits after the dash.
                let column = i + (c.len() - rest.len());
                self.lines[self.pos] = format!("{}{}", " ".repeat(column), rest);
                items.push(self.map(column)?);
            } else {
                items.push(scalar(rest).map_err(|e| format!("line {}: {e}", self.pos + 1))?);
                self.pos += 1;
            }
        }
        Ok(Yaml::Seq(items))
    }

    fn map(&mut self, indent: usize) -> Result<Yaml, String> {
        let mut entries: Vec<(String, Yaml)> = Vec::new();
        while let Some((i, c)) = self.peek()? {
            if i < indent || (i == indent && (c == "-" || c.starts_with("- "))) {
                break;
            }
            let line = self.pos + 1;
            if i > indent {
                return Err(format!("line {line}: uneven indentation"));
            }
            let colon = key_colon(&c).ok_or_else(|| format!("line {line}: not `key: value`"))?;
            let key = match scalar(&c[..colon]).map_err(|e| format!("line {line}: {e}"))? {
                Yaml::Str(k) => k,
                _ => return Err(format!("line {line}: a key that is not a string")),
            };
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(format!("line {line}: duplicate key {key:?}"));
            }
            let rest = c[colon + 1..].trim();
            self.pos += 1;
            let value = if rest.is_empty() {
                match self.peek()? {
                    Some((j, _)) if j > indent => self.node(j)?,
                    Some((j, n)) if j == indent && (n == "-" || n.starts_with("- ")) => {
                        self.seq(indent)?
                    }
                    _ => Yaml::Str(String::new()),
                }
            } else if rest.starts_with(['|', '>']) {
                if !matches!(rest, "|" | "|-" | ">" | ">-") {
                    return Err(format!("line {line}: block scalar header {rest:?}"));
                }
                self.block_scalar(indent, rest)
            } else {
                scalar(rest).map_err(|e| format!("line {line}: {e}"))?
            };
            entries.push((key, value));
        }
        Ok(Yaml::Map(entries))
    }

    /// The lines of a `|` or `>` scalar: every following line indented past `parent` (blank
    /// lines included), less the first line's indentation.
    fn block_scalar(&mut self, parent: usize, header: &str) -> Yaml {
        let mut lines = Vec::new();
        let mut cut = None;
        while let Some(line) = self.lines.get(self.pos) {
            let indent = line.len() - line.trim_start_matches(' ').len();
            if !line.trim().is_empty() && indent <= parent {
                break;
            }
            let cut = *cut.get_or_insert(if line.trim().is_empty() {
                usize::MAX
            } else {
                indent
            });
            lines.push(line.get(cut.min(line.len())..).unwrap_or("").to_string());
            self.pos += 1;
        }
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        let sep = if header.starts_with('>') { " " } else { "\n" };
        let mut s = lines.join(sep);
        if !header.ends_with('-') {
            s.push('\n');
        }
        Yaml::Str(s)
    }
}

#[test]
fn the_yaml_reader_reads_the_subset_and_refuses_the_rest() {
    let text = "a: 1\nb:\n  - x\n  - k: v\n    l: \"w # not a comment\"\n  - [p, 'q']\nc: |\n  one\n  two\nd: {}\ne:\n- f\n---\n# only a comment\n---\ng: h # a comment\n";
    let docs = parse_yaml(text).unwrap();
    assert_eq!(docs.len(), 2);
    let d = &docs[0];
    assert_eq!(d.str_at("a"), "1");
    assert_eq!(d.str_at("b.0"), "x");
    assert_eq!(d.str_at("b.1.k"), "v");
    assert_eq!(d.str_at("b.1.l"), "w # not a comment");
    assert_eq!(d.at("b.2").unwrap().strs(), ["p", "q"]);
    assert_eq!(d.str_at("c"), "one\ntwo\n");
    assert_eq!(d.at("d"), Some(&Yaml::Map(Vec::new())));
    assert_eq!(d.at("e").unwrap().strs(), ["f"]);
    assert_eq!(docs[1].str_at("g"), "h");
    for (bad, why) in [
        ("a: 1\na: 2\n", "duplicate key"),
        ("a:\n  b: 1\n   c: 2\n", "uneven indentation"),
        ("a:\n\t- b\n", "tab"),
        ("a: \"b\n", "unclosed double quote"),
        ("a: &x b\n", "not a scalar"),
        ("a: [b, [c]]\n", "nested flow"),
        ("a: b: c\n", "inside a plain scalar"),
        ("a\n", "not `key: value`"),
    ] {
        let e = parse_yaml(bad).unwrap_err();
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}

// ---- what the binary offers ----

struct Help {
    flags: BTreeSet<String>,
    env: BTreeSet<String>,
}

fn serve_help() -> Help {
    let out = Command::new(env!("CARGO_BIN_EXE_chuhe"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut flags = BTreeSet::new();
    let mut env = BTreeSet::new();
    for line in text.lines() {
        for t in line.split_whitespace().take(2) {
            if let Some(f) = t.strip_prefix("--") {
                flags.insert(f.trim_end_matches(',').to_string());
            }
        }
        let mut rest = line;
        while let Some(i) = rest.find("[env: ") {
            let name = &rest[i + 6..];
            let end = name.find(['=', ']']).unwrap();
            env.insert(name[..end].to_string());
            rest = &name[end..];
        }
    }
    assert!(
        flags.contains("database-url") && flags.contains("help"),
        "{text}"
    );
    assert!(env.contains("CHUHE_DATABASE_URL"), "{text}");
    Help { flags, env }
}

/// Every `chuhe serve` invocation in `text`: (line number, the flags after `serve`). An
/// invocation is the token `serve` after a token ending in `chuhe` (a path too), after `chuhe
/// … --`, or first in a `CMD`, `args:` or `command:` array. The flags end at a comment, a pipe
/// or a shell separator.
fn serve_invocations(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let tokens: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || "[]\",'`()".contains(c))
            .filter(|t| !t.is_empty())
            .collect();
        for (k, t) in tokens.iter().enumerate() {
            if *t != "serve" || k == 0 {
                continue;
            }
            let before = tokens[k - 1];
            let invoked = before.ends_with("chuhe")
                || ["CMD", "args:", "command:"].contains(&before)
                || (before == "--" && tokens[..k].iter().any(|t| t.ends_with("chuhe")));
            if !invoked {
                continue;
            }
            let flags = tokens[k + 1..]
                .iter()
                .take_while(|t| !["#", "|", "&&", "||", ";", "&", ">", "2>&1"].contains(t))
                .filter_map(|t| t.strip_prefix("--"))
                .map(|f| f.split('=').next().unwrap_or(f).to_string())
                .collect();
            found.push((n + 1, flags));
        }
    }
    found
}

/// What in `text` does not exist in `chuhe serve --help`: flags of `chuhe serve` invocations and
/// `CHUHE_*` variable names, each as `file:line: …`.
fn unknown_names(file: &str, text: &str, help: &Help) -> Vec<String> {
    let mut bad = Vec::new();
    for (line, flags) in serve_invocations(text) {
        for f in flags {
            if !help.flags.contains(&f) {
                bad.push(format!("{file}:{line}: `chuhe serve --{f}` is not a flag"));
            }
        }
    }
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("CHUHE_") {
            let name: String = rest[i..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            // `CHUHE_*` in prose names them all; the tests' own variables are not serve's.
            let prose = name == "CHUHE_" || name.starts_with("CHUHE_TEST_");
            if !prose && !help.env.contains(&name) {
                bad.push(format!(
                    "{file}:{}: {name} is not a variable chuhe serve reads",
                    n + 1
                ));
            }
            rest = &rest[i + name.len()..];
        }
    }
    bad
}

/// The config-file keys of a TOML text that `chuhe serve` does not take.
fn unknown_config_keys(toml_text: &str, help: &Help) -> Vec<String> {
    let table: toml::Table = toml::from_str(toml_text).unwrap();
    table
        .keys()
        .filter(|k| *k == "config" || !help.flags.contains(&k.replace('_', "-")))
        .cloned()
        .collect()
}

fn yaml_file(rel: &str) -> Vec<Yaml> {
    parse_yaml(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn kube(kind: &str) -> Yaml {
    for (rel, _) in deploy_files() {
        if rel.starts_with("deploy/kubernetes/") && rel.ends_with(".yaml") {
            for d in yaml_file(&rel) {
                if d.at("kind") == Some(&Yaml::Str(kind.into())) {
                    return d;
                }
            }
        }
    }
    panic!("no {kind} in deploy/kubernetes/");
}

fn config_map_toml() -> String {
    // Its key has a dot, so not through `at`.
    match kube("ConfigMap")
        .at("data")
        .and_then(|d| d.get("chuhe.toml"))
    {
        Some(Yaml::Str(s)) => s.clone(),
        other => panic!("the ConfigMap has no data chuhe.toml: {other:?}"),
    }
}

#[test]
fn every_yaml_file_under_deploy_parses_and_each_manifest_names_its_kind() {
    let mut yaml = 0;
    for (rel, text) in deploy_files() {
        if !(rel.ends_with(".yaml") || rel.ends_with(".yml")) {
            continue;
        }
        yaml += 1;
        let docs = parse_yaml(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert!(!docs.is_empty(), "{rel}: no document");
        if rel.starts_with("deploy/kubernetes/") {
            for d in &docs {
                for key in ["apiVersion", "kind"] {
                    assert!(!d.str_at(key).is_empty(), "{rel}: no {key}");
                }
                if d.str_at("kind") != "Kustomization" {
                    assert!(!d.str_at("metadata.name").is_empty(), "{rel}");
                }
            }
        }
    }
    assert!(yaml >= 7, "the compose file and the six manifests: {yaml}");
    // kustomization.yaml lists every manifest beside it, and only those.
    let listed: BTreeSet<String> = kube("Kustomization")
        .at("resources")
        .unwrap()
        .strs()
        .into_iter()
        .map(String::from)
        .collect();
    let present: BTreeSet<String> = deploy_files()
        .into_iter()
        .filter_map(|(rel, _)| rel.strip_prefix("deploy/kubernetes/").map(String::from))
        .filter(|f| f != "kustomization.yaml")
        .collect();
    assert_eq!(listed, present);
}

#[test]
fn flags_variables_and_config_keys_in_deploy_and_the_operations_guide_exist() {
    let help = serve_help();
    let mut bad = Vec::new();
    let mut invocations = 0;
    let mut files = deploy_files();
    files.push(("docs/operations.md".into(), read("docs/operations.md")));
    for (rel, text) in &files {
        invocations += serve_invocations(text).len();
        bad.extend(unknown_names(rel, text, &help));
    }
    for (rel, text) in [
        ("deploy/chuhe.toml".to_string(), read("deploy/chuhe.toml")),
        ("the ConfigMap".to_string(), config_map_toml()),
    ] {
        for k in unknown_config_keys(&text, &help) {
            bad.push(format!("{rel}: `{k}` is not a config-file key"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The Dockerfile's CMD, compose's command, the Deployment's args, the unit's ExecStart
    // and the guide's examples.
    assert!(
        invocations >= 8,
        "only {invocations} `chuhe serve` invocations found"
    );
    // The checks catch a misspelling of each kind.
    let typo = "ExecStart=/usr/local/bin/chuhe serve --databse-url x --listen 1\n\
                args: [\"serve\", \"--log-formt\", \"json\"]\nCHUHE_DATABASE_ULR=x\n";
    let caught = unknown_names("typo", typo, &help);
    assert_eq!(caught.len(), 3, "{caught:?}");
    assert!(caught[0].contains("--databse-url") && caught[1].contains("--log-formt"));
    assert!(caught[2].contains("CHUHE_DATABASE_ULR"));
    assert_eq!(
        unknown_config_keys("pg_writer = 2\nconfig = \"x\"\nlog = \"info\"\n", &help),
        ["config", "pg_writer"]
    );
}

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `chuhe serve --config FILE` on a free port and a temporary SQLite file; its address once it
/// says it serves (within 20 s).
fn serve_with_config(dir: &Path, config: &Path, env: &[(String, String)]) -> (Server, String) {
    let db = format!("sqlite://{}", dir.join("deploy.db").display());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chuhe"));
    cmd.args(["serve", "--config"]).arg(config).args([
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        &db,
    ]);
    for (k, _) in std::env::vars() {
        if k.starts_with("CHUHE_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().cloned());
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if let Some(rest) = line.strip_prefix("chuhe serving on http://") {
                let _ = tx.send(rest.split(' ').next().unwrap_or("").to_string());
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("chuhe serve --config {} did not start", config.display()));
    (server, addr)
}

fn http_status(addr: &str, path: &str) -> u16 {
    http_get(addr, path, "").0
}

/// `GET path` with extra header lines (each ending in CRLF): the status code and the answer.
fn http_get(addr: &str, path: &str, headers: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("GET {path}: {answer:?}"));
    (status, answer)
}

/// The metric names in docs/operations.md's "Monitoring" section (`chuhe_…` in backticks, less
/// a `{label}`).
fn documented_metrics() -> BTreeSet<String> {
    let doc = read("docs/operations.md");
    let start = doc.find("\n## Monitoring").unwrap();
    let end = start + doc[start + 1..].find("\n## ").unwrap();
    doc[start..end]
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| t.starts_with("chuhe_") && !t.contains("::"))
        .map(|t| t.split('{').next().unwrap_or(t).to_string())
        .collect()
}

/// The compose file's `CHUHE_*` settings for its first chuhe node, `${METRICS_TOKEN:-}` read as
/// `token`.
fn compose_chuhe_env(token: &str) -> Vec<(String, String)> {
    let compose = &yaml_file("deploy/compose.yaml")[0];
    let Some(Yaml::Map(env)) = compose.at("services.chuhe-1.environment") else {
        panic!("compose: chuhe has no environment map");
    };
    env.iter()
        .map(|(k, v)| {
            let Yaml::Str(v) = v else { panic!("{k}") };
            (k.clone(), v.replace("${METRICS_TOKEN:-}", token))
        })
        .collect()
}

/// The image's `ENV` settings (`ENV A=1 \` continued `B=2` lines).
fn dockerfile_env() -> Vec<(String, String)> {
    let text = read("deploy/Dockerfile");
    let mut env = Vec::new();
    let mut in_env = false;
    for line in text.lines() {
        let body = match line.strip_prefix("ENV ") {
            Some(b) => b,
            None if in_env => line,
            None => continue,
        };
        in_env = body.trim_end().ends_with('\\');
        for pair in body.trim_end_matches('\\').split_whitespace() {
            let (k, v) = pair.split_once('=').unwrap();
            env.push((k.to_string(), v.to_string()));
        }
    }
    assert!(!env.is_empty(), "the Dockerfile sets no ENV");
    env
}

/// The probe and health-check paths the deployments use.
fn probe_paths() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    let d = kube("Deployment");
    for p in ["startupProbe", "livenessProbe", "readinessProbe"] {
        let path = d.str_at(&format!("spec.template.spec.containers.0.{p}.httpGet.path"));
        paths.push((format!("Deployment {p}"), path.to_string()));
    }
    let compose = &yaml_file("deploy/compose.yaml")[0];
    let test = compose
        .at("services.chuhe-1.healthcheck.test")
        .unwrap()
        .strs();
    let url = test.iter().find(|t| t.starts_with("http://")).unwrap();
    let path = url.splitn(4, '/').nth(3).unwrap();
    paths.push(("compose healthcheck".into(), format!("/{path}")));
    for line in read("deploy/Caddyfile").lines() {
        if let Some(p) = line.trim().strip_prefix("health_uri ") {
            paths.push(("Caddyfile health_uri".into(), p.trim().to_string()));
        }
    }
    paths
}

#[test]
fn the_config_files_start_a_server_whose_probe_paths_answer() {
    let probes = probe_paths();
    let by = |what: &str| probes.iter().find(|(w, _)| w == what).unwrap().1.as_str();
    assert_eq!(by("Deployment livenessProbe"), "/healthz");
    assert_eq!(by("Deployment readinessProbe"), "/readyz");
    assert_eq!(by("compose healthcheck"), "/readyz");
    assert_eq!(by("Caddyfile health_uri"), "/readyz");
    let dir = std::env::temp_dir().join(format!("chuhe-deploy-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let from_map = dir.join("configmap.toml");
    std::fs::write(&from_map, config_map_toml()).unwrap();
    // The compose file's chuhe: its config file with its CHUHE_* settings and the image's
    // (less the database, Redis, node id and listen address: one node on SQLite here), its
    // metrics token variable set.
    let token = "deploy-test-metrics-token-0123";
    let mut compose_env = compose_chuhe_env(token);
    compose_env.extend(dockerfile_env());
    compose_env.retain(|(k, _)| {
        ![
            "CHUHE_DATABASE_URL",
            "CHUHE_REDIS_URL",
            "CHUHE_NODE_ID",
            "CHUHE_LISTEN",
        ]
        .contains(&k.as_str())
    });
    assert!(compose_env.iter().any(|(k, _)| k == "CHUHE_METRICS_TOKEN"));
    for (config, env) in [
        (deploy_dir().join("chuhe.toml"), compose_env),
        (from_map, Vec::new()),
    ] {
        let (_server, addr) = serve_with_config(&dir, &config, &env);
        for (what, path) in &probes {
            assert_eq!(http_status(&addr, path), 200, "{what} {path} ({config:?})");
        }
        // A path the server does not serve is not 200: the check above can fail.
        assert_eq!(http_status(&addr, "/readiness"), 404);
        if !env.is_empty() {
            // Prometheus's token opens /metrics; nothing else does.
            let bearer = format!("Authorization: Bearer {token}\r\n");
            let (status, metrics) = http_get(&addr, "/metrics", &bearer);
            assert_eq!(status, 200);
            assert_eq!(http_status(&addr, "/metrics"), 401);
            // Every metric docs/operations.md names is one the server exports.
            let names = documented_metrics();
            assert!(names.len() >= 15, "{names:?}");
            for name in names {
                assert!(
                    metrics.contains(&format!("# TYPE {name} ")),
                    "docs/operations.md names {name}, which /metrics does not export"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn seconds(s: &str) -> u64 {
    let s = s.trim();
    if let Some(m) = s.strip_suffix("min") {
        return m.parse::<u64>().unwrap() * 60;
    }
    s.trim_end_matches('s')
        .parse()
        .unwrap_or_else(|_| panic!("not a duration: {s}"))
}

/// chuhe's own shutdown bound: stages after SIGTERM end within this.
fn shutdown_grace() -> u64 {
    chuhe_server::Config::default().shutdown_grace.as_secs()
}

/// A container's `env` entry named `name`.
fn env_entry<'a>(container: &'a Yaml, name: &str) -> &'a Yaml {
    let Some(Yaml::Seq(env)) = container.at("env") else {
        panic!("the container has no env list");
    };
    env.iter()
        .find(|e| e.get("name") == Some(&Yaml::Str(name.into())))
        .unwrap_or_else(|| panic!("no {name} in the container's env"))
}

#[test]
fn the_kubernetes_manifests_run_three_nodes_and_agree_with_each_other() {
    let d = kube("Deployment");
    assert_eq!(d.str_at("spec.replicas"), "3", "three nodes");
    // Rolling updates one pod at a time, the new one ready before an old one stops.
    assert_eq!(d.str_at("spec.strategy.type"), "RollingUpdate");
    assert_eq!(d.str_at("spec.strategy.rollingUpdate.maxUnavailable"), "0");
    assert_eq!(d.str_at("spec.strategy.rollingUpdate.maxSurge"), "1");
    // Evictions take one pod at a time, never all.
    let pdb = kube("PodDisruptionBudget");
    assert_eq!(pdb.str_at("spec.maxUnavailable"), "1");
    // Every pod is a node of the same cluster: the database and Redis from Secrets, its own
    // name as its node id.
    let c0 = d.at("spec.template.spec.containers.0").unwrap();
    assert_eq!(
        env_entry(c0, "CHUHE_NODE_ID").str_at("valueFrom.fieldRef.fieldPath"),
        "metadata.name"
    );
    for (var, secret) in [
        ("CHUHE_DATABASE_URL", "chuhe-database"),
        ("CHUHE_REDIS_URL", "chuhe-redis"),
    ] {
        let e = env_entry(c0, var);
        assert_eq!(e.str_at("valueFrom.secretKeyRef.name"), secret, "{var}");
        assert!(e.at("valueFrom.secretKeyRef.optional").is_none(), "{var}");
    }
    let labels = d.at("spec.template.metadata.labels").unwrap();
    assert_eq!(d.at("spec.selector.matchLabels"), Some(labels));
    assert_eq!(
        kube("PodDisruptionBudget").at("spec.selector.matchLabels"),
        Some(labels)
    );
    assert_eq!(kube("Service").at("spec.selector"), Some(labels));
    let pod = d.at("spec.template.spec").unwrap();
    let c = pod.at("containers.0").unwrap();
    assert_eq!(c.at("args").unwrap().strs()[0], "serve");
    // Probes and the Service name a port the container has; it is the one the image listens on.
    let port_name = c.str_at("ports.0.name");
    assert_eq!(c.str_at("ports.0.containerPort"), "8080");
    assert!(read("deploy/Dockerfile").contains("CHUHE_LISTEN=0.0.0.0:8080"));
    for p in ["startupProbe", "livenessProbe", "readinessProbe"] {
        assert_eq!(c.str_at(&format!("{p}.httpGet.port")), port_name, "{p}");
    }
    assert_eq!(kube("Service").str_at("spec.ports.0.targetPort"), port_name);
    // The readiness probe waits longer than the server's own store deadline.
    let store_timeout = chuhe_server::Config::default().store_timeout.as_secs();
    assert!(seconds(c.str_at("readinessProbe.timeoutSeconds")) > store_timeout);
    // Termination: the preStop pause plus chuhe's shutdown grace, with room to spare.
    let pre_stop = c.at("lifecycle.preStop.exec.command").unwrap().strs();
    assert_eq!(pre_stop[0], "sleep");
    let pre_stop: u64 = pre_stop[1].parse().unwrap();
    let period = seconds(pod.str_at("terminationGracePeriodSeconds"));
    assert!(period >= pre_stop + shutdown_grace() + 10, "{period}");
    // The config volume is the ConfigMap, mounted where --config points.
    assert_eq!(
        pod.str_at("volumes.0.configMap.name"),
        kube("ConfigMap").str_at("metadata.name")
    );
    let mount = c.str_at("volumeMounts.0.mountPath");
    let args = c.at("args").unwrap().strs();
    assert_eq!(args[2], format!("{mount}/chuhe.toml"));
    assert!(config_map_toml().contains("pg_writers"));
    // The Ingress sends to the Service's port.
    assert_eq!(
        kube("Ingress").str_at("spec.rules.0.http.paths.0.backend.service.name"),
        kube("Service").str_at("metadata.name")
    );
}

#[test]
fn the_compose_file_runs_three_chuhe_nodes_with_their_dependencies() {
    let compose = &yaml_file("deploy/compose.yaml")[0];
    let Some(Yaml::Map(services)) = compose.at("services") else {
        panic!("no services");
    };
    let names: Vec<&str> = services.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "chuhe-1", "chuhe-2", "chuhe-3", "postgres", "redis", "caddy"
        ]
    );
    let nodes = ["chuhe-1", "chuhe-2", "chuhe-3"];
    let chuhe_services = services
        .iter()
        .filter(|(_, s)| {
            s.get("build").is_some()
                || matches!(s.get("image"), Some(Yaml::Str(i)) if i.starts_with("chuhe"))
        })
        .count();
    assert_eq!(chuhe_services, 3, "three chuhe nodes");
    let env_of = |node: &str, var: &str| -> String {
        compose
            .str_at(&format!("services.{node}.environment.{var}"))
            .to_string()
    };
    let mut ids = BTreeSet::new();
    for node in nodes {
        let chuhe = compose.at(&format!("services.{node}")).unwrap();
        assert!(chuhe.get("deploy").is_none() && chuhe.get("scale").is_none());
        assert_eq!(chuhe.at("command").unwrap().strs()[0], "serve");
        assert_eq!(
            chuhe.str_at("image"),
            compose.str_at("services.chuhe-1.image")
        );
        assert!(seconds(chuhe.str_at("stop_grace_period")) >= shutdown_grace() + 10);
        assert!(chuhe.str_at("ulimits.nofile.soft").parse::<u64>().unwrap() >= 20_000);
        assert!(
            chuhe.get("ports").is_none(),
            "{node} is reached through Caddy"
        );
        // One database, one Redis, an id of its own.
        for var in [
            "CHUHE_DATABASE_URL",
            "CHUHE_REDIS_URL",
            "CHUHE_MAX_CONNECTIONS_PER_ADDRESS",
        ] {
            assert_eq!(env_of(node, var), env_of("chuhe-1", var), "{node} {var}");
        }
        assert!(env_of(node, "CHUHE_REDIS_URL").starts_with("redis://redis:"));
        assert!(
            ids.insert(env_of(node, "CHUHE_NODE_ID")),
            "{node}: a node id twice"
        );
        // Caddy waits for every node and proxies to every node.
        assert!(
            compose
                .at(&format!("services.caddy.depends_on.{node}"))
                .is_some()
        );
    }
    let upstreams: Vec<String> = read("deploy/Caddyfile")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("reverse_proxy "))
        .flat_map(|l| l.split_whitespace().filter(|t| *t != "{").map(String::from))
        .collect();
    assert_eq!(
        upstreams,
        nodes.map(|n| format!("{n}:8080")),
        "Caddy proxies to every node"
    );
    // Files it mounts and builds from exist.
    let chuhe = compose.at("services.chuhe-1").unwrap();
    let context = deploy_dir().join(chuhe.str_at("build.context"));
    assert!(context.join(chuhe.str_at("build.dockerfile")).is_file());
    for s in ["chuhe-1", "chuhe-2", "chuhe-3", "caddy"] {
        for v in compose.at(&format!("services.{s}.volumes")).unwrap().strs() {
            if let Some(local) = v.strip_prefix("./") {
                let file = local.split(':').next().unwrap();
                assert!(deploy_dir().join(file).is_file(), "{s}: {v}");
            }
        }
    }
    assert!(compose.at("services.caddy.ports").is_some());
}

#[test]
fn the_dockerfile_builds_the_binary_and_runs_it_unprivileged() {
    let text = read("deploy/Dockerfile");
    let directive = |name: &str| -> Vec<&str> {
        text.lines()
            .filter_map(|l| l.strip_prefix(name).map(str::trim))
            .collect()
    };
    assert!(directive("FROM ").len() >= 2, "a multi-stage build");
    assert!(text.contains("cargo build --release --locked -p chuhe"));
    let parse = |v: &str| -> Vec<String> { serde_json::from_str(v).unwrap() };
    let entry = parse(directive("ENTRYPOINT ")[0]);
    assert!(entry[0].ends_with("/chuhe"), "{entry:?}");
    assert_eq!(parse(directive("CMD ")[0]), ["serve"]);
    assert_eq!(directive("USER "), ["chuhe"]);
    assert!(deploy_dir().join("Dockerfile.dockerignore").is_file());
}

#[test]
fn the_systemd_unit_runs_chuhe_as_its_own_user_with_limits_and_restarts() {
    let text = read("deploy/systemd/chuhe.service");
    let mut section = String::new();
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.to_string();
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("chuhe.service:{}: not key=value: {line}", n + 1));
        assert!(!section.is_empty(), "a key before any section");
        keys.push((section.clone(), k.to_string(), v.to_string()));
    }
    let get = |s: &str, k: &str| -> &str {
        keys.iter()
            .find(|(a, b, _)| a == s && b == k)
            .map(|(_, _, v)| v.as_str())
            .unwrap_or_else(|| panic!("no {k}= in [{s}]"))
    };
    let exec: Vec<&str> = get("Service", "ExecStart").split_whitespace().collect();
    assert!(exec[0].starts_with('/') && exec[0].ends_with("/chuhe") && exec[1] == "serve");
    let user = get("Service", "User");
    assert!(!user.is_empty() && user != "root");
    assert!(get("Service", "LimitNOFILE").parse::<u64>().unwrap() >= 20_000);
    assert_eq!(get("Service", "Restart"), "on-failure");
    assert_eq!(get("Service", "KillSignal"), "SIGTERM");
    assert!(seconds(get("Service", "TimeoutStopSec")) >= shutdown_grace() + 10);
    assert_eq!(get("Service", "NoNewPrivileges"), "yes");
    assert_eq!(get("Service", "ProtectSystem"), "strict");
    assert_eq!(get("Install", "WantedBy"), "multi-user.target");
    // Keys systemd would ignore in [Service] (they belong to [Unit]).
    for k in ["StartLimitIntervalSec", "StartLimitBurst"] {
        assert!(
            keys.iter().all(|(s, key, _)| key != k || s == "Unit"),
            "{k}"
        );
    }
}
