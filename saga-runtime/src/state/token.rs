//! The token format: a versioned header in the clear, the state encrypted and
//! authenticated with XChaCha20-Poly1305, the whole in unpadded base64url.
//!
//! ```text
//! offset size
//! 0      1    version   0x02 = XChaCha20-Poly1305, postcard state, this layout
//! 1      4    kid       selects exactly one key of the ring
//! 5      8    fp        the tool's fingerprint
//! 13     4    exp       expiry, big-endian unix seconds (u32: until 2106)
//! 17     24   nonce     random
//! 41     n+16 ciphertext and tag
//! AAD = header (bytes 0..41) || binding digest
//! ```
//!
//! The header is authenticated too, so neither the expiry nor the fingerprint can be
//! edited; it stays in the clear so that a server can pick the key and log why it refused
//! a token without decrypting anything.
//!
//! Version 0x01 tokens (an 8-byte expiry, so a 45-byte header, and a plaintext whose
//! pending requests are kept whole) are still opened, so that a round in flight survives
//! an upgrade; [`Opened::version`] tells the engine which plaintext layout follows.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use std::sync::Arc;

use super::binding::Binding;
use super::keyring::{KeyId, KeyRing, hex};
use super::single_use::{StoreError, TokenStore};

/// The format version byte of the tokens this build seals.
pub const VERSION: u8 = 0x02;
/// The version byte of the previous layout, still opened.
pub const LEGACY_VERSION: u8 = 0x01;
/// Bytes before the ciphertext.
pub const HEADER_LEN: usize = 41;
/// Bytes before the ciphertext in a [`LEGACY_VERSION`] token.
pub const LEGACY_HEADER_LEN: usize = 45;
/// Bytes of the Poly1305 tag.
pub const TAG_LEN: usize = super::aead::TAG_LEN;
/// The default cap on a token's length in bytes (tokens are ASCII), checked before any
/// decoding.
pub const DEFAULT_MAX_TOKEN_LEN: usize = 64 * 1024;
/// How far past its expiry a token is still accepted, for clocks that disagree.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

/// A tool's fingerprint: changes whenever the tool's code does, so that tokens from an
/// older build are refused instead of being decoded into the wrong shape.
pub type Fingerprint = [u8; 8];

/// Why a token was refused. The client never sees this (it gets one fixed message); the
/// server logs it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Longer than the configured cap.
    #[error("token is {len} bytes, over the cap of {max}")]
    TooLong {
        /// The token's length.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// Not unpadded base64url.
    #[error("token is not base64url")]
    Encoding,
    /// Too short to hold a header and a tag.
    #[error("token is {len} bytes, shorter than a header and a tag")]
    Truncated {
        /// The decoded length.
        len: usize,
    },
    /// A version byte this build does not know.
    #[error("unknown token version {0:#04x}")]
    Version(u8),
    /// No key of the ring has this id (a retired key, or another deployment's).
    #[error("no key with id {0}")]
    UnknownKey(String),
    /// The tag does not verify: tampered, truncated, sealed by another key with the same
    /// id, or bound to another tool, method, principal or arguments.
    #[error("authentication failed (tampered, or bound to another request)")]
    Forged,
    /// Past its expiry plus the leeway.
    #[error("token expired {0} s ago")]
    Expired(u64),
    /// Expires further in the future than any token this server seals.
    #[error("token expiry is {0} s beyond the maximum lifetime")]
    FromTheFuture(u64),
    /// Sealed by a build of the tool with different code.
    #[error("token fingerprint {found} does not match the tool's {expected}")]
    Fingerprint {
        /// The tool's current fingerprint.
        expected: String,
        /// The token's.
        found: String,
    },
}

/// Seals and opens tokens with a [`KeyRing`].
#[derive(Debug)]
pub struct StateCodec {
    keys: KeyRing,
    ttl: Duration,
    leeway: Duration,
    max_token_len: usize,
    single_use: Option<Arc<dyn TokenStore>>,
}

/// A token that passed every check, with its plaintext.
#[derive(Debug)]
pub struct Opened {
    /// The decrypted state.
    pub plaintext: Vec<u8>,
    /// The nonce, unique per token: the token's id for single-use bookkeeping.
    pub nonce: [u8; 24],
    /// The token's expiry, unix seconds.
    pub expires_at: u64,
    /// The token's format version: [`VERSION`] or [`LEGACY_VERSION`].
    pub version: u8,
}

impl StateCodec {
    /// A codec sealing with `keys`, issuing tokens that live for `ttl`.
    pub fn new(keys: KeyRing, ttl: Duration) -> Self {
        Self {
            keys,
            ttl,
            leeway: DEFAULT_LEEWAY,
            max_token_len: DEFAULT_MAX_TOKEN_LEN,
            single_use: None,
        }
    }

    /// Makes every token redeemable once, recorded in `store`; see
    /// [`TokenStore`](super::TokenStore).
    pub fn with_single_use(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.single_use = Some(store);
        self
    }

    /// Records `opened` as redeemed, if tokens are single use. `Ok(false)`: it was
    /// redeemed before.
    pub async fn redeem(&self, opened: &Opened) -> Result<bool, StoreError> {
        match &self.single_use {
            None => Ok(true),
            Some(store) => {
                let keep_until = opened.expires_at.saturating_add(self.leeway.as_secs());
                store.redeem(&opened.nonce, keep_until).await
            }
        }
    }

    /// Sets the cap on a token's length in bytes.
    pub fn with_max_token_len(mut self, max: usize) -> Self {
        self.max_token_len = max;
        self
    }

    /// Sets the clock-skew leeway applied to expiry.
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The token lifetime.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The clock-skew leeway applied to expiry.
    pub fn leeway(&self) -> Duration {
        self.leeway
    }

    /// The cap on a token's length in bytes.
    pub fn max_token_len(&self) -> usize {
        self.max_token_len
    }

    /// The key ring.
    pub fn keys(&self) -> &KeyRing {
        &self.keys
    }

    /// Seals `plaintext` for `binding`, expiring `ttl` from now.
    pub fn seal(&self, fingerprint: Fingerprint, binding: &Binding, plaintext: &[u8]) -> String {
        self.seal_at(unix_now(), fingerprint, binding, plaintext)
    }

    /// Seals as if the clock read `now` (unix seconds).
    pub fn seal_at(
        &self,
        now: u64,
        fingerprint: Fingerprint,
        binding: &Binding,
        plaintext: &[u8],
    ) -> String {
        self.seal_until(
            now.saturating_add(self.ttl.as_secs()),
            fingerprint,
            binding,
            plaintext,
        )
    }

    /// Seals with an explicit expiry (unix seconds). Re-issuing a round's token keeps the
    /// round's original expiry, so a client cannot keep a saga alive by resending it.
    pub fn seal_until(
        &self,
        expires_at: u64,
        fingerprint: Fingerprint,
        binding: &Binding,
        plaintext: &[u8],
    ) -> String {
        let key = self.keys.sealing();
        let nonce = super::nonce::fresh();

        let expires_at = u32::try_from(expires_at).unwrap_or(u32::MAX);
        let mut token = Vec::with_capacity(HEADER_LEN + plaintext.len() + TAG_LEN);
        token.push(VERSION);
        token.extend_from_slice(&key.id);
        token.extend_from_slice(&fingerprint);
        token.extend_from_slice(&expires_at.to_be_bytes());
        token.extend_from_slice(&nonce);
        token.extend_from_slice(plaintext);

        let (header, body) = token.split_at_mut(HEADER_LEN);
        let aad = associated_data::<{ HEADER_LEN + 32 }>(header, binding);
        let tag = key.cipher.seal_in_place(&nonce, &aad, body);
        token.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(&token)
    }

    /// `token`, sealed by `sealed_with` for `binding`, sealed again under this codec's keys
    /// and lifetime: a session's in-process state made portable, for a resume token or a
    /// task that any replica may continue.
    pub(crate) fn reseal(
        &self,
        sealed_with: &StateCodec,
        token: &str,
        binding: &Binding,
    ) -> Result<String, OpenError> {
        if std::ptr::eq(self, sealed_with) {
            return Ok(token.to_owned());
        }
        let header = TokenHeader::parse(token)?;
        let opened = sealed_with.open(token, header.fingerprint, binding)?;
        // The plaintext's layout goes with the version: a token of the previous layout
        // (never made in process, where this is used) is not relabelled as the current.
        if opened.version != VERSION {
            return Err(OpenError::Version(opened.version));
        }
        Ok(self.seal(header.fingerprint, binding, &opened.plaintext))
    }

    /// Opens a token, checking in order: length, encoding, version, key id, tag (which
    /// covers the header and the binding), expiry, fingerprint.
    pub fn open(
        &self,
        token: &str,
        fingerprint: Fingerprint,
        binding: &Binding,
    ) -> Result<Opened, OpenError> {
        self.open_at(unix_now(), token, fingerprint, binding)
    }

    /// Opens as if the clock read `now` (unix seconds).
    pub fn open_at(
        &self,
        now: u64,
        token: &str,
        fingerprint: Fingerprint,
        binding: &Binding,
    ) -> Result<Opened, OpenError> {
        if token.len() > self.max_token_len {
            return Err(OpenError::TooLong {
                len: token.len(),
                max: self.max_token_len,
            });
        }
        let mut bytes = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| OpenError::Encoding)?;
        let header = TokenHeader::read(&bytes)?;
        if header.version != VERSION && header.version != LEGACY_VERSION {
            return Err(OpenError::Version(header.version));
        }
        let key = self
            .keys
            .find(&header.key_id)
            .ok_or_else(|| OpenError::UnknownKey(hex(&header.key_id)))?;
        let (header_len, expires_at, nonce) =
            (header.header_len(), header.expires_at, header.nonce);
        let token_fingerprint = header.fingerprint;

        let tag_at = bytes.len() - TAG_LEN;
        let tag: [u8; TAG_LEN] = bytes[tag_at..].try_into().map_err(|_| OpenError::Forged)?;
        let (header_bytes, rest) = bytes.split_at_mut(header_len);
        let body = &mut rest[..tag_at - header_len];
        let decrypted = if header.version == VERSION {
            let aad = associated_data::<{ HEADER_LEN + 32 }>(header_bytes, binding);
            key.cipher.open_in_place(&nonce, &aad, body, &tag)
        } else {
            let aad = associated_data::<{ LEGACY_HEADER_LEN + 32 }>(header_bytes, binding);
            key.cipher.open_in_place(&nonce, &aad, body, &tag)
        };
        decrypted.map_err(|_| OpenError::Forged)?;

        let leeway = self.leeway.as_secs();
        if now > expires_at.saturating_add(leeway) {
            return Err(OpenError::Expired(now - expires_at));
        }
        let latest = now
            .saturating_add(self.ttl.as_secs())
            .saturating_add(leeway);
        if expires_at > latest {
            return Err(OpenError::FromTheFuture(expires_at - latest));
        }
        if token_fingerprint != fingerprint {
            return Err(OpenError::Fingerprint {
                expected: hex(&fingerprint),
                found: hex(&token_fingerprint),
            });
        }
        bytes.truncate(tag_at);
        bytes.drain(..header_len);
        Ok(Opened {
            plaintext: bytes,
            nonce,
            expires_at,
            version: header.version,
        })
    }
}

/// The clear part of a token, read without any key: what `saga inspect` shows.
///
/// Nothing here is authenticated until the token is opened with the right key and the
/// request's binding (tool, method, principal, arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenHeader {
    /// The format version byte ([`VERSION`], or [`LEGACY_VERSION`]; any other is refused
    /// when the token is opened).
    pub version: u8,
    /// The id of the key that sealed it.
    pub key_id: KeyId,
    /// The fingerprint of the tool build that sealed it.
    pub fingerprint: Fingerprint,
    /// Expiry, unix seconds.
    pub expires_at: u64,
    /// The nonce.
    pub nonce: [u8; 24],
    /// Decoded bytes of the whole token.
    pub total_len: usize,
}

impl TokenHeader {
    /// Reads the header of `token` (unpadded base64url); fails only when the text is not
    /// base64url or too short to hold a header and a tag. An unknown version is reported,
    /// not refused.
    pub fn parse(token: &str) -> Result<Self, OpenError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(token.trim())
            .map_err(|_| OpenError::Encoding)?;
        Self::read(&bytes)
    }

    /// Reads the header of the decoded bytes of a token: the layout of [`VERSION`], or of
    /// [`LEGACY_VERSION`] when the version byte says so.
    fn read(bytes: &[u8]) -> Result<Self, OpenError> {
        let version = bytes.first().copied().unwrap_or_default();
        let header_len = if version == LEGACY_VERSION {
            LEGACY_HEADER_LEN
        } else {
            HEADER_LEN
        };
        if bytes.len() < header_len + TAG_LEN {
            return Err(OpenError::Truncated { len: bytes.len() });
        }
        let (expires_at, nonce_at) = if version == LEGACY_VERSION {
            (u64::from_be_bytes(field(bytes, 13)), 21)
        } else {
            (u64::from(u32::from_be_bytes(field(bytes, 13))), 17)
        };
        Ok(Self {
            version,
            key_id: field(bytes, 1),
            fingerprint: field(bytes, 5),
            expires_at,
            nonce: field(bytes, nonce_at),
            total_len: bytes.len(),
        })
    }

    /// Bytes of the clear header ([`HEADER_LEN`], or [`LEGACY_HEADER_LEN`] for a
    /// [`LEGACY_VERSION`] token).
    pub fn header_len(&self) -> usize {
        if self.version == LEGACY_VERSION {
            LEGACY_HEADER_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Bytes of the ciphertext (the sealed state), between the header and the tag.
    pub fn ciphertext_len(&self) -> usize {
        self.total_len - self.header_len() - TAG_LEN
    }

    /// Bytes of the authentication tag ([`TAG_LEN`]).
    pub fn tag_len(&self) -> usize {
        TAG_LEN
    }

    /// The key id in hex.
    pub fn key_id_hex(&self) -> String {
        hex(&self.key_id)
    }

    /// The fingerprint in hex.
    pub fn fingerprint_hex(&self) -> String {
        hex(&self.fingerprint)
    }

    /// Whether `keys` holds the key this token names. The tag itself can only be checked
    /// with the request's binding; see [`StateCodec::open`].
    pub fn key_known(&self, keys: &KeyRing) -> bool {
        keys.key_ids().any(|id| id == self.key_id)
    }
}

/// The header, then the binding's digest: `N` is the header's length plus 32.
fn associated_data<const N: usize>(header: &[u8], binding: &Binding) -> [u8; N] {
    let mut aad = [0u8; N];
    let header_len = N - 32;
    aad[..header_len].copy_from_slice(&header[..header_len]);
    aad[header_len..].copy_from_slice(binding.digest());
    aad
}

fn field<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

/// Seconds since the unix epoch; a clock before 1970 reads as 0.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod header_tests {
    use super::*;

    #[test]
    fn parses_the_header_of_a_sealed_token() {
        let hex_key = "11".repeat(32);
        let keys = KeyRing::parse(&hex_key).unwrap();
        let codec = StateCodec::new(KeyRing::parse(&hex_key).unwrap(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let token = codec.seal_until(1_000, [7; 8], &binding, b"hello");
        let header = TokenHeader::parse(&token).unwrap();
        assert_eq!(header.version, VERSION);
        assert_eq!(header.fingerprint, [7; 8]);
        assert_eq!(header.expires_at, 1_000);
        assert_eq!(header.ciphertext_len(), 5);
        assert!(header.key_known(&keys));
        assert!(!header.key_known(&KeyRing::ephemeral()));
        assert_eq!(TokenHeader::parse("!!"), Err(OpenError::Encoding));
        assert!(matches!(
            TokenHeader::parse("AAAA"),
            Err(OpenError::Truncated { .. })
        ));
    }

    /// A token as the previous layout sealed it: an 8-byte expiry, a 45-byte header.
    fn legacy_token(
        keys: &KeyRing,
        expires_at: u64,
        binding: &Binding,
        plaintext: &[u8],
    ) -> String {
        let key = keys.sealing();
        let nonce = [9u8; 24];
        let mut token = vec![LEGACY_VERSION];
        token.extend_from_slice(&key.id);
        token.extend_from_slice(&[7; 8]);
        token.extend_from_slice(&expires_at.to_be_bytes());
        token.extend_from_slice(&nonce);
        token.extend_from_slice(plaintext);
        let (header, body) = token.split_at_mut(LEGACY_HEADER_LEN);
        let aad = associated_data::<{ LEGACY_HEADER_LEN + 32 }>(header, binding);
        let tag = key.cipher.seal_in_place(&nonce, &aad, body);
        token.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(&token)
    }

    #[test]
    fn tokens_of_the_previous_layout_still_open_and_stay_bound() {
        let hex_key = "22".repeat(32);
        let codec = StateCodec::new(KeyRing::parse(&hex_key).unwrap(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let token = legacy_token(codec.keys(), 1_500, &binding, b"old state");
        let header = TokenHeader::parse(&token).unwrap();
        assert_eq!(
            (header.version, header.header_len()),
            (LEGACY_VERSION, LEGACY_HEADER_LEN)
        );
        assert_eq!(header.expires_at, 1_500);
        assert_eq!(header.ciphertext_len(), 9);
        let opened = codec.open_at(1_000, &token, [7; 8], &binding).unwrap();
        assert_eq!(opened.plaintext, b"old state");
        assert_eq!((opened.version, opened.expires_at), (LEGACY_VERSION, 1_500));
        let other = Binding::new("tool", "tools/call", "q", None);
        assert_eq!(
            codec.open_at(1_000, &token, [7; 8], &other).err(),
            Some(OpenError::Forged)
        );
        assert!(matches!(
            codec.open_at(1_000, &token, [8; 8], &binding),
            Err(OpenError::Fingerprint { .. })
        ));
        assert!(matches!(
            codec.open_at(2_000, &token, [7; 8], &binding),
            Err(OpenError::Expired(_))
        ));
    }

    #[test]
    fn expiries_past_2106_are_sealed_as_the_last_second_u32_holds() {
        let hex_key = "33".repeat(32);
        let codec = StateCodec::new(KeyRing::parse(&hex_key).unwrap(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let token = codec.seal_until(u64::MAX, [1; 8], &binding, b"x");
        assert_eq!(
            TokenHeader::parse(&token).unwrap().expires_at,
            u64::from(u32::MAX)
        );
    }
}
