//! What a token says of itself, in the clear, before any key opens it.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::format::{self, TAG_LEN, TokenFormat};
use crate::keyring::{KeyId, KeyRing, hex};
use crate::link::Link;
use crate::point::PointKey;

/// Why a token's header does not read. saga-runtime's `OpenError` has a variant for each,
/// and `?` converts it there. Exhaustive for the same reason as [`TokenFormat`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// Not unpadded base64url.
    #[error("token is not base64url")]
    Encoding,
    /// Too short to hold a header and a tag.
    #[error("token is {len} bytes, shorter than a header and a tag")]
    Truncated {
        /// The decoded length.
        len: usize,
    },
    /// A first byte that names no format this build knows.
    #[error("unknown token format (first byte {0:#04x})")]
    Version(u8),
}

/// The clear part of a token, read without any key: what `saga inspect` shows.
///
/// Nothing here is authenticated until the token is opened with the right key and the
/// request's binding (tool, method, principal, arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenHeader {
    /// The format: 0x50 or 0x60 (deflated) for the tokens this build seals, 0x40 for
    /// those of the builds before it (the first byte, its key tag masked out); for any
    /// other first byte, that byte (refused when the token is opened).
    pub version: u8,
    /// The sealing key's tag: the low four bits of its id. Keys of one ring may share it;
    /// the token opens with the one that sealed it.
    pub key_tag: u8,
    /// The suspension point it stopped at (see [`PointKey::header`]).
    pub point: [u8; 8],
    /// Expiry, unix seconds.
    pub expires_at: u64,
    /// The nonce.
    pub nonce: [u8; 24],
    /// Decoded bytes of the whole token.
    pub total_len: usize,
    /// The format, if this build opens it.
    format: Option<TokenFormat>,
    /// Bytes of the clear header.
    len: usize,
}

impl TokenHeader {
    /// The format version this build seals a usual state in (0x50); a state that
    /// deflates smaller is sealed as 0x60 ([`TokenFormat::Deflated`]).
    pub const CURRENT_VERSION: u8 = TokenFormat::SEALED.layout().byte();

    /// The token's format, if this build opens it.
    #[inline]
    pub fn format(&self) -> Option<TokenFormat> {
        self.format
    }

    /// The token's place in its call's chain of tokens (see [`Link`]).
    #[inline]
    pub fn link(&self) -> Link {
        Link::of_nonce(&self.nonce)
    }
    /// Reads the header of `token` (unpadded base64url); fails only when the text is not
    /// base64url or too short to hold a header and a tag. An unknown version is reported,
    /// not refused.
    pub fn parse(token: &str) -> Result<Self, HeaderError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(token.trim())
            .map_err(|_| HeaderError::Encoding)?;
        Self::read(&bytes)
    }

    /// The point a token names, read from its first 20 characters alone: what a server
    /// needs to choose the build of a tool that can open it, before any other work.
    #[inline]
    pub fn peek_point(token: &str) -> Result<[u8; 8], HeaderError> {
        // Characters 0..20 are bytes 0..15 (base64 maps 3 bytes to 4 characters): the
        // format, then the point (bytes 1..9), decoded by hand, on
        // the stack (the engine's general decoder cost more than the rest of finding the
        // point, BENCHMARKS.md).
        let quads = token
            .as_bytes()
            .get(..20)
            .ok_or(HeaderError::Truncated { len: token.len() })?;
        let mut bytes = [0u8; 15];
        for (group, chars) in quads.chunks_exact(4).enumerate() {
            let mut bits: u32 = 0;
            for &c in chars {
                bits = (bits << 6) | u32::from(sextet(c).ok_or(HeaderError::Encoding)?);
            }
            bytes[group * 3..group * 3 + 3].copy_from_slice(&bits.to_be_bytes()[1..]);
        }
        // The format comes first: another format's bytes 1..9 are no point. The point
        // ends by byte 10 in either format (a compact version is 3 bytes at most).
        let format = TokenFormat::of(bytes[0]).ok_or(HeaderError::Version(bytes[0]))?;
        // Only the point is needed: read it from the 15 bytes padded to a full header.
        let mut padded = [0u8; format::COMPACT_MAX];
        padded[..15].copy_from_slice(&bytes);
        format::read(format, &padded)
            .map(|fields| fields.point)
            .ok_or(HeaderError::Truncated { len: token.len() })
    }

    /// The link a token's nonce names (see [`Link`]), read from its header's characters
    /// alone (not the whole token, which may be 64 KiB); `None` for a token of no format
    /// this build opens, or too short to hold a header.
    pub fn peek_link(token: &str) -> Option<Link> {
        // 52 characters are 39 bytes: the longest header.
        let head = token.get(..52.min(token.len() / 4 * 4))?;
        let bytes = URL_SAFE_NO_PAD.decode(head).ok()?;
        let format = TokenFormat::of(*bytes.first()?)?;
        format::read(format, &bytes).map(|fields| Link::of_nonce(&fields.nonce))
    }

    /// Reads the header of the decoded bytes of a token.
    #[inline]
    pub fn read(bytes: &[u8]) -> Result<Self, HeaderError> {
        let first = bytes.first().copied().unwrap_or_default();
        let format = TokenFormat::of(first);
        // Another format's bytes are read as 0x40's, for `saga inspect` to show; its
        // version says they mean nothing.
        let fields = format::read(format.unwrap_or(TokenFormat::Fixed), bytes)
            .filter(|fields| bytes.len() >= fields.len + TAG_LEN)
            .ok_or(HeaderError::Truncated { len: bytes.len() })?;
        Ok(Self {
            version: format.map_or(first, TokenFormat::byte),
            key_tag: first & 0x0f,
            point: fields.point,
            expires_at: u64::from(fields.expires_at),
            nonce: fields.nonce,
            total_len: bytes.len(),
            format,
            len: fields.len,
        })
    }

    /// Bytes of the clear header (33 in a usual token of this build's, 37 in format 0x40).
    #[inline]
    pub fn header_len(&self) -> usize {
        self.len
    }

    /// Bytes of the ciphertext (the sealed state), between the header and the tag.
    #[inline]
    pub fn ciphertext_len(&self) -> usize {
        self.total_len - self.header_len() - TAG_LEN
    }

    /// Bytes of the authentication tag (16).
    #[inline]
    pub fn tag_len(&self) -> usize {
        TAG_LEN
    }

    /// What the token names of its key, in hex: the tag's one digit.
    pub fn key_id_hex(&self) -> String {
        format!("{:x}", self.key_tag)
    }

    /// The point in hex.
    pub fn point_hex(&self) -> String {
        hex(&self.point)
    }

    /// The tool version the point names.
    #[inline]
    pub fn point_version(&self) -> u16 {
        PointKey::version_of(&self.point)
    }

    /// Whether `keys` holds a key this token may have been sealed by: one with the key tag
    /// (another key may share it). Which key sealed it is only settled by opening it with
    /// the request's binding, as saga-runtime's codec does.
    pub fn key_known(&self, keys: &KeyRing) -> bool {
        keys.matching(|id| key_tag(id) == self.key_tag)
            .next()
            .is_some()
    }
}

/// A key's tag in a token: the low four bits of its id.
#[inline]
pub fn key_tag(id: &KeyId) -> u8 {
    id[0] & 0x0f
}

/// The value of one base64url character.
#[inline]
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}
