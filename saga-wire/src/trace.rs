//! The identity of a saga's trace: the W3C trace context of its first round's span, kept
//! in its sealed state so that every later round, on any replica, after any restart, can
//! link to it (feature `otel`; see saga-runtime's `otel`).
//!
//! ```text
//! size  field
//! 16    trace id     the first round's (the client's, when its request carried one)
//! 8     span id      the first round's MCP server span
//! 1     flags        W3C trace flags (bit 0: sampled)
//! ```
//!
//! These 25 bytes lead the plaintext of a token of format 0x80 (or 0x90, deflated with
//! the rest): a build before them refuses such a token as a format it does not know,
//! never reading the ids as a state. A build without the `otel` feature reads them and
//! seals them again, so a saga keeps its trace across replicas built either way.
//!
//! The W3C `traceparent` header's text form is read and written here too: a request's
//! `_meta` and headers carry it, and a task's record keeps its creation's.

/// Bytes of a [`SagaTrace`] in a token's plaintext.
pub const SAGA_TRACE_LEN: usize = 25;

/// A span's W3C trace context: its trace id, its span id and its trace flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SagaTrace {
    /// The trace id: 16 bytes, never all zero.
    pub trace_id: [u8; 16],
    /// The span id: 8 bytes, never all zero.
    pub span_id: [u8; 8],
    /// The W3C trace flags (bit 0: sampled).
    pub flags: u8,
}

/// The longest `traceparent` read: version 00's 55 characters, and room for a future
/// version's additions, which W3C asks a reader of version 00 to accept and ignore.
const TRACEPARENT_MAX: usize = 256;

impl SagaTrace {
    /// The ids, if both are valid (not all zero).
    pub fn new(trace_id: [u8; 16], span_id: [u8; 8], flags: u8) -> Option<Self> {
        (trace_id != [0; 16] && span_id != [0; 8]).then_some(Self {
            trace_id,
            span_id,
            flags,
        })
    }

    /// Whether the span was sampled (flag bit 0).
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// Reads a W3C `traceparent` value (`00-<32 hex>-<16 hex>-<2 hex>`): `None` for
    /// anything else, including the invalid all-zero ids, upper-case hex and version
    /// `ff`. A version after `00` is read as version 00's fields, as W3C asks, when it is
    /// followed by `-` or ends there.
    pub fn parse_traceparent(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() < 55 || bytes.len() > TRACEPARENT_MAX {
            return None;
        }
        let version = hex_bytes::<1>(&bytes[0..2])?[0];
        if version == 0xff
            || (version == 0 && bytes.len() != 55)
            || (version != 0 && bytes.len() > 55 && bytes[55] != b'-')
        {
            return None;
        }
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let trace_id = hex_bytes::<16>(&bytes[3..35])?;
        let span_id = hex_bytes::<8>(&bytes[36..52])?;
        let flags = hex_bytes::<1>(&bytes[53..55])?[0];
        Self::new(trace_id, span_id, flags)
    }

    /// The W3C `traceparent` value, version 00.
    pub fn traceparent(&self) -> String {
        let mut out = String::with_capacity(55);
        out.push_str("00-");
        push_hex(&mut out, &self.trace_id);
        out.push('-');
        push_hex(&mut out, &self.span_id);
        out.push('-');
        push_hex(&mut out, &[self.flags]);
        out
    }

    /// The trace id as 32 lower-case hex digits, as trace backends show it.
    pub fn trace_id_hex(&self) -> String {
        let mut out = String::with_capacity(32);
        push_hex(&mut out, &self.trace_id);
        out
    }

    /// The 25 bytes a token keeps.
    #[doc(hidden)]
    pub fn to_bytes(self) -> [u8; SAGA_TRACE_LEN] {
        let mut out = [0u8; SAGA_TRACE_LEN];
        out[..16].copy_from_slice(&self.trace_id);
        out[16..24].copy_from_slice(&self.span_id);
        out[24] = self.flags;
        out
    }

    /// The ids of the 25 bytes a token keeps; `None` if they are short or not valid ids.
    #[doc(hidden)]
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let bytes: &[u8; SAGA_TRACE_LEN] = bytes.get(..SAGA_TRACE_LEN)?.try_into().ok()?;
        let trace_id = bytes[..16].try_into().ok()?;
        let span_id = bytes[16..24].try_into().ok()?;
        Self::new(trace_id, span_id, bytes[24])
    }
}

/// `N` bytes of `2 * N` lower-case hex digits.
fn hex_bytes<const N: usize>(digits: &[u8]) -> Option<[u8; N]> {
    fn digit(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    if digits.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_traceparent_reads_and_writes_back() {
        let trace = SagaTrace::parse_traceparent(GOOD).expect("valid");
        assert_eq!(trace.traceparent(), GOOD);
        assert_eq!(trace.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(trace.sampled());
        assert_eq!(SagaTrace::from_bytes(&trace.to_bytes()), Some(trace));
    }

    #[test]
    fn malformed_traceparents_are_none() {
        let zero_trace = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
        let zero_span = "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01";
        let upper = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01";
        let version_ff = "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let longer_00 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x";
        let glued_future = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x";
        let long = "0".repeat(10_000);
        for bad in [
            "",
            "garbage",
            zero_trace,
            zero_span,
            upper,
            version_ff,
            longer_00,
            glued_future,
            &GOOD[..54],
            &GOOD.replace('-', "_"),
            &long,
            "00-4bf92f3577b34da6a3ce929d0e0e47é6-00f067aa0ba902b7-01",
        ] {
            assert_eq!(SagaTrace::parse_traceparent(bad), None, "{bad:?}");
        }
        // A later version's fields are read as version 00's, as W3C asks.
        let future = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more";
        assert!(SagaTrace::parse_traceparent(future).is_some());
    }

    #[test]
    fn ids_of_a_token_that_are_short_or_zero_are_none() {
        assert_eq!(SagaTrace::from_bytes(&[1; 24]), None);
        assert_eq!(SagaTrace::from_bytes(&[0; 25]), None);
        assert!(SagaTrace::from_bytes(&[1; 25]).is_some());
    }
}
