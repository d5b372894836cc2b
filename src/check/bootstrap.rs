//! Bootstrap lists: what librdkafka would accept as `bootstrap.servers`, checked up front so a
//! typo is invalid input at once instead of a ten-second connect timeout.

/// Why `list` is not a bootstrap list (`host:port,host:port`; the port may be left out, a
/// `SSL://` prefix and `[v6]` brackets are allowed), or None when it is one.
pub(crate) fn problem(list: &str) -> Option<String> {
    if list.trim().is_empty() {
        return Some("the bootstrap list is empty; give at least one host:port".into());
    }
    for server in list.split(',').map(str::trim) {
        let hostport = server.split_once("://").map_or(server, |(_, rest)| rest);
        if hostport.is_empty() {
            return Some(format!(
                "`{list}` has an empty entry; servers are separated by one comma"
            ));
        }
        let (host, port) = match hostport.rsplit_once(':') {
            // `[::1]` alone: the colons are inside the brackets.
            Some((h, _)) if hostport.ends_with(']') && h.starts_with('[') => (hostport, None),
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        };
        if host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .is_empty()
        {
            return Some(format!("`{server}` has no host; write host:port"));
        }
        if let Some(p) = port {
            if !matches!(p.parse::<u16>(), Ok(n) if n > 0) {
                return Some(format!(
                    "`{server}` has no valid port (1 to 65535) after the colon"
                ));
            }
        }
    }
    None
}
