//! Who may frame an event's embed pages: the `frame-ancestors` sources an event's
//! `broadcast.embed_ancestors` asks for, checked when the event file is, and bounded by the
//! operator's sources (`chuhe serve --embed-ancestors`) when a page is served.

/// Checks an event's `broadcast.embed_ancestors`: 1 to 32 sources, each `'self'`, an origin
/// `http(s)://host[:port]` whose host may begin with `*.` (any subdomain), or `'none'` alone.
pub fn check_ancestors(list: &[String]) -> Result<(), String> {
    if list.is_empty() || list.len() > 32 {
        return Err("1 to 32 sources (`'none'` alone for none)".into());
    }
    for src in list {
        if src == "'none'" {
            if list.len() > 1 {
                return Err("`'none'` stands alone".into());
            }
            continue;
        }
        if src == "'self'" {
            continue;
        }
        if origin(src).is_none() {
            return Err(format!(
                "{src:?}: not an origin such as https://news.example or https://*.example.org \
                 (scheme and host, an optional port, no path), nor 'self' or 'none'"
            ));
        }
    }
    Ok(())
}

/// An origin source split into (scheme, host, port): `https://*.example.org:8443` →
/// ("https", "*.example.org", Some("8443")). None for anything else.
fn origin(src: &str) -> Option<(String, String, Option<String>)> {
    if src.len() > 200 {
        return None;
    }
    let (scheme, rest) = src.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "https" && scheme != "http" {
        return None;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => {
            if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (h, Some(p.to_string()))
        }
        None => (rest, None),
    };
    let host = host.to_ascii_lowercase();
    let bare = host.strip_prefix("*.").unwrap_or(&host);
    let label_ok = |l: &str| {
        !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if bare.is_empty() || !bare.split('.').all(label_ok) {
        return None;
    }
    Some((scheme, host, port))
}

/// Whether the operator's source `op` allows the event's source `ev`: the same source, or
/// `ev`'s host under `op`'s `*.` host (same scheme and port), or `op` a bare scheme
/// (`https:`) and `ev` of that scheme.
fn allows(op: &str, ev: &str) -> bool {
    if op.eq_ignore_ascii_case(ev) {
        return true;
    }
    let Some((es, eh, ep)) = origin(ev) else {
        return false;
    };
    if let Some(scheme) = op.strip_suffix(':') {
        return scheme.eq_ignore_ascii_case(&es);
    }
    let Some((os, oh, opt)) = origin(op) else {
        return false;
    };
    if os != es || opt != ep {
        return false;
    }
    match oh.strip_prefix("*.") {
        Some(domain) => eh
            .strip_prefix("*.")
            .unwrap_or(&eh)
            .strip_suffix(domain)
            .is_some_and(|sub| sub.ends_with('.') || (sub.is_empty() && eh.starts_with("*."))),
        None => oh == eh,
    }
}

/// The `frame-ancestors` sources of an event's embed pages: the operator's (`operator`, the
/// server's `--embed-ancestors`) when the event sets none; else the event's sources that the
/// operator's allow — all of them when the operator's are `*`, each one that an operator's
/// source names or covers otherwise — and `'none'` when that leaves none (or either says
/// `'none'`).
pub fn ancestors(operator: &str, event: Option<&[String]>) -> String {
    let Some(event) = event else {
        return operator.to_string();
    };
    let ops: Vec<&str> = operator.split_whitespace().collect();
    if ops.contains(&"'none'") || event.iter().any(|e| e == "'none'") {
        return "'none'".into();
    }
    let kept: Vec<&str> = event
        .iter()
        .map(String::as_str)
        .filter(|e| ops.contains(&"*") || ops.iter().any(|o| allows(o, e)))
        .collect();
    if kept.is_empty() {
        "'none'".into()
    } else {
        kept.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_events_sources_within_the_operators() {
        let ev = v(&["https://news.example", "https://live.club.example.org"]);
        assert_eq!(ancestors("*", None), "*");
        assert_eq!(
            ancestors("*", Some(&ev)),
            "https://news.example https://live.club.example.org"
        );
        assert_eq!(
            ancestors("https://news.example", Some(&ev)),
            "https://news.example"
        );
        assert_eq!(
            ancestors("https://*.example.org", Some(&ev)),
            "https://live.club.example.org"
        );
        assert_eq!(ancestors("https:", Some(&ev)), ancestors("*", Some(&ev)));
        assert_eq!(ancestors("http://news.example", Some(&ev)), "'none'");
        assert_eq!(ancestors("'none'", Some(&ev)), "'none'");
        assert_eq!(ancestors("*", Some(&v(&["'none'"]))), "'none'");
        assert_eq!(
            ancestors("'self' https://a.example", Some(&v(&["'self'"]))),
            "'self'"
        );
        // A wildcard is kept only under a wildcard at least as wide.
        let wide = v(&["https://*.example.org"]);
        assert_eq!(
            ancestors("https://*.example.org", Some(&wide)),
            "https://*.example.org"
        );
        assert_eq!(ancestors("https://club.example.org", Some(&wide)), "'none'");
        // The host's own domain is not under its wildcard.
        assert_eq!(
            ancestors("https://*.example.org", Some(&v(&["https://example.org"]))),
            "'none'"
        );
        assert_eq!(
            ancestors(
                "https://*.example.org:8443",
                Some(&v(&["https://a.example.org"]))
            ),
            "'none'"
        );
    }

    #[test]
    fn only_origins_self_or_none_alone() {
        assert!(
            check_ancestors(&v(&[
                "https://news.example",
                "'self'",
                "http://*.b.example:8080"
            ]))
            .is_ok()
        );
        for bad in [
            vec![],
            v(&["https://news.example/path"]),
            v(&["news.example"]),
            v(&["ftp://news.example"]),
            v(&["https://a b.example"]),
            v(&["https://a.example; script-src *"]),
            v(&["'none'", "https://news.example"]),
            v(&["*"]),
            v(&["https://"]),
            v(&["https://a.example:"]),
        ] {
            assert!(check_ancestors(&bad).is_err(), "{bad:?}");
        }
    }
}
