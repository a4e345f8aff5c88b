//! Text that does not deflate: words of hex from a xorshift stream. A test that needs a
//! state (or an answer) of a given size on the wire uses it, since a state of repeated
//! letters is deflated before it is sealed (token format 0x60) into a few hundred bytes.

/// `len` bytes of eight-hex-digit words separated by spaces, from a stream seeded by
/// `seed`: two seeds give text that shares nothing, so neither deflates against the other.
pub fn noise(seed: u32, len: usize) -> String {
    let mut x = 0x9e37_79b9u32 ^ seed.wrapping_mul(0x85eb_ca6b);
    if x == 0 {
        x = 1;
    }
    let mut text = String::with_capacity(len + 9);
    while text.len() < len {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        text.push_str(&format!("{x:08x} "));
    }
    text.truncate(len);
    text
}

/// `len` bytes of a xorshift stream seeded by `seed`: as little compressible as bytes get,
/// so a state that keeps them is sealed without deflating (its start does not compress).
pub fn noise_bytes(seed: u32, len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9u32 ^ seed.wrapping_mul(0x85eb_ca6b);
    if x == 0 {
        x = 1;
    }
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}
