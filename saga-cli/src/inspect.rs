//! `saga inspect TOKEN`: what a token's clear header says, and what the key ring in
//! `SAGA_KEYS` can tell about it.

use saga_wire::LayoutFile;
use saga_wire::{KeyRing, KeyRingError, TokenFormat, TokenHeader, unix_now};

/// The layout file `saga inspect` reads by default, from the current directory.
pub const DEFAULT_LAYOUT: &str = "saga.layout";

/// Prints the report for `token` to stdout. `layout` names the layout file that tells
/// the token's tool and point (default: `saga.layout`, if there is one).
pub fn inspect(token: &str, layout: Option<&std::path::Path>) -> anyhow::Result<()> {
    let header = TokenHeader::parse(token).map_err(|e| anyhow::anyhow!("not a saga token: {e}"))?;
    let keys = match KeyRing::from_env("SAGA_KEYS") {
        Ok(keys) => Some(keys),
        Err(KeyRingError::Missing { .. }) => None,
        Err(error) => return Err(anyhow::anyhow!("SAGA_KEYS: {error}")),
    };
    let path = layout.unwrap_or(std::path::Path::new(DEFAULT_LAYOUT));
    let file = match std::fs::read_to_string(path) {
        Ok(text) => Some((path, LayoutFile::parse(&text))),
        Err(_) if layout.is_none() => None,
        Err(error) => return Err(anyhow::anyhow!("{}: {error}", path.display())),
    };
    let layout = file.as_ref().map(|(path, file)| (*path, file));
    print!(
        "{}",
        crate::terminal::clean_lines(&report(&header, keys.as_ref(), layout, unix_now()))
    );
    Ok(())
}

/// The report's text, as of `now` (unix seconds), naming the token's point from `layout`.
pub fn report(
    header: &TokenHeader,
    keys: Option<&KeyRing>,
    layout: Option<(&std::path::Path, &LayoutFile)>,
    now: u64,
) -> String {
    let version = match header.format() {
        Some(TokenFormat::Deflated) => format!(
            "{:#04x} (XChaCha20-Poly1305, postcard state, deflated)",
            header.version
        ),
        Some(TokenFormat::Compact) => format!(
            "{:#04x} (XChaCha20-Poly1305, postcard state)",
            header.version
        ),
        Some(TokenFormat::Traced) => format!(
            "{:#04x} (XChaCha20-Poly1305, postcard state led by the saga's trace ids)",
            header.version
        ),
        Some(TokenFormat::TracedDeflated) => format!(
            "{:#04x} (XChaCha20-Poly1305, postcard state led by the saga's trace ids, \
             deflated)",
            header.version
        ),
        Some(TokenFormat::Kept) => format!(
            "{:#04x} (XChaCha20-Poly1305; a reference to a state kept in the server's state \
             store: its key and SHA-256)",
            header.version
        ),
        Some(TokenFormat::Fixed) => format!(
            "{:#04x} (XChaCha20-Poly1305, postcard state; sealed by a build before this \
             one, still opened)",
            header.version
        ),
        None => format!("{:#04x} (unknown to this build)", header.version),
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
    // A token names the sealing key by its tag (the low four bits of its id).
    let key = format!("tag {:x}", header.key_tag);
    let keys_line = match keys {
        // Another format's bytes name no key: a server refuses it before trying any.
        _ if header.format().is_none() => {
            "does not open: a server refuses a token of another format".to_owned()
        }
        None => "SAGA_KEYS is not set: cannot say whether it opens".to_owned(),
        Some(keys) if header.key_known(keys) => format!(
            "a key with {key} is in SAGA_KEYS ({} key(s)); the tag cannot be verified \
             without the request binding (tool, method, principal, arguments): a server \
             opens it",
            keys.len()
        ),
        Some(keys) => format!(
            "does not open: no key with {key} among the {} key(s) in SAGA_KEYS",
            keys.len()
        ),
    };
    let point = header.point_hex();
    let point_line = match layout {
        None => format!(
            "{point} (tool version {}; give --layout FILE, or run where {DEFAULT_LAYOUT} is, to name it)",
            header.point_version()
        ),
        Some((path, file)) => match file.find(&point) {
            Some(entry) => format!(
                "{point}: tool {}, version {}, point {}\n             saves        {}",
                crate::terminal::clean(&entry.tool),
                entry.version,
                crate::terminal::clean(&entry.point),
                crate::terminal::clean(&entry.layout),
            ),
            None => format!(
                "{point} (tool version {}): not in {}, so no build that wrote it resumes it",
                header.point_version(),
                path.display()
            ),
        },
    };
    format!(
        "version      {version}\n\
         key          {key}\n\
         point        {point_line}\n\
         expires      {expiry}\n\
         size         {} bytes: header {}, ciphertext {}, tag {}\n\
         opens        {keys_line}\n",
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
        let point = saga_runtime::state::PointKey {
            header: [0xab, 0xab, 0xab, 0xab, 0, 3, 0xab, 0xab],
            identity: [1; 32],
        };
        codec.seal_until(expires_at, &point, &binding, b"state!")
    }

    #[test]
    fn reports_a_real_token() {
        let key = "22".repeat(32);
        let header = TokenHeader::parse(&token(&key, 1_000)).unwrap();
        let keys = KeyRing::parse(&key).unwrap();
        let text = report(&header, Some(&keys), None, 700);
        assert!(
            text.contains("point        abababab0003abab (tool version 3"),
            "{text}"
        );
        assert!(text.contains("1000 (in 5 min 0 s)"), "{text}");
        assert!(text.contains("header 33, ciphertext 6, tag 16"), "{text}");
        assert!(text.contains("is in SAGA_KEYS"), "{text}");
        let later = report(
            &header,
            Some(&KeyRing::parse(&"33".repeat(32)).unwrap()),
            None,
            1_010,
        );
        assert!(later.contains("expired 10 s ago"), "{later}");
        assert!(later.contains("does not open"), "{later}");
        assert!(report(&header, None, None, 0).contains("SAGA_KEYS is not set"));
    }

    /// A token of another format (0x03, say: an unreleased build's) is shown as such,
    /// with its first byte, and never as one a server would open, whatever keys are set.
    #[test]
    fn a_token_of_another_format_does_not_open() {
        use base64::Engine as _;
        let key = "22".repeat(32);
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let mut bytes = engine.decode(token(&key, 1_000)).unwrap();
        bytes[0] = 0x03;
        let header = TokenHeader::parse(&engine.encode(&bytes)).unwrap();
        let keys = KeyRing::parse(&key).unwrap();
        let text = report(&header, Some(&keys), None, 700);
        assert!(text.contains("0x03 (unknown to this build)"), "{text}");
        assert!(
            text.contains("does not open: a server refuses a token of another format"),
            "{text}"
        );
        assert!(!text.contains("a server opens it"), "{text}");
        // This format's key is shown by its tag.
        let real = TokenHeader::parse(&token(&key, 1_000)).unwrap();
        let shown = report(&real, Some(&keys), None, 700);
        assert!(
            shown.contains(&format!("tag {:x}", real.key_tag)),
            "{shown}"
        );
    }

    /// A usual token of this build (0x50) and a deflated one (0x60) are both this
    /// build's own: neither is said to come from a build before it.
    #[test]
    fn a_usual_and_a_deflated_token_are_this_builds() {
        let key = "22".repeat(32);
        let codec = StateCodec::new(KeyRing::parse(&key).unwrap(), Duration::from_secs(600));
        let binding = Binding::new("t", "tools/call", "", None);
        let point = saga_runtime::state::PointKey {
            header: [0xab, 0xab, 0xab, 0xab, 0, 3, 0xab, 0xab],
            identity: [1; 32],
        };
        let history = "the same turn again ".repeat(100);
        let deflated = codec.seal_until(1_000, &point, &binding, history.as_bytes());
        let text = report(&TokenHeader::parse(&deflated).unwrap(), None, None, 700);
        assert!(
            text.contains("(XChaCha20-Poly1305, postcard state, deflated)"),
            "{text}"
        );
        let usual = report(
            &TokenHeader::parse(&token(&key, 1_000)).unwrap(),
            None,
            None,
            700,
        );
        assert!(
            usual.contains("(XChaCha20-Poly1305, postcard state)")
                && !usual.contains("a build before this one"),
            "{usual}"
        );
    }

    /// A store that keeps every state it is given, for a reference to point at.
    #[derive(Debug, Default)]
    struct Kept(std::sync::Mutex<Vec<String>>);

    impl saga_runtime::state::StateStore for Kept {
        fn keep<'a>(
            &'a self,
            state: saga_runtime::state::KeptState<'a>,
        ) -> saga_runtime::state::StoreFuture<'a, Result<(), saga_runtime::state::StoreError>>
        {
            self.0.lock().unwrap().push(state.token.to_owned());
            Box::pin(async { Ok(()) })
        }

        fn read<'a>(
            &'a self,
            _key: &'a [u8; saga_runtime::state::KEPT_KEY_LEN],
        ) -> saga_runtime::state::StoreFuture<
            'a,
            Result<Option<String>, saga_runtime::state::StoreError>,
        > {
            Box::pin(async { Ok(None) })
        }
    }

    /// A reference to a kept state (0x70) is said to be one.
    #[tokio::test]
    async fn a_reference_to_a_kept_state_is_said_to_be_one() {
        let key = "22".repeat(32);
        let codec = StateCodec::new(KeyRing::parse(&key).unwrap(), Duration::from_secs(600))
            .with_state_store(std::sync::Arc::new(Kept::default()), 64);
        let binding = Binding::new("t", "tools/call", "", None);
        let point = saga_runtime::state::PointKey {
            header: [0xab, 0xab, 0xab, 0xab, 0, 3, 0xab, 0xab],
            identity: [1; 32],
        };
        let token = codec.seal(&point, &binding, &[7; 200]);
        let owner = saga_runtime::state::StateOwner {
            key: "someone".into(),
            shared: false,
        };
        let reference = codec
            .keep(token, &point, &binding, &owner)
            .await
            .expect("kept");
        let text = report(&TokenHeader::parse(&reference).unwrap(), None, None, 700);
        assert!(
            text.contains("a reference to a state kept in the server's state store"),
            "{text}"
        );
    }

    #[test]
    fn names_the_tool_version_and_point_from_the_layout_file() {
        let key = "22".repeat(32);
        let header = TokenHeader::parse(&token(&key, 1_000)).unwrap();
        let file = LayoutFile::parse(
            "pay\tv3\tAfterConfirm\tabababab0003abab\t{ to: str }\n\
             pay\tv3\tAfterOther\t0101010100030101\t{ }\n",
        );
        let path = std::path::Path::new("saga.layout");
        let text = report(&header, None, Some((path, &file)), 700);
        assert!(
            text.contains("abababab0003abab: tool pay, version 3, point AfterConfirm"),
            "{text}"
        );
        assert!(text.contains("saves        { to: str }"), "{text}");
        let empty = LayoutFile::default();
        let text = report(&header, None, Some((path, &empty)), 700);
        assert!(text.contains("not in saga.layout"), "{text}");
    }
}
