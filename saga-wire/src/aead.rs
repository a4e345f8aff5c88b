//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha), built from HChaCha20 and ring's
//! ChaCha20-Poly1305.
//!
//! XChaCha20-Poly1305 is ChaCha20-Poly1305 under a subkey: HChaCha20 of the key and the
//! nonce's first 16 bytes, with the nonce's last 8 bytes (after four zero bytes) as the
//! 96-bit nonce. Tokens are the same bytes as any other implementation's, which the tests
//! check against the draft's vector and against RustCrypto's `chacha20poly1305`.
//!
//! The backend was chosen by measurement (BENCHMARKS.md, "The AEAD backend"): ring's
//! ChaCha20-Poly1305 picks its assembly for the CPU at run time and has no per-message
//! set-up cost worth counting, where RustCrypto's poly1305 either detected AVX2 on every
//! message (about 2 µs per seal + open) or, built for its portable backend, ran two to
//! three times slower on messages of a kilobyte or more.
//!
//! The server's key never leaves this module's [`Zeroizing`] copy: ring only ever sees a
//! per-nonce subkey, which opens that one token and nothing else.

use chacha20::hchacha;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};
use zeroize::Zeroizing;

/// Bytes of a key, of a nonce and of a tag: XChaCha20-Poly1305's own sizes, defined here
/// so that this module stands alone (the benches measure it as it ships).
pub const KEY_LEN: usize = 32;
pub const NONCE_LEN: usize = 24;
pub const TAG_LEN: usize = 16;

// The header reads the tag's length without this module (feature `seal` off): the same.
const _: () = assert!(TAG_LEN == crate::format::TAG_LEN);

/// The tag did not verify: the token was forged, altered, or sealed for something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forged;

/// One XChaCha20-Poly1305 key.
#[derive(Clone)]
pub struct XChaCha20Poly1305 {
    key: Zeroizing<[u8; KEY_LEN]>,
}

impl XChaCha20Poly1305 {
    pub fn new(key: &[u8; KEY_LEN]) -> Self {
        Self {
            key: Zeroizing::new(*key),
        }
    }

    /// Encrypts `in_out` in place and returns the tag over `aad` and the ciphertext.
    #[inline]
    pub fn seal_in_place(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        in_out: &mut [u8],
    ) -> [u8; TAG_LEN] {
        let (cipher, nonce) = self.subcipher(nonce);
        let tag = cipher
            .seal_in_place_separate_tag(nonce, Aad::from(aad), in_out)
            // ring refuses only messages past ChaCha20's 256 GiB counter limit; tokens are
            // capped far below that before they are ever sealed.
            .expect("ChaCha20-Poly1305 seals any message under 256 GiB");
        let mut bytes = [0u8; TAG_LEN];
        bytes.copy_from_slice(tag.as_ref());
        bytes
    }

    /// Checks `tag` over `aad` and `in_out`, then decrypts `in_out` in place. On
    /// [`Forged`], `in_out` is left unspecified and must not be used.
    #[inline]
    pub fn open_in_place(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        in_out: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Forged> {
        let (cipher, nonce) = self.subcipher(nonce);
        cipher
            .open_in_place_separate_tag(nonce, Aad::from(aad), (*tag).into(), in_out, 0..)
            .map(|_| ())
            .map_err(|_| Forged)
    }

    fn subcipher(&self, nonce: &[u8; NONCE_LEN]) -> (LessSafeKey, Nonce) {
        let (prefix, suffix) = nonce.split_at(16);
        let prefix: &[u8; 16] = prefix.try_into().expect("16 of 24 bytes");
        let subkey = Zeroizing::new(<[u8; KEY_LEN]>::from(hchacha::<chacha20::R20>(
            (&*self.key).into(),
            prefix.into(),
        )));
        let key = UnboundKey::new(&CHACHA20_POLY1305, subkey.as_slice())
            .expect("ChaCha20-Poly1305 takes a 32-byte key");
        let mut short = [0u8; 12];
        short[4..].copy_from_slice(suffix);
        (LessSafeKey::new(key), Nonce::assume_unique_for_key(short))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect()
    }

    /// draft-irtf-cfrg-xchacha-03, appendix A.3.1.
    #[test]
    fn the_drafts_vector() {
        let key: [u8; 32] = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
            .try_into()
            .unwrap();
        let nonce: [u8; 24] = hex("404142434445464748494a4b4c4d4e4f5051525354555657")
            .try_into()
            .unwrap();
        let aad = hex("50515253c0c1c2c3c4c5c6c7");
        let plaintext = b"Ladies and Gentlemen of the class of '99: If I could offer you \
                          only one tip for the future, sunscreen would be it.";
        let ciphertext = hex(
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb\
             731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452\
             2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9\
             21f9664c97637da9768812f615c68b13b52e",
        );
        let tag: [u8; 16] = hex("c0875924c1c7987947deafd8780acf49").try_into().unwrap();

        let cipher = XChaCha20Poly1305::new(&key);
        let mut buffer = plaintext.to_vec();
        assert_eq!(cipher.seal_in_place(&nonce, &aad, &mut buffer), tag);
        assert_eq!(buffer, ciphertext);
        cipher
            .open_in_place(&nonce, &aad, &mut buffer, &tag)
            .unwrap();
        assert_eq!(buffer, plaintext);
    }

    /// The same bytes as RustCrypto's implementation, for every length up to a few
    /// ChaCha blocks past the SIMD widths and any AAD, so tokens sealed before the backend
    /// changed still open.
    #[test]
    fn the_same_bytes_as_rustcrypto() {
        use chacha20poly1305::aead::AeadInOut as _;
        use chacha20poly1305::{KeyInit as _, XNonce};

        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        };
        for len in (0..600).chain([1023, 1024, 1025, 4096]) {
            let key: [u8; 32] = std::array::from_fn(|_| next());
            let nonce: [u8; 24] = std::array::from_fn(|_| next());
            let aad: Vec<u8> = (0..len % 80).map(|_| next()).collect();
            let plaintext: Vec<u8> = (0..len).map(|_| next()).collect();

            let ours = XChaCha20Poly1305::new(&key);
            let mut sealed = plaintext.clone();
            let tag = ours.seal_in_place(&nonce, &aad, &mut sealed);

            let theirs = chacha20poly1305::XChaCha20Poly1305::new(&key.into());
            let mut expected = plaintext.clone();
            let expected_tag = theirs
                .encrypt_inout_detached(&XNonce::from(nonce), &aad, expected.as_mut_slice().into())
                .unwrap();
            assert_eq!(sealed, expected, "ciphertext, {len} bytes");
            assert_eq!(tag.as_slice(), expected_tag.as_slice(), "tag, {len} bytes");

            ours.open_in_place(&nonce, &aad, &mut sealed, &tag).unwrap();
            assert_eq!(sealed, plaintext, "round trip, {len} bytes");
        }
    }

    #[test]
    fn any_changed_bit_is_forged() {
        let cipher = XChaCha20Poly1305::new(&[7; 32]);
        let nonce = [9; 24];
        let mut sealed = b"state".to_vec();
        let tag = cipher.seal_in_place(&nonce, b"aad", &mut sealed);

        let mut body = sealed.clone();
        body[0] ^= 1;
        assert_eq!(
            cipher.open_in_place(&nonce, b"aad", &mut body, &tag),
            Err(Forged)
        );
        let mut flipped_tag = tag;
        flipped_tag[15] ^= 0x80;
        let mut body = sealed.clone();
        assert_eq!(
            cipher.open_in_place(&nonce, b"aad", &mut body, &flipped_tag),
            Err(Forged)
        );
        let mut body = sealed.clone();
        assert_eq!(
            cipher.open_in_place(&nonce, b"aae", &mut body, &tag),
            Err(Forged)
        );
        for byte in [3, 20] {
            // One in the part HChaCha20 reads, one in the part ChaCha20 reads.
            let mut other_nonce = nonce;
            other_nonce[byte] ^= 1;
            let mut body = sealed.clone();
            assert_eq!(
                cipher.open_in_place(&other_nonce, b"aad", &mut body, &tag),
                Err(Forged)
            );
        }
        let other_key = XChaCha20Poly1305::new(&[8; 32]);
        let mut body = sealed.clone();
        assert_eq!(
            other_key.open_in_place(&nonce, b"aad", &mut body, &tag),
            Err(Forged)
        );
        let mut body = sealed;
        cipher
            .open_in_place(&nonce, b"aad", &mut body, &tag)
            .unwrap();
        assert_eq!(body, b"state");
    }
}
