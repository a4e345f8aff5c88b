//! Where `saga` finds the server it talks to.

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A Streamable HTTP endpoint.
    Http(String),
    /// A command whose stdio speaks MCP.
    Stdio(Vec<String>),
}

/// The bearer token sent to an HTTP server (`--token`, `SAGA_TOKEN`), set once at start.
static TOKEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// Sets the bearer token for this run.
pub fn set_token(token: Option<String>) {
    let _ = TOKEN.set(token);
}

/// The bearer token for this run, if one was given.
pub fn token() -> Option<&'static str> {
    TOKEN.get().and_then(Option::as_deref)
}

/// The headers sent with every HTTP request (`--header NAME:VALUE`), set once at start.
static HEADERS: std::sync::OnceLock<
    Vec<(reqwest::header::HeaderName, reqwest::header::HeaderValue)>,
> = std::sync::OnceLock::new();

/// Reads `--header` values, `NAME: VALUE` (or `NAME:VALUE`), each a valid HTTP header,
/// and sets them for this run.
pub fn set_headers(headers: &[String]) -> anyhow::Result<()> {
    let parsed = headers
        .iter()
        .map(|header| parse_header(header))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let _ = HEADERS.set(parsed);
    Ok(())
}

/// One `--header` value.
pub fn parse_header(
    header: &str,
) -> anyhow::Result<(reqwest::header::HeaderName, reqwest::header::HeaderValue)> {
    let Some((name, value)) = header.split_once(':') else {
        anyhow::bail!("--header {header:?}: expected NAME:VALUE, e.g. 'X-Api-Key: k-123'");
    };
    let name = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
        anyhow::anyhow!(
            "--header {header:?}: {:?} is not a header name",
            name.trim()
        )
    })?;
    let value = reqwest::header::HeaderValue::from_str(value.trim())
        .map_err(|_| anyhow::anyhow!("--header {header:?}: the value is not a header value"))?;
    Ok((name, value))
}

/// The headers for this run (`--header`).
pub fn headers() -> &'static [(reqwest::header::HeaderName, reqwest::header::HeaderValue)] {
    HEADERS.get().map_or(&[], Vec::as_slice)
}

/// What to tell the user when the server at `url` refused to connect with an OAuth
/// challenge: it is asked once more (a `tools/list`, with the token if one was given),
/// and a `401`/`403` with `WWW-Authenticate: Bearer resource_metadata="…"` is read: where
/// to get a token (the authorization servers its metadata names), the scopes it asks for,
/// and how to pass the token. `None` when the server sends no such challenge.
pub async fn auth_hint(url: &str) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let mut probe = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{}}"#);
    if let Some(token) = token() {
        probe = probe.bearer_auth(token);
    }
    for (name, value) in headers() {
        probe = probe.header(name, value);
    }
    let response = probe.send().await.ok()?;
    let challenge = response
        .headers()
        .get("www-authenticate")?
        .to_str()
        .ok()?
        .to_owned();
    challenge_hint(&challenge).await
}

/// What a challenge says went wrong, in words: no token, a token not accepted, or one
/// without a scope the operation needs.
fn challenge_reason(challenge: &str) -> &'static str {
    if challenge.contains("insufficient_scope") {
        "the token lacks a scope this operation needs"
    } else if challenge.contains("invalid_token") {
        "the server did not accept the token (expired, or not for it)"
    } else {
        "the server needs an OAuth bearer token"
    }
}

/// One line for a request the server refused with an OAuth challenge (a 401 or 403 in the
/// middle of a session, such as a read-only token calling a tool that needs more): what
/// is wrong and the scopes the challenge names, without asking the server again.
pub fn challenge_line(challenge: &str) -> String {
    let mut line = challenge_reason(challenge).to_owned();
    if let Some(scope) = quoted(challenge, "scope=\"") {
        line.push_str(&format!(" (it needs the scopes \"{scope}\")"));
    }
    if challenge.contains("insufficient_scope") {
        line.push_str("; get a token with them and pass it with --token TOKEN or SAGA_TOKEN");
    }
    crate::terminal::one_line(&line)
}

/// [`auth_hint`] for the challenge `challenge`.
async fn challenge_hint(challenge: &str) -> Option<String> {
    let error = challenge;
    let metadata_url = quoted(error, "resource_metadata=\"")?;
    let scope = quoted(error, "scope=\"");
    let mut hint = String::from(challenge_reason(error));
    let (servers, supported) = metadata(&metadata_url).await.unwrap_or_default();
    if servers.is_empty() {
        hint.push_str(&format!("; its metadata is at {metadata_url}"));
    } else {
        hint.push_str(&format!("; get one from {}", servers.join(" or ")));
    }
    match scope {
        Some(scope) => hint.push_str(&format!(" with the scopes \"{scope}\"")),
        None if !supported.is_empty() => {
            hint.push_str(&format!(" (its scopes: {})", supported.join(" ")))
        }
        None => {}
    }
    hint.push_str(", and pass it with --token TOKEN or SAGA_TOKEN");
    Some(crate::terminal::one_line(&hint))
}

/// The text after `start` in `text`, up to the next quote.
fn quoted(text: &str, start: &str) -> Option<String> {
    let from = text.find(start)? + start.len();
    let len = text[from..].find('"')?;
    Some(text[from..from + len].to_owned())
}

/// The `authorization_servers` and `scopes_supported` of the metadata at `url` (at most
/// 64 KiB, 5 s; four of each at most).
async fn metadata(url: &str) -> Option<(Vec<String>, Vec<String>)> {
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let response = client.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let bytes = response.bytes().await.ok()?;
    if bytes.len() > 64 * 1024 {
        return None;
    }
    let metadata: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let strings = |key: &str| -> Vec<String> {
        metadata[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|value| value.as_str().map(str::to_owned))
            .take(4)
            .collect()
    };
    Some((
        strings("authorization_servers"),
        strings("scopes_supported"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Finding 9: a read-only token's refusal says which scope is missing, not only
    /// rmcp's "Insufficient scope".
    #[test]
    fn a_scope_refusal_names_the_scopes() {
        let line = challenge_line(
            r#"Bearer resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", scope="tools:deploy", error="insufficient_scope", error_description="the access token lacks a scope this operation needs""#,
        );
        assert!(line.contains("lacks a scope"), "{line}");
        assert!(line.contains("\"tools:deploy\""), "{line}");
        assert!(line.contains("--token"), "{line}");
        let line = challenge_line(r#"Bearer resource_metadata="m", error="invalid_token""#);
        assert!(line.contains("did not accept the token"), "{line}");
    }
}
