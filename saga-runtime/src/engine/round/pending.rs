//! The head of a token's plaintext: the requests a suspended saga is waiting on (their
//! keys, kinds and, where the token keeps them, params), the round, the next generated
//! key and the build that sealed it. The checks an answer must pass are `collect`'s.

use crate::engine::caller::error::Failure;
use rmcp::model::InputRequest;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use crate::engine::kinds::table::Kind;
use crate::state::TokenFormat;

/// The record of the rounds so far, the part of a token's plaintext the runtime reads
/// without knowing the tool's state type; the tool's state follows it. (Not the token's
/// header, [`TokenHeader`](crate::state::TokenHeader), which is outside the seal.)
#[derive(Debug, Default)]
pub(crate) struct RoundRecord {
    /// The next number for a generated `inputRequests` key: keys stay unique over the
    /// whole saga, so a stale answer from an earlier round can never be mistaken for one
    /// of this round.
    pub(crate) next_key: u32,
    /// How many transitions the saga has run, for the log.
    pub(crate) round: u32,
    /// The requests of the last round, in the order the tool reads their answers.
    pub(crate) pending: Pendings,
    /// A digest of the requests the token keeps no params of, as they were asked: the
    /// tool's statement of them again must match it word for word.
    pub(crate) restated: Option<u32>,
    /// A tag of the code that asked (see [`SagaTool::build_tag`]): another build states
    /// its requests its own way, so the digest only binds the build that made it.
    ///
    /// [`SagaTool::build_tag`]: crate::engine::SagaTool::build_tag
    pub(crate) build: u16,
    /// The saga's trace: its first round's span, kept beside the head (not in it: formats
    /// 0x80 and 0x90 lead the plaintext with it) so that every round links to it.
    pub(crate) trace: Option<crate::state::SagaTrace>,
}

/// A round's pending requests: most rounds ask one thing, which needs no allocation.
pub(crate) type Pendings = SmallVec<[Pending; 1]>;

/// One outstanding request: its key, its kind, and, unless the tool states it again from
/// its saved state ([`Step::AskAgain`](crate::engine::Step::AskAgain)), its params as JSON (the
/// kind gives its method), so that it can be sent again word for word if the answer is
/// missing or unusable.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub(crate) key: Key,
    pub(crate) kind: Kind,
    pub(crate) params: Option<String>,
}

/// A pending request's `inputRequests` key. A generated key is kept as its number and
/// spelled (the kind's prefix, `-`, the number) only where it is sent or looked up:
/// spelling it to keep it cost two allocations per round that asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    Generated(u32),
    Named(String),
}

impl Key {
    /// The key spelled `text` for a request of `kind`: generated if it is exactly the
    /// spelling of a generated key.
    #[cfg(test)]
    pub(crate) fn from_text(kind: Kind, text: String) -> Key {
        match numbered(kind, &text) {
            Some(n) => Key::Generated(n),
            None => Key::Named(text),
        }
    }
}

/// A key as text, spelled on the stack when it is generated.
pub(crate) enum KeyText<'a> {
    Named(&'a str),
    Generated {
        spelled: [u8; GENERATED_KEY_MAX],
        len: usize,
    },
}

/// The longest generated key: `elicit-` and ten digits.
const GENERATED_KEY_MAX: usize = 17;

impl std::ops::Deref for KeyText<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            KeyText::Named(text) => text,
            // Spelled from an ASCII prefix and digits: always UTF-8.
            KeyText::Generated { spelled, len } => {
                std::str::from_utf8(&spelled[..*len]).unwrap_or_default()
            }
        }
    }
}

impl std::fmt::Display for KeyText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl std::fmt::Debug for KeyText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

pub(crate) fn key_text(kind: Kind, key: &Key) -> KeyText<'_> {
    match key {
        Key::Named(text) => KeyText::Named(text),
        Key::Generated(n) => {
            let mut spelled = [0u8; GENERATED_KEY_MAX];
            let mut digits = itoa::Buffer::new();
            let parts = [kind.prefix().as_bytes(), b"-", digits.format(*n).as_bytes()];
            let mut len = 0;
            for part in parts {
                spelled[len..len + part.len()].copy_from_slice(part);
                len += part.len();
            }
            KeyText::Generated { spelled, len }
        }
    }
}

/// A key as the token keeps it. Most keys are generated (`elicit-3`), numbered in the
/// order they were asked up to the head's `next_key`: such a key is kept as `Next`, the
/// number after the previous generated one, and costs one byte.
#[derive(Serialize, Deserialize)]
enum SealedKey<'a> {
    Next,
    Numbered(u32),
    Named(&'a str),
}

/// The number before a round's first generated key: the round's generated keys end at
/// `next_key`.
fn first_generated(next_key: u32, generated: usize) -> u32 {
    next_key.wrapping_sub(u32::try_from(generated).unwrap_or(u32::MAX))
}

#[derive(Serialize, Deserialize)]
struct SealedPending<'a> {
    kind: Kind,
    #[serde(borrow)]
    key: SealedKey<'a>,
    params: Option<&'a str>,
}

#[derive(Deserialize)]
struct SealedHead<'a> {
    next_key: u32,
    round: u32,
    #[serde(borrow)]
    pending: SmallVec<[SealedPending<'a>; 1]>,
    /// The digest's four bytes (not a varint: a digest is as long as five as often as
    /// not), then the build tag's two.
    restated: Option<[u8; 6]>,
}

/// A [`SealedHead`] as format 0x40 writes it, straight from the [`RoundRecord`].
#[derive(Serialize)]
struct SealingHead<'a> {
    next_key: u32,
    round: u32,
    pending: SealingPending<'a>,
    restated: Option<[u8; 6]>,
}

/// The head's pending entries written as `Vec<SealedPending>`, each made as it is written.
struct SealingPending<'a>(&'a RoundRecord);

impl Serialize for SealingPending<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.sealed_pending())
    }
}

impl RoundRecord {
    /// The pending entries as the token keeps them: each generated key that follows the
    /// one before as `Next`.
    fn sealed_pending(&self) -> impl Iterator<Item = SealedPending<'_>> {
        let generated = self
            .pending
            .iter()
            .filter(|entry| matches!(entry.key, Key::Generated(_)))
            .count();
        let mut last = first_generated(self.next_key, generated);
        self.pending.iter().map(move |entry| SealedPending {
            kind: entry.kind,
            key: match &entry.key {
                Key::Named(name) => SealedKey::Named(name),
                &Key::Generated(n) => {
                    let key = if n == last.wrapping_add(1) {
                        SealedKey::Next
                    } else {
                        SealedKey::Numbered(n)
                    };
                    last = n;
                    key
                }
            },
            params: entry.params.as_deref(),
        })
    }
}

/// Format 0x50's head: the numbers as postcard's varints, each pending entry's kind, key
/// form and whether it keeps params in one byte, and the restated digest without an
/// option tag (a bit of the count says whether it is there). A deploy round's head is 10
/// bytes where 0x40's was 13.
///
/// ```text
/// varint next_key, varint round, varint (entries << 1 | restated)
/// per entry: byte (kind << 3 | key form << 1 | params), then the key's number (form 1)
///            or name (form 2), then the params, each as postcard writes it
/// restated: 6 bytes (digest, build tag)
/// ```
mod packed {
    use smallvec::SmallVec;

    use super::{RoundRecord, SealedHead, SealedKey, SealedPending};
    use crate::engine::kinds::table::Kind;

    /// Kinds fit five bits: postcard writes a kind as its index.
    const KINDS_MAX: u8 = 32;

    pub(super) fn write(head: &RoundRecord, mut out: Vec<u8>) -> postcard::Result<Vec<u8>> {
        let restated = head.restated_bytes();
        let entries = u32::try_from(head.pending.len())
            .ok()
            .and_then(|n| n.checked_mul(2))
            .ok_or(postcard::Error::SerializeSeqLengthUnknown)?;
        out = postcard::to_extend(&head.next_key, out)?;
        out = postcard::to_extend(&head.round, out)?;
        out = postcard::to_extend(&(entries | u32::from(restated.is_some())), out)?;
        for entry in head.sealed_pending() {
            let mut index = [0u8; 1];
            let kind = postcard::to_slice(&entry.kind, &mut index)
                .ok()
                .and_then(|index| index.first().copied())
                .filter(|&index| index < KINDS_MAX)
                .ok_or(postcard::Error::SerializeBufferFull)?;
            let form = match entry.key {
                SealedKey::Next => 0,
                SealedKey::Numbered(_) => 1,
                SealedKey::Named(_) => 2,
            };
            out.push(kind << 3 | form << 1 | u8::from(entry.params.is_some()));
            match entry.key {
                SealedKey::Next => {}
                SealedKey::Numbered(n) => out = postcard::to_extend(&n, out)?,
                SealedKey::Named(name) => out = postcard::to_extend(name, out)?,
            }
            if let Some(params) = entry.params {
                out = postcard::to_extend(params, out)?;
            }
        }
        if let Some(restated) = restated {
            out.extend_from_slice(&restated);
        }
        Ok(out)
    }

    pub(super) fn read(bytes: &[u8]) -> postcard::Result<(SealedHead<'_>, &[u8])> {
        let (next_key, rest) = postcard::take_from_bytes::<u32>(bytes)?;
        let (round, rest) = postcard::take_from_bytes::<u32>(rest)?;
        let (shape, mut rest) = postcard::take_from_bytes::<u32>(rest)?;
        let mut pending = SmallVec::new();
        for _ in 0..shape >> 1 {
            let (&byte, after) = rest
                .split_first()
                .ok_or(postcard::Error::DeserializeUnexpectedEnd)?;
            let kind: Kind = postcard::from_bytes(&[byte >> 3])?;
            let (key, after) = match (byte >> 1) & 0b11 {
                0 => (SealedKey::Next, after),
                1 => {
                    let (n, after) = postcard::take_from_bytes::<u32>(after)?;
                    (SealedKey::Numbered(n), after)
                }
                2 => {
                    let (name, after) = postcard::take_from_bytes::<&str>(after)?;
                    (SealedKey::Named(name), after)
                }
                _ => return Err(postcard::Error::DeserializeBadEnum),
            };
            let (params, after) = if byte & 1 == 1 {
                let (params, after) = postcard::take_from_bytes::<&str>(after)?;
                (Some(params), after)
            } else {
                (None, after)
            };
            pending.push(SealedPending { kind, key, params });
            rest = after;
        }
        let restated = if shape & 1 == 1 {
            let (digest, after) = rest
                .split_first_chunk::<6>()
                .ok_or(postcard::Error::DeserializeUnexpectedEnd)?;
            rest = after;
            Some(*digest)
        } else {
            None
        };
        Ok((
            SealedHead {
                next_key,
                round,
                pending,
                restated,
            },
            rest,
        ))
    }
}

impl RoundRecord {
    /// Appends the head to `out` in the layout of tokens of `format` (0x50's packed one
    /// unless a server seals 0x40 for a rolling deploy); the tool's state follows it.
    pub(crate) fn encode(&self, format: TokenFormat, out: Vec<u8>) -> postcard::Result<Vec<u8>> {
        match format {
            // A deflated token's plaintext is in the compact layout.
            TokenFormat::Fixed => self.encode_fixed(out),
            _ => packed::write(self, out),
        }
    }

    /// Appends the head in format 0x40's layout, as the builds before 0x50 sealed it.
    fn encode_fixed(&self, out: Vec<u8>) -> postcard::Result<Vec<u8>> {
        let sealing = SealingHead {
            next_key: self.next_key,
            round: self.round,
            pending: SealingPending(self),
            restated: self.restated_bytes(),
        };
        postcard::to_extend(&sealing, out)
    }

    /// The restated digest's four bytes, then the build tag's two.
    fn restated_bytes(&self) -> Option<[u8; 6]> {
        self.restated.map(|digest| {
            let [a, b, c, d] = digest.to_be_bytes();
            let [e, f] = self.build.to_be_bytes();
            [a, b, c, d, e, f]
        })
    }

    /// Reads the head at the start of a token's plaintext, in the layout of the token's
    /// `format`; returns it with the bytes of the state that follow.
    pub(crate) fn decode(
        format: TokenFormat,
        plaintext: &[u8],
    ) -> postcard::Result<(RoundRecord, &[u8])> {
        let (sealed, rest) = match format {
            // A traced token's plaintext comes here without its trace: the compact layout.
            TokenFormat::Compact
            | TokenFormat::Deflated
            | TokenFormat::Traced
            | TokenFormat::TracedDeflated => packed::read(plaintext)?,
            TokenFormat::Fixed => postcard::take_from_bytes::<SealedHead<'_>>(plaintext)?,
            // A reference's plaintext is no state: only the state it refers to is read.
            TokenFormat::Kept => return Err(postcard::Error::DeserializeBadEncoding),
        };
        let generated = sealed
            .pending
            .iter()
            .filter(|entry| !matches!(entry.key, SealedKey::Named(_)))
            .count();
        let mut last = first_generated(sealed.next_key, generated);
        let pending = sealed
            .pending
            .into_iter()
            .map(|entry| Pending {
                key: match entry.key {
                    SealedKey::Next => {
                        last = last.wrapping_add(1);
                        Key::Generated(last)
                    }
                    SealedKey::Numbered(n) => {
                        last = n;
                        Key::Generated(n)
                    }
                    SealedKey::Named(name) => Key::Named(name.to_owned()),
                },
                kind: entry.kind,
                params: entry.params.map(str::to_owned),
            })
            .collect();
        let head = RoundRecord {
            next_key: sealed.next_key,
            round: sealed.round,
            pending,
            // Kept beside the head, not in it: the token's opening sets it.
            trace: None,
            restated: sealed
                .restated
                .map(|[a, b, c, d, _, _]| u32::from_be_bytes([a, b, c, d])),
            build: sealed
                .restated
                .map_or(0, |[_, _, _, _, e, f]| u16::from_be_bytes([e, f])),
        };
        Ok((head, rest))
    }

    /// Whether the tool must state some of the round's requests again to resend them.
    pub(crate) fn needs_restating(&self) -> bool {
        self.pending.iter().any(|entry| entry.params.is_none())
    }
}

/// The number of `key` if it is exactly the key generated for that number.
#[cfg(test)]
fn numbered(kind: Kind, key: &str) -> Option<u32> {
    let digits = key.strip_prefix(kind.prefix())?.strip_prefix('-')?;
    // `parse` also takes `+7` and `007`, which the generated keys never spell.
    let canonical = digits.bytes().all(|b| b.is_ascii_digit())
        && !(digits.len() > 1 && digits.starts_with('0'));
    canonical.then(|| digits.parse::<u32>().ok()).flatten()
}

impl Pending {
    /// The request's `inputRequests` key.
    pub(crate) fn key(&self) -> KeyText<'_> {
        key_text(self.kind, &self.key)
    }

    pub(crate) fn input_request(&self) -> Result<InputRequest, Failure> {
        let Some(request) = &self.params else {
            tracing::error!(key = %self.key(), "a pending request was not kept");
            return Err(Failure::Internal(
                "the saga's pending request could not be read back".into(),
            ));
        };
        let params = self.kind.resend(request);
        params
            .or_else(|error| serde_json::from_str::<InputRequest>(request).map_err(|_| error))
            .map_err(|error| {
                tracing::error!(key = %self.key(), %error, "a sealed request does not decode");
                Failure::Internal("the saga's pending request could not be read back".into())
            })
    }

    pub(crate) fn requested_schema(&self) -> Option<Map<String, Value>> {
        // Only the schema is built; the rest of the request is skipped over.
        #[derive(Deserialize)]
        struct Params {
            #[serde(rename = "requestedSchema")]
            requested_schema: Option<Map<String, Value>>,
            /// A whole request, as tokens sealed before the params-only form hold it.
            params: Option<Box<Params>>,
        }
        let params = serde_json::from_str::<Params>(self.params.as_deref()?).ok()?;
        params
            .requested_schema
            .or_else(|| params.params.and_then(|inner| inner.requested_schema))
    }
}

/// The JSON kept in a token for `input`: its params (the method follows from the kind).
pub(crate) fn params_json(input: &InputRequest) -> serde_json::Result<String> {
    match input {
        InputRequest::Elicitation(request) => serde_json::to_string(&request.params),
        InputRequest::CreateMessage(request) => serde_json::to_string(&request.params),
        InputRequest::ListRoots(_) => Ok(String::new()),
        other => serde_json::to_string(other),
    }
}
