//! `saga inspect TOKEN`: what a token's clear header says, and what the key ring in
//! `SAGA_KEYS` can tell about it.

use saga_runtime::state::{KeyRing, KeyRingError, LEGACY_VERSION, TokenHeader, VERSION, unix_now};

/// Prints the report for `token` to stdout.
pub fn inspect(token: &str) -> anyhow::Result<()> {
    let header = TokenHeader::parse(token).map_err(|e| anyhow::anyhow!("not a saga token: {e}"))?;
    let keys = match KeyRing::from_env("SAGA_KEYS") {
        Ok(keys) => Some(keys),
        Err(KeyRingError::Missing { .. }) => None,
        Err(error) => return Err(anyhow::anyhow!("SAGA_KEYS: {error}")),
    };
    print!("{}", report(&header, keys.as_ref(), unix_now()));
    Ok(())
}

/// The report's text, as of `now` (unix seconds).
pub fn report(header: &TokenHeader, keys: Option<&KeyRing>, now: u64) -> String {
    let version = if header.version == VERSION {
        format!(
            "{:#04x} (XChaCha20-Poly1305, postcard state)",
            header.version
        )
    } else if header.version == LEGACY_VERSION {
        format!(
            "{:#04x} (XChaCha20-Poly1305, postcard state; the previous layout, still opened)",
            header.version
        )
    } else {
        format!("{:#04x} (unknown to this build)", header.version)
    };
    let expiry = if header.expires_at >= now {
        format!(
            "{} (in {})",
            header.expires_at,
            span(header.expires_at - now)
        )
    } else {
        format!(
            "{} (expired {} ago)",
            header.expires_at,
            span(now - header.expires_at)
        )
    };
    let keys_line = match keys {
        None => "SAGA_KEYS is not set: cannot say whether it opens".to_owned(),
        Some(keys) if header.key_known(keys) => format!(
            "key {} is in SAGA_KEYS ({} key(s)); the tag cannot be verified without the \
             request binding (tool, method, principal, arguments): a server opens it",
            header.key_id_hex(),
            keys.len()
        ),
        Some(keys) => format!(
            "does not open: no key with id {} among the {} key(s) in SAGA_KEYS",
            header.key_id_hex(),
            keys.len()
        ),
    };
    format!(
        "version      {version}\n\
         key id       {}\n\
         fingerprint  {}\n\
         expires      {expiry}\n\
         size         {} bytes: header {}, ciphertext {}, tag {}\n\
         opens        {keys_line}\n",
        header.key_id_hex(),
        header.fingerprint_hex(),
        header.total_len,
        header.header_len(),
        header.ciphertext_len(),
        header.tag_len(),
    )
}

fn span(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min {} s", s / 60, s % 60),
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use saga_runtime::state::{Binding, StateCodec};
    use std::time::Duration;

    fn token(key: &str, expires_at: u64) -> String {
        let codec = StateCodec::new(KeyRing::parse(key).unwrap(), Duration::from_secs(600));
        let binding = Binding::new("t", "tools/call", "", None);
        codec.seal_until(expires_at, [0xab; 8], &binding, b"state!")
    }

    #[test]
    fn reports_a_real_token() {
        let key = "22".repeat(32);
        let header = TokenHeader::parse(&token(&key, 1_000)).unwrap();
        let keys = KeyRing::parse(&key).unwrap();
        let text = report(&header, Some(&keys), 700);
        assert!(text.contains("fingerprint  abababababababab"), "{text}");
        assert!(text.contains("1000 (in 5 min 0 s)"), "{text}");
        assert!(text.contains("header 41, ciphertext 6, tag 16"), "{text}");
        assert!(text.contains("is in SAGA_KEYS"), "{text}");
        let later = report(
            &header,
            Some(&KeyRing::parse(&"33".repeat(32)).unwrap()),
            1_010,
        );
        assert!(later.contains("expired 10 s ago"), "{later}");
        assert!(later.contains("does not open"), "{later}");
        assert!(report(&header, None, 0).contains("SAGA_KEYS is not set"));
    }
}
