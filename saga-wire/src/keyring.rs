//! The keys that seal and open saga state.

use std::fmt;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

#[cfg(feature = "seal")]
use super::aead::XChaCha20Poly1305;

/// Length of a sealing key in bytes.
pub const KEY_LEN: usize = 32;

// Checked here, where the ring keys its ciphers, and not in `aead` (which would then
// import this file back): the cipher takes the keys this ring reads.
#[cfg(feature = "seal")]
const _: () = assert!(KEY_LEN == super::aead::KEY_LEN);

/// A key id: the first four bytes of a domain-separated SHA-256 of the key.
///
/// Tokens carry it in the clear so that opening selects exactly one key instead of trying
/// each in turn.
pub type KeyId = [u8; 4];

/// Why a [`KeyRing`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyRingError {
    /// Neither `VAR` nor `VAR_FILE` is set.
    #[error(
        "no saga keys: set {var} to one or more comma-separated 32-byte keys \
         (base64url or hex), or {var}_FILE to a file holding them; \
         make one with `openssl rand -hex 32` or `head -c 32 /dev/urandom | base64 | tr '+/' '-_'`"
    )]
    Missing {
        /// The variable that was read.
        var: String,
    },
    /// `VAR_FILE` names a file that could not be read.
    #[error("cannot read saga keys from {path}: {source}")]
    File {
        /// The file named by `VAR_FILE`.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A key is not 32 bytes of base64url or hex.
    #[error(
        "saga key #{index} is not a 32-byte key in base64url or hex \
         (expected 43 base64url characters or 64 hex digits)"
    )]
    Malformed {
        /// The key's position in the list, from 1.
        index: usize,
    },
    /// The list holds no key.
    #[error("the saga key list is empty")]
    Empty,
    /// Two keys have the same key id (most likely the same key twice).
    #[error("saga keys #{first} and #{second} have the same key id; remove the duplicate")]
    DuplicateId {
        /// The first key's position, from 1.
        first: usize,
        /// The second key's position, from 1.
        second: usize,
    },
}

/// One key of a ring: its id, and with the feature `seal` its cipher (the runtime's codec
/// seals with it).
#[doc(hidden)]
#[non_exhaustive]
pub struct Key {
    /// The key's id.
    pub id: KeyId,
    /// The cipher it keys.
    #[cfg(feature = "seal")]
    pub cipher: XChaCha20Poly1305,
}

/// The keys that seal and open tokens.
///
/// The first key seals; every key opens. To rotate: add the new key at the end (it opens
/// tokens sealed by it on other replicas), deploy, move it to the front (it now seals),
/// deploy, and drop the old key once the longest token lifetime has passed.
///
/// Key material is zeroized when the ring is dropped and never printed by `Debug`. Without
/// the feature `seal` a ring keeps only its keys' ids (enough to say whether a token's key
/// is in it); the material is zeroized as soon as they are computed.
///
/// ```
/// # use saga_wire::KeyRing;
///
/// let ring = KeyRing::from_keys([[7u8; 32], [9u8; 32]])?;
/// assert_eq!(ring.len(), 2);
/// assert!(!format!("{ring:?}").contains("07"));
/// # Ok::<(), saga_wire::KeyRingError>(())
/// ```
pub struct KeyRing {
    keys: Vec<Key>,
}

impl KeyRing {
    /// The same keys, for a second codec (the tasks' one, with its own token lifetime).
    /// Not `Clone`: copies of key material are made only where the runtime needs them.
    #[doc(hidden)]
    pub fn duplicate(&self) -> Self {
        Self {
            keys: self
                .keys
                .iter()
                .map(|key| Key {
                    id: key.id,
                    #[cfg(feature = "seal")]
                    cipher: key.cipher.clone(),
                })
                .collect(),
        }
    }

    /// A ring with one random key, for development: tokens die with the process.
    /// (Feature `seal`: without a cipher a random key serves no purpose.)
    #[cfg(feature = "seal")]
    pub fn ephemeral() -> Self {
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        // Without an OS random source nothing in this crate can be made safe, so failing
        // loudly at start-up is the only honest answer.
        getrandom::fill(key.as_mut()).expect("the operating system's random source failed");
        Self::from_material(vec![key]).expect("one random key is always a valid ring")
    }

    /// Builds a ring from raw keys; the first seals.
    pub fn from_keys<I>(keys: I) -> Result<Self, KeyRingError>
    where
        I: IntoIterator<Item = [u8; KEY_LEN]>,
    {
        Self::from_material(keys.into_iter().map(Zeroizing::new).collect())
    }

    /// Reads keys from the environment.
    ///
    /// `VAR_FILE`, when set, names a file whose content is used (it wins over `VAR`);
    /// otherwise `VAR` itself holds the keys. Either way the value is a comma-separated
    /// list of 32-byte keys, each base64url (padding optional) or hex. Whitespace around
    /// keys is ignored.
    pub fn from_env(var: &str) -> Result<Self, KeyRingError> {
        let file_var = format!("{var}_FILE");
        if let Some(path) = std::env::var_os(&file_var) {
            return Self::from_file(Path::new(&path));
        }
        match std::env::var(var) {
            // The value is key material: zeroized once read, as a file's is.
            Ok(value) => Self::parse(&Zeroizing::new(value)),
            Err(_) => Err(KeyRingError::Missing {
                var: var.to_owned(),
            }),
        }
    }

    /// Reads keys from a file in the format of [`KeyRing::parse`].
    pub fn from_file(path: &Path) -> Result<Self, KeyRingError> {
        let text =
            Zeroizing::new(
                std::fs::read_to_string(path).map_err(|source| KeyRingError::File {
                    path: path.display().to_string(),
                    source,
                })?,
            );
        Self::parse(&text)
    }

    /// Parses a comma-separated list of keys, each base64url or hex.
    pub fn parse(text: &str) -> Result<Self, KeyRingError> {
        // Positions count every comma-separated item, empty ones too, so that an error
        // names the item the operator sees in the list.
        let keys = text
            .split(',')
            .map(str::trim)
            .enumerate()
            .filter(|(_, part)| !part.is_empty())
            .map(|(index, part)| {
                decode_key(part).ok_or(KeyRingError::Malformed { index: index + 1 })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_material(keys)
    }

    fn from_material(material: Vec<Zeroizing<[u8; KEY_LEN]>>) -> Result<Self, KeyRingError> {
        if material.is_empty() {
            return Err(KeyRingError::Empty);
        }
        let mut keys: Vec<Key> = Vec::with_capacity(material.len());
        for (index, bytes) in material.iter().enumerate() {
            let id = key_id(bytes);
            if let Some(first) = keys.iter().position(|key| key.id == id) {
                return Err(KeyRingError::DuplicateId {
                    first: first + 1,
                    second: index + 1,
                });
            }
            keys.push(Key {
                id,
                #[cfg(feature = "seal")]
                cipher: XChaCha20Poly1305::new(bytes),
            });
        }
        Ok(Self { keys })
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Always false: a ring holds at least one key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The ids of the keys, the sealing key first.
    pub fn key_ids(&self) -> impl Iterator<Item = KeyId> + '_ {
        self.keys.iter().map(|key| key.id)
    }

    /// The key new tokens are sealed with: the first.
    #[doc(hidden)]
    pub fn sealing(&self) -> &Key {
        &self.keys[0]
    }

    /// The keys whose ids pass `names`, the sealing key first.
    #[doc(hidden)]
    pub fn matching(&self, names: impl Fn(&KeyId) -> bool) -> impl Iterator<Item = &Key> {
        self.keys.iter().filter(move |key| names(&key.id))
    }
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<String> = self.keys.iter().map(|key| hex(&key.id)).collect();
        f.debug_struct("KeyRing")
            .field("key_ids", &ids)
            .field("keys", &"<redacted>")
            .finish()
    }
}

fn key_id(key: &[u8; KEY_LEN]) -> KeyId {
    let digest = Sha256::new()
        .chain_update(b"saga/key-id/v1\0")
        .chain_update(key)
        .finalize();
    let mut id = [0u8; 4];
    id.copy_from_slice(&digest[..4]);
    id
}

fn decode_key(text: &str) -> Option<Zeroizing<[u8; KEY_LEN]>> {
    let bytes = if text.len() == 2 * KEY_LEN && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        Zeroizing::new(decode_hex(text)?)
    } else {
        let engine = if text.ends_with('=') {
            &URL_SAFE
        } else {
            &URL_SAFE_NO_PAD
        };
        Zeroizing::new(engine.decode(text).ok()?)
    };
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    if bytes.len() != KEY_LEN {
        return None;
    }
    key.copy_from_slice(&bytes);
    Some(key)
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    text.as_bytes()
        .chunks(2)
        .map(|pair| {
            let high = (pair[0] as char).to_digit(16)?;
            let low = (pair[1] as char).to_digit(16)?;
            u8::try_from(high * 16 + low).ok()
        })
        .collect()
}

/// `bytes` in lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run with and without the feature `seal` (`.ci/run`): `saga inspect`, built without
    /// it, names the same key a server seals with, so a token's tag is found the same.
    #[test]
    fn a_keys_id_is_the_same_with_or_without_its_cipher() {
        let ring = KeyRing::parse(&"42".repeat(32)).unwrap();
        assert_eq!(
            ring.key_ids().collect::<Vec<_>>(),
            [[0x64, 0x7e, 0x9f, 0x5f]]
        );
        assert_eq!(ring.sealing().id, [0x64, 0x7e, 0x9f, 0x5f]);
    }

    #[test]
    fn parses_hex_and_base64url_lists() {
        let hex_key = "00".repeat(31) + "01";
        let b64_key = URL_SAFE_NO_PAD.encode([2u8; 32]);
        let padded = URL_SAFE.encode([3u8; 32]);
        let ring = KeyRing::parse(&format!(" {hex_key} ,{b64_key},{padded}")).unwrap();
        assert_eq!(ring.len(), 3);
    }

    #[test]
    fn rejects_short_keys_and_says_which() {
        let err = KeyRing::parse(&format!("{},abcd", "11".repeat(32))).unwrap_err();
        assert!(matches!(err, KeyRingError::Malformed { index: 2 }), "{err}");
    }

    #[test]
    fn rejects_duplicate_keys() {
        let key = "22".repeat(32);
        let err = KeyRing::parse(&format!("{key},{key}")).unwrap_err();
        assert!(matches!(
            err,
            KeyRingError::DuplicateId {
                first: 1,
                second: 2
            }
        ));
    }

    #[test]
    fn malformed_index_counts_empty_items() {
        let err = KeyRing::parse(&format!("{},,bad", "11".repeat(32))).unwrap_err();
        assert!(matches!(err, KeyRingError::Malformed { index: 3 }), "{err}");
    }

    #[test]
    fn empty_list_is_an_error() {
        assert!(matches!(KeyRing::parse(" , "), Err(KeyRingError::Empty)));
    }

    #[test]
    fn debug_never_prints_key_material() {
        let ring = KeyRing::from_keys([[0xAB; 32]]).unwrap();
        let text = format!("{ring:?}");
        assert!(text.contains("redacted"));
        assert!(!text.to_lowercase().contains("abab"));
    }

    #[test]
    fn from_env_reads_var_and_file_wins() {
        // Unique variable names keep this test independent of the others in the process.
        let var = "SAGA_TEST_KEYS_FROM_ENV";
        // SAFETY: no other thread reads these uniquely named variables.
        unsafe { std::env::remove_var(var) };
        unsafe { std::env::remove_var(format!("{var}_FILE")) };
        let missing = KeyRing::from_env(var).unwrap_err();
        assert!(
            missing.to_string().contains("openssl rand -hex 32"),
            "{missing}"
        );

        unsafe { std::env::set_var(var, "33".repeat(32)) };
        let from_var = KeyRing::from_env(var).unwrap();

        let dir = std::env::temp_dir().join(format!("saga-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("keys");
        std::fs::write(&file, format!("{}\n", "44".repeat(32))).unwrap();
        unsafe { std::env::set_var(format!("{var}_FILE"), &file) };
        let from_file = KeyRing::from_env(var).unwrap();
        assert_ne!(
            from_var.key_ids().next(),
            from_file.key_ids().next(),
            "VAR_FILE must win over VAR"
        );
        unsafe { std::env::remove_var(var) };
        unsafe { std::env::remove_var(format!("{var}_FILE")) };
        std::fs::remove_dir_all(dir).unwrap();
    }
}
