//! The clear header of a token, in the two formats this build opens.
//!
//! ```text
//! format 0x50 (sealed by this build)          format 0x40 (opened; resealed as itself)
//! size   field                                 size  field
//! 1      0x5k: format, key tag k               1     0x4k
//! 4      point: name tag                       8     point: name tag (4), version (2,
//! 1-3    point: version, LEB128                      big-endian), identity tag (2)
//! 2      point: identity tag                   4     expiry, big-endian unix seconds
//! 4      expiry, big-endian unix seconds       24    nonce
//! 8      nonce: chain
//! 1-5    nonce: sequence number, LEB128
//! 12     nonce: random
//! ```
//!
//! Format 0x50 holds the same fields as 0x40 and makes the same nonce: only the tool
//! version and the chain's sequence number, small numbers that 0x40 kept in fixed widths
//! (2 and 4 bytes), are written as LEB128 varints, each one byte in a usual saga. The
//! header is 33 bytes where it was 37, and the key, the nonce, the AEAD and everything the
//! associated data binds are unchanged. The header bytes as sent are the associated data,
//! so a varint written any other way (not minimal) is refused as unreadable before any key
//! is tried, and could not open anyway.
//!
//! Format 0x60 is 0x50 with its plaintext deflated (RFC 1951), behind its length as a
//! LEB128 varint: the header's fields and layout are 0x50's, and the head of the inflated
//! plaintext is read in 0x50's layout. A codec that seals [`TokenFormat::Deflated`] (the
//! default) writes 0x60 only when deflating makes the token smaller, and 0x50, byte for
//! byte as before, otherwise: a short state (the usual round) is not deflated at all. A
//! build before 0x60 reads its first byte as no format it knows and refuses the token;
//! it never reads deflated bytes as a state.
//!
//! Format 0x70 is 0x50's header over a reference, not a state: its plaintext is the key
//! (16 bytes) under which the server's state store keeps the whole state, sealed as an
//! ordinary token, and that token's SHA-256 (32 bytes). It is sealed with the same key,
//! associated data and link as the token it refers to, so it opens only where that token
//! would; the kept token is then read from the store, its digest checked, and opened with
//! the same binding (saga-runtime's `state/kept.rs`). A build before 0x70 refuses it as a format it does not
//! know.
//!
//! Formats 0x80 and 0x90 are 0x50 and 0x60 whose plaintext begins with the saga's trace
//! (25 bytes: the trace id and span id of its first round, and the trace flags; see
//! [`SagaTrace`](crate::SagaTrace)), before the head; 0x90's is deflated with the rest. A codec that seals
//! [`TokenFormat::TracedDeflated`] (this build's default) writes them for a saga whose
//! first round was traced (feature `otel`, with a trace being recorded), and 0x50 or 0x60,
//! byte for byte as before, for any other. A build before 0x80 refuses them as formats it
//! does not know; a codec pinned to [`TokenFormat::Deflated`] (the build before's default:
//! 0x50 and 0x60, deflating as it did), `Compact` or `Fixed` for a rolling deploy leaves
//! the trace out.
//!
//! A 0x40 token, sealed by a build before this one, still opens: a saga in flight across
//! the deploy goes on. Its plaintext's head is read in 0x40's layout (the format travels
//! with the opened token), and a token resealed as it is (a session's state made portable)
//! keeps its format, so no plaintext is ever read in another format's layout.

/// Bytes of a token's authentication tag, after its ciphertext (XChaCha20-Poly1305's).
pub const TAG_LEN: usize = 16;

/// A token format this build opens: the first byte of a token, its key tag masked out.
///
/// Exhaustive, so that the runtime's codec matches every format it opens with no
/// catch-all: a format added here fails to compile there until it is read as its own.
/// A new format is therefore a breaking release of this crate (saga-runtime pins its
/// exact version), and a `match` of yours names each format or has a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenFormat {
    /// 0x40: fixed-width header (37 bytes), the head of the plaintext in postcard.
    Fixed,
    /// 0x50: the compact header (33 bytes in a usual saga) and the packed head.
    Compact,
    /// 0x60: as 0x50, the plaintext deflated. Sealing in it writes 0x50 when deflating
    /// would not make the token smaller.
    Deflated,
    /// 0x70: as 0x50, the plaintext a reference to a state kept in the server's state
    /// store (its key and digest). Written only by a server with a state store, for a
    /// state past its inline bound; never a format a codec is set to seal in.
    Kept,
    /// 0x80: as 0x50, the plaintext led by the saga's trace (`SagaTrace`). Written only
    /// for a traced saga by a codec that seals [`TokenFormat::TracedDeflated`]; never a
    /// format a codec is set to seal in.
    Traced,
    /// 0x90: as 0x60, the deflated plaintext led by the saga's trace. As the format a codec
    /// seals in (the default, [`TokenFormat::SEALED`]): 0x80 or 0x90 for a traced saga,
    /// 0x50 or 0x60 for any other, as [`TokenFormat::Deflated`] writes them.
    TracedDeflated,
}

impl TokenFormat {
    /// The format this build seals: [`TokenFormat::TracedDeflated`], so 0x60 for a state
    /// that deflates smaller and 0x50 for any other, each led by the saga's trace (0x90,
    /// 0x80) when its first round was traced (feature `otel`).
    pub const SEALED: TokenFormat = TokenFormat::TracedDeflated;

    /// The format's first byte, before the key tag is added.
    #[inline]
    pub const fn byte(self) -> u8 {
        match self {
            TokenFormat::Fixed => 0x40,
            TokenFormat::Compact => 0x50,
            TokenFormat::Deflated => 0x60,
            TokenFormat::Kept => 0x70,
            TokenFormat::Traced => 0x80,
            TokenFormat::TracedDeflated => 0x90,
        }
    }

    /// The format a token's first byte names, if this build opens it.
    #[inline]
    pub fn of(first: u8) -> Option<TokenFormat> {
        match first & 0xf0 {
            0x40 => Some(TokenFormat::Fixed),
            0x50 => Some(TokenFormat::Compact),
            0x60 => Some(TokenFormat::Deflated),
            0x70 => Some(TokenFormat::Kept),
            0x80 => Some(TokenFormat::Traced),
            0x90 => Some(TokenFormat::TracedDeflated),
            _ => None,
        }
    }

    /// The layout of its header and of its plaintext's head: a deflated token's are the
    /// compact format's (a kept token's header too; its plaintext is a reference).
    #[inline]
    pub const fn layout(self) -> TokenFormat {
        match self {
            TokenFormat::Deflated
            | TokenFormat::Kept
            | TokenFormat::Traced
            | TokenFormat::TracedDeflated => TokenFormat::Compact,
            format => format,
        }
    }

    /// Whether its plaintext is deflated.
    #[inline]
    pub const fn deflated(self) -> bool {
        matches!(self, TokenFormat::Deflated | TokenFormat::TracedDeflated)
    }

    /// Whether its plaintext begins with the saga's trace.
    #[inline]
    pub const fn traced(self) -> bool {
        matches!(self, TokenFormat::Traced | TokenFormat::TracedDeflated)
    }
}

/// The fixed-width header's length (format 0x40).
pub const FIXED_LEN: usize = 37;
/// The longest compact header: both varints at their widest.
pub const COMPACT_MAX: usize = 1 + 4 + 3 + 2 + 4 + 8 + 5 + 12;
/// The shortest header of either format.
#[cfg(test)]
pub const SHORTEST: usize = 1 + 4 + 1 + 2 + 4 + 8 + 1 + 12;

/// A header's fields, as both formats hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    pub point: [u8; 8],
    pub expires_at: u32,
    pub nonce: [u8; 24],
    /// Bytes of the header as written.
    pub len: usize,
}

/// Reads the header at the start of `bytes` in `format`; `None` if `bytes` end first or a
/// varint is not minimal.
#[inline]
pub fn read(format: TokenFormat, bytes: &[u8]) -> Option<Fields> {
    match format.layout() {
        TokenFormat::Fixed => {
            let header = bytes.get(..FIXED_LEN)?;
            Some(Fields {
                point: header[1..9].try_into().ok()?,
                expires_at: u32::from_be_bytes(header[9..13].try_into().ok()?),
                nonce: header[13..37].try_into().ok()?,
                len: FIXED_LEN,
            })
        }
        _ => {
            let mut at = 5;
            let mut point = [0u8; 8];
            point[..4].copy_from_slice(bytes.get(1..5)?);
            let version = u16::try_from(varint(bytes, &mut at, 3)?).ok()?;
            point[4..6].copy_from_slice(&version.to_be_bytes());
            point[6..8].copy_from_slice(bytes.get(at..at + 2)?);
            at += 2;
            let expires_at = u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?);
            at += 4;
            let mut nonce = [0u8; 24];
            nonce[..8].copy_from_slice(bytes.get(at..at + 8)?);
            at += 8;
            let seq = varint(bytes, &mut at, 5)?;
            nonce[8..12].copy_from_slice(&seq.to_be_bytes());
            nonce[12..].copy_from_slice(bytes.get(at..at + 12)?);
            at += 12;
            Some(Fields {
                point,
                expires_at,
                nonce,
                len: at,
            })
        }
    }
}

/// Appends the header of a token of `format`.
#[inline]
pub fn write(
    format: TokenFormat,
    key_tag: u8,
    point: &[u8; 8],
    expires_at: u32,
    nonce: &[u8; 24],
    out: &mut Vec<u8>,
) {
    out.push(format.byte() | key_tag);
    match format.layout() {
        TokenFormat::Fixed => {
            out.extend_from_slice(point);
            out.extend_from_slice(&expires_at.to_be_bytes());
            out.extend_from_slice(nonce);
        }
        _ => {
            out.extend_from_slice(&point[..4]);
            write_varint(u32::from(u16::from_be_bytes([point[4], point[5]])), out);
            out.extend_from_slice(&point[6..8]);
            out.extend_from_slice(&expires_at.to_be_bytes());
            out.extend_from_slice(&nonce[..8]);
            write_varint(
                u32::from_be_bytes([nonce[8], nonce[9], nonce[10], nonce[11]]),
                out,
            );
            out.extend_from_slice(&nonce[12..]);
        }
    }
}

/// LEB128: seven bits a byte, low first, the high bit set on every byte but the last.
#[inline]
pub fn write_varint(mut value: u32, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a LEB128 varint of at most `widest` bytes at `*at`, minimal (no trailing zero
/// byte) and within a `u32`; advances `*at` past it.
#[inline]
pub fn varint(bytes: &[u8], at: &mut usize, widest: usize) -> Option<u32> {
    let mut value: u64 = 0;
    for n in 0..widest {
        let byte = *bytes.get(*at + n)?;
        value |= u64::from(byte & 0x7f) << (7 * n);
        if byte & 0x80 == 0 {
            if n > 0 && byte == 0 {
                return None;
            }
            *at += n + 1;
            return u32::try_from(value).ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(format: TokenFormat, version: u16, seq: u32) -> (Vec<u8>, [u8; 8], [u8; 24]) {
        let mut point = [1, 2, 3, 4, 0, 0, 7, 8];
        point[4..6].copy_from_slice(&version.to_be_bytes());
        let mut nonce = [9u8; 24];
        nonce[8..12].copy_from_slice(&seq.to_be_bytes());
        let mut out = Vec::new();
        write(format, 0xa, &point, 1_800_000_000, &nonce, &mut out);
        (out, point, nonce)
    }

    #[test]
    fn both_formats_read_back_what_they_wrote() {
        for format in [TokenFormat::Fixed, TokenFormat::Compact] {
            for (version, seq) in [(0, 0), (1, 2), (127, 127), (128, 128), (u16::MAX, u32::MAX)] {
                let (bytes, point, nonce) = header(format, version, seq);
                assert_eq!(TokenFormat::of(bytes[0]), Some(format));
                assert_eq!(bytes[0] & 0x0f, 0xa);
                let fields = read(format, &bytes).expect("reads");
                assert_eq!(
                    (fields.point, fields.expires_at, fields.nonce, fields.len),
                    (point, 1_800_000_000, nonce, bytes.len())
                );
            }
        }
    }

    #[test]
    fn the_compact_header_is_four_bytes_shorter_in_a_usual_saga() {
        assert_eq!(header(TokenFormat::Fixed, 0, 1).0.len(), FIXED_LEN);
        assert_eq!(header(TokenFormat::Compact, 0, 1).0.len(), SHORTEST);
        assert_eq!(SHORTEST, FIXED_LEN - 4);
        assert_eq!(
            header(TokenFormat::Compact, u16::MAX, u32::MAX).0.len(),
            COMPACT_MAX
        );
    }

    #[test]
    fn a_header_cut_short_or_a_varint_not_minimal_is_unreadable() {
        for format in [TokenFormat::Fixed, TokenFormat::Compact] {
            let (bytes, _, _) = header(format, 300, 70_000);
            for len in 0..bytes.len() {
                assert_eq!(read(format, &bytes[..len]), None, "{format:?} cut at {len}");
            }
        }
        // The version 0 as two bytes (0x80 0x00): the same number, another header.
        let (mut bytes, _, _) = header(TokenFormat::Compact, 0, 0);
        bytes.splice(5..6, [0x80, 0x00]);
        assert_eq!(read(TokenFormat::Compact, &bytes), None);
        // A version beyond u16.
        let (mut bytes, _, _) = header(TokenFormat::Compact, 0, 0);
        bytes.splice(5..6, [0xff, 0xff, 0x07]);
        assert_eq!(read(TokenFormat::Compact, &bytes), None);
    }

    #[test]
    fn only_the_six_formats_are_known() {
        for first in 0..=u8::MAX {
            let known = TokenFormat::of(first).is_some();
            assert_eq!(
                known,
                matches!(first & 0xf0, 0x40 | 0x50 | 0x60 | 0x70 | 0x80 | 0x90),
                "{first:#x}"
            );
        }
    }
}
