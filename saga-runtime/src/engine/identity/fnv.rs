//! A small, stable hash for digests that must agree across builds and platforms.

/// 64-bit FNV-1a: small, stable across builds and platforms, and fast on the short
/// inputs it sees here.
#[derive(Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Fnv {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;

    pub(crate) fn new() -> Self {
        Self(Self::OFFSET)
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(Self::PRIME);
        }
    }

    /// A string, length first, so that no two sequences of strings hash alike by moving
    /// bytes from one to the next.
    pub(crate) fn write_str(&mut self, text: &str) {
        self.write(&(text.len() as u64).to_le_bytes());
        self.write(text.as_bytes());
    }

    pub(crate) fn finish(self) -> u64 {
        self.0
    }

    /// The hash of `value`'s JSON text.
    pub(crate) fn of_json(value: &impl serde::Serialize) -> u64 {
        let mut hash = Self::new();
        // Writing into a hasher cannot fail; a value that does not serialize hashes as the
        // bytes it wrote before it failed, and is refused where it is sent.
        let _ = serde_json::to_writer(&mut hash, value);
        hash.finish()
    }

    /// [`Fnv::of_postcard`], or `None` for a value neither postcard nor JSON encodes
    /// whole (a map with keys JSON cannot write, in a form postcard refuses): its hash
    /// would be that of the bytes written before the failure, which another value may
    /// share.
    pub(crate) fn of_value(value: &(impl serde::Serialize + ?Sized)) -> Option<u64> {
        let (hash, whole) = Self::of_encoded(value);
        whole.then_some(hash)
    }

    /// The hash of `value`'s postcard bytes, which keep every bit of a float (JSON writes
    /// NaN and both infinities alike, as `null`). A value postcard does not encode (a
    /// sequence of unknown length) hashes as its JSON text instead, after a tag that
    /// keeps the two encodings apart; every such value hashing alike would merge them.
    pub(crate) fn of_postcard(value: &(impl serde::Serialize + ?Sized)) -> u64 {
        Self::of_encoded(value).0
    }

    /// [`Fnv::of_postcard`]'s hash, and whether the encoding it hashed is whole.
    /// The bytes are hashed as postcard writes them (no buffer): FNV reads a stream, so
    /// the hash is the one of the tag and the whole encoding.
    fn of_encoded(value: &(impl serde::Serialize + ?Sized)) -> (u64, bool) {
        let mut tagged = Self::new();
        tagged.write(&[0]);
        if let Ok(hash) = postcard::serialize_with_flavor(value, tagged) {
            return (hash, true);
        }
        let mut hash = Self::new();
        hash.write(&[1]);
        let whole = serde_json::to_writer(&mut hash, value).is_ok();
        (hash.finish(), whole)
    }
}

/// Postcard's output, hashed as it is written.
impl postcard::ser_flavors::Flavor for Fnv {
    type Output = u64;

    fn try_push(&mut self, byte: u8) -> postcard::Result<()> {
        Fnv::write(self, &[byte]);
        Ok(())
    }

    fn try_extend(&mut self, bytes: &[u8]) -> postcard::Result<()> {
        Fnv::write(self, bytes);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<u64> {
        Ok(self.finish())
    }
}

impl std::io::Write for Fnv {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        Fnv::write(self, bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The hasher of a map keyed by what the server itself chose (tool names, type names):
/// FNV costs a fraction of SipHash on such short keys, and a client can only look these
/// keys up, never insert one, so it has no way to make them collide. Maps a client adds
/// keys to (pools, principals, tokens) keep std's randomly keyed SipHash.
pub(crate) type FnvBuild = std::hash::BuildHasherDefault<Fnv>;

impl Default for Fnv {
    fn default() -> Self {
        Self::new()
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        Fnv::write(self, bytes);
    }
}

#[cfg(test)]
mod streamed {
    use super::Fnv;

    /// Hashing postcard's bytes as they are written gives the hash of the buffer it wrote
    /// before: the fingerprints already sealed in tokens read the same.
    #[test]
    fn the_streamed_hash_is_the_buffered_one() {
        let values = (
            vec!["a".to_owned(), "bé".to_owned()],
            7u64,
            -3i32,
            f64::NAN,
            Some(()),
        );
        let mut buffered = Fnv::new();
        buffered.write(&[0]);
        buffered.write(&postcard::to_allocvec(&values).expect("postcard encodes it"));
        assert_eq!(Fnv::of_postcard(&values), buffered.finish());
        assert_eq!(Fnv::of_value(&values), Some(buffered.finish()));
    }
}
