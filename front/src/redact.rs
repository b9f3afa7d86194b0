//! `redact_url`: a configured URL as it may be shown (logs, `/health`, `--check-config`): the
//! userinfo (`user:password@`) and every query value (`?api-key=…`) replaced by `***`. Anything
//! that is not a URL with a scheme is shown as it is (a local path).

/// What replaces a secret.
const HIDDEN: &str = "***";

/// The URL with its userinfo and query values hidden.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (before_fragment, fragment) = match rest.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None => (rest, None),
    };
    let (before_query, query) = match before_fragment.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (before_fragment, None),
    };
    let authority_end = before_query.find('/').unwrap_or(before_query.len());
    let (authority, path) = before_query.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let mut shown = format!("{scheme}://");
    if host.len() != authority.len() {
        shown.push_str(HIDDEN);
        shown.push('@');
    }
    shown.push_str(host);
    shown.push_str(path);
    if let Some(query) = query {
        shown.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) => format!("{name}={HIDDEN}"),
                None => pair.to_owned(),
            })
            .collect();
        shown.push_str(&pairs.join("&"));
    }
    if fragment.is_some() {
        shown.push_str("#***");
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn credentials_are_hidden_and_the_rest_kept() {
        assert_eq!(
            redact_url("https://mainnet.example.com/?api-key=s3cr3t&x=1"),
            "https://mainnet.example.com/?api-key=***&x=***"
        );
        assert_eq!(
            redact_url("http://user:pa55@10.0.0.1:8899/rpc"),
            "http://***@10.0.0.1:8899/rpc"
        );
        assert_eq!(
            redact_url("https://files.example.com/epoch-800/a.car"),
            "https://files.example.com/epoch-800/a.car"
        );
        assert_eq!(redact_url("/data/epoch-800"), "/data/epoch-800");
        assert!(!redact_url("https://a@b.example/?k=s3cr3t#s3cr3t").contains("s3cr3t"));
    }
}
