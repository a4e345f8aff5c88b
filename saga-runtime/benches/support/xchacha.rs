//! XChaCha20-Poly1305 built the way `saga_runtime::state` builds it (that module is
//! private): the AEAD floor of the `codec` and `transition` benches.

use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};

fn subcipher(key: &[u8; 32], nonce: &[u8; 24]) -> (LessSafeKey, Nonce) {
    let prefix: &[u8; 16] = nonce[..16].try_into().unwrap();
    let subkey: [u8; 32] = chacha20::hchacha::<chacha20::R20>(key.into(), prefix.into()).into();
    let mut short = [0u8; 12];
    short[4..].copy_from_slice(&nonce[16..]);
    (
        LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &subkey).unwrap()),
        Nonce::assume_unique_for_key(short),
    )
}

pub fn seal(key: &[u8; 32], nonce: &[u8; 24], aad: &[u8], buffer: &mut [u8]) -> [u8; 16] {
    let (cipher, nonce) = subcipher(key, nonce);
    let tag = cipher
        .seal_in_place_separate_tag(nonce, Aad::from(aad), buffer)
        .unwrap();
    tag.as_ref().try_into().unwrap()
}

pub fn open(key: &[u8; 32], nonce: &[u8; 24], aad: &[u8], buffer: &mut [u8], tag: &[u8; 16]) {
    let (cipher, nonce) = subcipher(key, nonce);
    cipher
        .open_in_place_separate_tag(nonce, Aad::from(aad), (*tag).into(), buffer, 0..)
        .unwrap();
}
