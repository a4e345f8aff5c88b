//! A sealed state's compression (token format 0x60, see [`format`](super::format)): the
//! plaintext deflated (RFC 1951) behind its length, before it is encrypted.
//!
//! Why deflate: a saga's state is mostly its saved locals in postcard, and what grows is
//! text (an agent's history, a fetched page, JSON). Deflate takes such text to about a
//! third (2.5–2.9× on the guide's prose, BENCHMARKS.md), is written in safe Rust
//! (`miniz_oxide`), and builds in seconds. A codec of its own is not needed: the
//! plaintext is authenticated before it is inflated, so only what this server sealed is
//! ever inflated.
//!
//! Bounds: the length written ahead of the deflated bytes is checked against
//! [`MAX_STATE_BYTES`] before anything is inflated, and the output may not pass it; the
//! server never seals a state longer than that. Both protect the server (memory per
//! request, global), whoever the caller.

use super::format::{varint, write_varint};

/// The shortest plaintext worth deflating: below it the deflate stream's own framing
/// costs about what it saves, and the usual round (a few hundred bytes) is sealed as it
/// was, without the work.
pub(crate) const DEFLATE_MIN: usize = 512;

/// The longest state a server seals, and so the most a token's state inflates to: 16 MiB.
/// A state past it ends its call with the tool's error (it is the tool's own values).
pub const MAX_STATE_BYTES: usize = 16 * 1024 * 1024;

/// States up to this many bytes are deflated at level 6; longer ones at level 3, about
/// twice as fast. (Level 1 probes one match only: a file read again 20 KB later is not
/// found, and such a state deflated to 1.8× where level 6 took it to 60×.) Either way
/// the work a request costs stays in proportion to the state the tool made.
const THOROUGH_UP_TO: usize = 2 * 1024 * 1024;

/// A state longer than this is deflated only if its first [`SAMPLE`] bytes deflate by a
/// twentieth: a state of bytes that do not compress (an encrypted blob, an image, random
/// ids) is then sealed as it is for the cost of deflating 4 KiB, not all of it.
const SAMPLED_FROM: usize = 16 * 1024;
/// The sample's length.
const SAMPLE: usize = 4 * 1024;

/// `plaintext` deflated behind its length, if that is shorter than `plaintext`.
pub(crate) fn deflate(plaintext: &[u8]) -> Option<Vec<u8>> {
    if plaintext.len() < DEFLATE_MIN || plaintext.len() > MAX_STATE_BYTES {
        return None;
    }
    if plaintext.len() > SAMPLED_FROM {
        let sample = &plaintext[..SAMPLE];
        if miniz_oxide::deflate::compress_to_vec(sample, 1).len() * 20 >= SAMPLE * 19 {
            return None;
        }
    }
    let level = if plaintext.len() <= THOROUGH_UP_TO {
        6
    } else {
        1
    };
    let deflated = miniz_oxide::deflate::compress_to_vec(plaintext, level);
    let len = u32::try_from(plaintext.len()).ok()?;
    let mut out = Vec::with_capacity(5 + deflated.len());
    write_varint(len, &mut out);
    out.extend_from_slice(&deflated);
    (out.len() < plaintext.len()).then_some(out)
}

/// The plaintext `body` holds (its length, then its deflated bytes); `None` if the length
/// is past [`MAX_STATE_BYTES`] or the bytes do not inflate to exactly that length.
pub(crate) fn inflate(body: &[u8]) -> Option<Vec<u8>> {
    let mut at = 0;
    let len = usize::try_from(varint(body, &mut at, 5)?).ok()?;
    if len > MAX_STATE_BYTES {
        return None;
    }
    let inflated = miniz_oxide::inflate::decompress_to_vec_with_limit(&body[at..], len).ok()?;
    (inflated.len() == len).then_some(inflated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_deflates_and_inflates_to_itself() {
        let text = "The agent read the file and kept what it found. ".repeat(200);
        let deflated = deflate(text.as_bytes()).expect("text deflates smaller");
        assert!(deflated.len() < text.len() / 4, "{} bytes", deflated.len());
        assert_eq!(inflate(&deflated).as_deref(), Some(text.as_bytes()));
    }

    #[test]
    fn a_short_or_incompressible_state_is_not_deflated() {
        assert_eq!(deflate(&[7u8; DEFLATE_MIN - 1]), None);
        // Bytes that do not repeat: deflating only adds its framing.
        let mut noise = Vec::with_capacity(4096);
        let mut x: u32 = 0x9e37_79b9;
        for _ in 0..4096 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            noise.push(x as u8);
        }
        assert_eq!(deflate(&noise), None);
    }

    /// A long state whose start does not compress is not deflated at all; one whose
    /// start does is, whole.
    #[test]
    fn a_long_state_is_deflated_only_if_its_start_compresses() {
        let mut x: u32 = 0x2545_f491;
        let mut noise: Vec<u8> = (0..64 * 1024)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        assert_eq!(deflate(&noise), None);
        // Text first, then the same noise: deflated (the text part shrinks).
        let mut text = "the same words again, ".repeat(1024).into_bytes();
        text.append(&mut noise);
        let deflated = deflate(&text).expect("its start compresses");
        assert_eq!(inflate(&deflated).as_deref(), Some(text.as_slice()));
    }

    #[test]
    fn a_length_past_the_bound_is_refused_before_anything_is_inflated() {
        let mut body = Vec::new();
        write_varint(u32::try_from(MAX_STATE_BYTES + 1).unwrap(), &mut body);
        body.extend_from_slice(&miniz_oxide::deflate::compress_to_vec(&[0u8; 64], 6));
        assert_eq!(inflate(&body), None);
    }

    #[test]
    fn bytes_that_inflate_to_another_length_are_refused() {
        let text = b"abcabcabc".repeat(100);
        let mut deflated = deflate(&text).expect("deflates");
        // The declared length one short, then one long: neither reads.
        let mut at = 0;
        let len = varint(&deflated, &mut at, 5).unwrap();
        let rest = deflated.split_off(at);
        for declared in [len - 1, len + 1] {
            let mut body = Vec::new();
            write_varint(declared, &mut body);
            body.extend_from_slice(&rest);
            assert_eq!(inflate(&body), None, "declared {declared}");
        }
        // Cut off, or not deflate at all.
        let whole = deflate(&text).unwrap();
        assert_eq!(inflate(&whole[..whole.len() - 3]), None);
        assert_eq!(inflate(&[3, 0xff, 0xff, 0xff]), None);
        assert_eq!(inflate(&[]), None);
    }
}
