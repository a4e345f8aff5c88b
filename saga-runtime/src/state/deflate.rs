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

/// The most a deflated token's state inflates to, whatever the token cap: 16 MiB. Below
/// it, a codec's own bound is 64 times its token cap (4 MiB for the default 64 KiB, see
/// `StateCodec::max_state_bytes`): a state past its bound is not deflated, so it seals as
/// it is, longer than the cap, and its call ends with the error of whoever grew it.
pub const MAX_STATE_BYTES: usize = 16 * 1024 * 1024;

/// The most values a saved state holds in its self-describing slots by default
/// ([`StateCodec::max_state_values`](super::StateCodec::max_state_values)): as many as
/// one request may carry (`HttpLimits::max_json_values`'s default), so that a state costs
/// what one request's body may once read back.
pub(crate) const DEFAULT_MAX_STATE_VALUES: usize = 100_000;

/// States up to this many bytes are deflated at level 4; longer ones at level 3, faster
/// still. Level 4 (16 probes a match, lazily) deflates text within 6 % of level 6's
/// length (128 probes; 2 % on prose, shorter on logs) in about half the time: measured on
/// 64 KiB, log lines 7.84× at 11.8 µs a KiB against level 6's 7.76× at 25.2, the spec's
/// JSON schema 6.47× at 9.8 against 6.88× at 16.5, prose 2.64× at 28.4 against 2.70× at
/// 44.6, pages read again 40 KB apart 4.25× at 20.2 against 4.33× at 26.2. A state whose
/// token at level 4 is past the cap is tried at level 6 too ([`deflate`]). (Level 1
/// probes one match only: a file read again 20 KB later is not found, and such a state
/// deflated to 1.8× where level 6 took it to 60×.) Either way the work a request costs
/// stays in proportion to the state the tool made.
const THOROUGH_UP_TO: usize = 2 * 1024 * 1024;

/// A state longer than this is deflated only if its first [`SAMPLE`] bytes deflate by a
/// twentieth: a state of bytes that do not compress (an encrypted blob, an image, random
/// ids) is then sealed as it is for the cost of deflating 4 KiB, not all of it.
const SAMPLED_FROM: usize = 16 * 1024;
/// The sample's length.
const SAMPLE: usize = 4 * 1024;

/// `plaintext` deflated behind its length, if that is shorter than `plaintext` and
/// `plaintext` is at most `max` bytes. `fits(len)`: whether a plaintext of `len` bytes
/// seals into a token the codec accepts. One that does not fit as it is is deflated
/// whatever its start looks like (only deflating can save it); one whose deflated bytes
/// still do not fit at level 4 is deflated at level 6 too, the level saga deflated such
/// states at before, so that no state that fit then is refused now (a few percent
/// shorter, in twice the time, only for a state at the cap's edge).
pub(crate) fn deflate(
    plaintext: &[u8],
    max: usize,
    fits: impl Fn(usize) -> bool,
) -> Option<Vec<u8>> {
    if plaintext.len() < DEFLATE_MIN || plaintext.len() > max.min(MAX_STATE_BYTES) {
        return None;
    }
    let thorough = !fits(plaintext.len());
    if !thorough && plaintext.len() > SAMPLED_FROM {
        let sample = &plaintext[..SAMPLE];
        if miniz_oxide::deflate::compress_to_vec(sample, 1).len() * 20 >= SAMPLE * 19 {
            return None;
        }
    } else if !thorough && spread_out(plaintext) {
        return None;
    }
    if plaintext.len() > THOROUGH_UP_TO {
        return deflated_at(plaintext, 3);
    }
    let deflated = deflated_at(plaintext, 4)?;
    if fits(deflated.len()) {
        return Some(deflated);
    }
    match deflated_at(plaintext, 6) {
        Some(harder) if harder.len() < deflated.len() => Some(harder),
        _ => Some(deflated),
    }
}

/// `plaintext` deflated at `level` behind its length, if that is shorter.
fn deflated_at(plaintext: &[u8], level: u8) -> Option<Vec<u8>> {
    let deflated = miniz_oxide::deflate::compress_to_vec(plaintext, level);
    let len = u32::try_from(plaintext.len()).ok()?;
    let mut out = Vec::with_capacity(5 + deflated.len());
    write_varint(len, &mut out);
    out.extend_from_slice(&deflated);
    (out.len() < plaintext.len()).then_some(out)
}

/// The bits a byte of `bytes` carries at least, estimated from how often each value
/// occurs (their order-0 entropy, with Miller and Madow's correction for a short count),
/// past which a state is not deflated: its bytes are as spread out as random ones, so
/// coding them can save at most a twentieth; only long repeats could save more, and a
/// state of random bytes repeated is rare enough to be sealed as it is (unless only
/// deflating would keep it under the token cap: `thorough`).
const SPREAD_OUT_BITS: f64 = 7.6;

/// Whether `bytes` (a state up to [`SAMPLED_FROM`] bytes long) look like bytes deflate
/// cannot shorten: random ids, an encrypted blob, an image. A count of each byte's value,
/// about a nanosecond a byte, instead of deflating them all at level 6 (about 18 µs a KiB,
/// 15 times the seal: `benches/states.rs`) for nothing.
fn spread_out(bytes: &[u8]) -> bool {
    let mut counts = [0u32; 256];
    for &byte in bytes {
        counts[usize::from(byte)] += 1;
    }
    let n = bytes.len() as f64;
    let mut bits = 0.0;
    let mut seen = 0u32;
    for &count in counts.iter().filter(|&&count| count > 0) {
        let p = f64::from(count) / n;
        bits -= p * p.log2();
        seen += 1;
    }
    bits + f64::from(seen.saturating_sub(1)) / (2.0 * n * std::f64::consts::LN_2) >= SPREAD_OUT_BITS
}

/// The plaintext `body` holds (its length, then its deflated bytes); `None` if the length
/// is past `max` (or [`MAX_STATE_BYTES`]) or the bytes do not inflate to exactly that
/// length.
pub(crate) fn inflate(body: &[u8], max: usize) -> Option<Vec<u8>> {
    let mut at = 0;
    let len = usize::try_from(varint(body, &mut at, 5)?).ok()?;
    if len > max.min(MAX_STATE_BYTES) {
        return None;
    }
    let inflated = miniz_oxide::inflate::decompress_to_vec_with_limit(&body[at..], len).ok()?;
    (inflated.len() == len).then_some(inflated)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::state::noise;

    #[test]
    fn a_long_text_deflates_and_inflates_to_itself() {
        let text = "The agent read the file and kept what it found. ".repeat(200);
        let deflated =
            deflate(text.as_bytes(), MAX_STATE_BYTES, |_| true).expect("text deflates smaller");
        assert!(deflated.len() < text.len() / 4, "{} bytes", deflated.len());
        assert_eq!(
            inflate(&deflated, MAX_STATE_BYTES).as_deref(),
            Some(text.as_bytes())
        );
    }

    #[test]
    fn a_short_or_incompressible_state_is_not_deflated() {
        assert_eq!(
            deflate(&[7u8; DEFLATE_MIN - 1], MAX_STATE_BYTES, |_| true),
            None
        );
        // Bytes that do not repeat: deflating only adds its framing.
        assert_eq!(
            deflate(&noise(0x9e37_79b9, 4096), MAX_STATE_BYTES, |_| true),
            None
        );
    }

    /// A state up to the sample's threshold whose bytes are as spread out as random ones
    /// is not deflated (the attempt cost 15 times the seal); text, JSON, base64 and hex
    /// are, from the shortest that deflating takes.
    #[test]
    fn a_state_of_spread_out_bytes_is_told_apart_without_deflating_it() {
        for len in [DEFLATE_MIN, 600, 1024, 4096, SAMPLED_FROM] {
            let random = noise(len as u32 + 1, len);
            assert!(spread_out(&random), "{len} random bytes");
            assert_eq!(deflate(&random, MAX_STATE_BYTES, |_| true), None);
        }
        let hex: String = noise(3, 2048).iter().map(|b| format!("{b:02x}")).collect();
        let base64 = {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(noise(5, 3072))
        };
        let json = serde_json::to_string(&serde_json::json!({
            "ids": (0..60).map(|n| format!("id-{n:08}")).collect::<Vec<_>>(),
            "note": "what the tool kept"
        }))
        .unwrap();
        for (name, text) in [("hex", hex), ("base64", base64), ("JSON", json)] {
            assert!(!spread_out(text.as_bytes()), "{name}");
            assert!(
                deflate(text.as_bytes(), MAX_STATE_BYTES, |_| true).is_some(),
                "{name} deflates"
            );
        }
        // Random bytes repeated: sealed as they are, unless only deflating keeps them
        // under the cap.
        let twice = [noise(9, 2048), noise(9, 2048)].concat();
        assert_eq!(deflate(&twice, MAX_STATE_BYTES, |_| true), None);
        let deflated = deflate(&twice, MAX_STATE_BYTES, |_| false).expect("thorough");
        assert!(deflated.len() < 2200, "{}", deflated.len());
    }

    /// A long state whose start does not compress is not deflated at all; one whose
    /// start does is, whole.
    #[test]
    fn a_long_state_is_deflated_only_if_its_start_compresses() {
        let mut random = noise(0x2545_f491, 64 * 1024);
        assert_eq!(deflate(&random, MAX_STATE_BYTES, |_| true), None);
        // Text first, then the same noise: deflated (the text part shrinks).
        let mut text = "the same words again, ".repeat(1024).into_bytes();
        text.append(&mut random);
        let deflated = deflate(&text, MAX_STATE_BYTES, |_| true).expect("its start compresses");
        assert_eq!(
            inflate(&deflated, MAX_STATE_BYTES).as_deref(),
            Some(text.as_slice())
        );
    }

    /// Past a codec's bound a state is not deflated, and a declared length past it is not
    /// inflated; a state whose start does not compress is deflated when `thorough`.
    #[test]
    fn the_codecs_bound_and_the_thorough_attempt() {
        let text = "kept words ".repeat(10_000);
        assert_eq!(deflate(text.as_bytes(), 50_000, |_| true), None);
        let deflated = deflate(text.as_bytes(), 200_000, |_| true).expect("within the bound");
        assert_eq!(inflate(&deflated, 100_000), None);
        assert_eq!(
            inflate(&deflated, 110_000).as_deref(),
            Some(text.as_bytes())
        );
        // Noise first, then 60 KB of text: skipped by the sample, deflated when thorough.
        let mut state = noise(7, 20_000);
        state.extend_from_slice("more kept words ".repeat(4_000).as_bytes());
        assert_eq!(deflate(&state, MAX_STATE_BYTES, |_| true), None);
        let thorough = deflate(&state, MAX_STATE_BYTES, |_| false).expect("deflated");
        assert!(thorough.len() < state.len() / 2);
        assert_eq!(
            inflate(&thorough, MAX_STATE_BYTES).as_deref(),
            Some(state.as_slice())
        );
    }

    #[test]
    fn a_length_past_the_bound_is_refused_before_anything_is_inflated() {
        let mut body = Vec::new();
        write_varint(u32::try_from(MAX_STATE_BYTES + 1).unwrap(), &mut body);
        body.extend_from_slice(&miniz_oxide::deflate::compress_to_vec(&[0u8; 64], 6));
        assert_eq!(inflate(&body, MAX_STATE_BYTES), None);
    }

    #[test]
    fn bytes_that_inflate_to_another_length_are_refused() {
        let text = b"abcabcabc".repeat(100);
        let mut deflated = deflate(&text, MAX_STATE_BYTES, |_| true).expect("deflates");
        // The declared length one short, then one long: neither reads.
        let mut at = 0;
        let len = varint(&deflated, &mut at, 5).unwrap();
        let rest = deflated.split_off(at);
        for declared in [len - 1, len + 1] {
            let mut body = Vec::new();
            write_varint(declared, &mut body);
            body.extend_from_slice(&rest);
            assert_eq!(inflate(&body, MAX_STATE_BYTES), None, "declared {declared}");
        }
        // Cut off, or not deflate at all.
        let whole = deflate(&text, MAX_STATE_BYTES, |_| true).unwrap();
        assert_eq!(inflate(&whole[..whole.len() - 3], MAX_STATE_BYTES), None);
        assert_eq!(inflate(&[3, 0xff, 0xff, 0xff], MAX_STATE_BYTES), None);
        assert_eq!(inflate(&[], MAX_STATE_BYTES), None);
    }
}
