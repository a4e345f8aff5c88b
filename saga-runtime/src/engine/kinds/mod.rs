//! The kinds of request a saga can make, one module each, behind one trait: [`AskKind`].
//!
//! A kind's module holds everything about it: the function a tool calls and its builder,
//! the key prefix, the capability it needs, how it is sent and sent again, what enters a
//! round's digest, how its answer is read and checked, and how the tool reads it.
//!
//! Adding a kind is a module here and its registration in this file: its `mod` line, its
//! public names in [`prelude`], and its row in the `kinds!` table below. For
//! `#[saga_tool]` to recognise its function, it also gets its row in the macro crate's
//! `tool/suspend.rs`.

mod form;
mod roots;
mod sample;
mod url;

use rmcp::ErrorData;
use rmcp::model::{ClientCapabilities, ElicitResult, ElicitationAction, InputRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::context::SagaContext;
use super::fnv::Fnv;
use crate::log::Escaped;

pub(crate) use form::FormAnswer;
pub(crate) use prelude::*;
pub use sample::DEFAULT_MAX_TOKENS;

/// Each kind's public side: the function a tool calls, its builder, and what its answer
/// reads as. The crate's prelude exports all of it.
pub(crate) mod prelude {
    pub use super::form::{ElicitForm, elicit};
    pub use super::roots::{ListRoots, Root, list_roots};
    pub use super::sample::{Sample, Sampled, sample};
    pub use super::url::{ElicitUrl, elicit_url};
}

/// One kind of request: everything the runtime does that depends on the kind.
pub(crate) trait AskKind {
    /// What a request of this kind carries from the tool until its round is sealed.
    type Asked: std::fmt::Debug + Clone;
    /// The client's answer, read and checked, until the tool takes it.
    type Answered: std::fmt::Debug + Clone;

    /// The prefix of the `inputRequests` keys generated for requests of this kind (the
    /// key is the prefix, `-`, and a number).
    const PREFIX: &'static str;

    /// Whether the tool can state such a request again, word for word, from its saved
    /// state, so that the token need not keep it.
    const RESTATABLE: bool = true;

    /// Whether `cx` lacks the client capability this kind needs; if so, that capability
    /// is added to `required`, which the refusal names.
    fn lacks(cx: &SagaContext, required: &mut ClientCapabilities) -> bool;

    /// Writes the request into a round's digest (see `digest.rs`), a tag byte of its own
    /// first. Sealed: a token's digest binds exactly these bytes.
    fn digest(asked: &Self::Asked, hash: &mut Fnv);

    /// The params a token keeps, where the kind writes them faster than serde does from
    /// the request as it is sent (`None`: serde writes them).
    fn kept_params(_asked: &Self::Asked) -> Option<String> {
        None
    }

    /// The request as it is sent; `tool` names the tool in an error that is its bug.
    fn input(asked: Self::Asked, tool: &str) -> Result<InputRequest, ErrorData>;

    /// The request sent again, from the params a token kept.
    fn resend(params: &str) -> serde_json::Result<InputRequest>;

    /// Reads the client's answer to the request at `key`; `kept` says whether the token
    /// kept the request's params. A wrong shape is the client's error (`-32602`).
    fn parse(value: Value, kept: bool, key: &str) -> Result<Self::Answered, ErrorData>;
}

/// A client's report that a step failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepFailure {
    /// The client's error code.
    pub code: i64,
    /// The client's message.
    pub message: String,
}

impl StepFailure {
    /// A failure as a client reports it. The message is the client's text and may reach
    /// the tool's result and the log, so its control characters are escaped and its length
    /// bounded.
    pub fn from_client(code: i64, message: &str) -> Self {
        Self {
            code,
            message: crate::log::sanitized(message),
        }
    }
}

/// The registration: each kind's variant in [`Kind`], [`Asked`] and [`Answer`], and the
/// dispatch from those enums to the kind's [`AskKind`] impl.
macro_rules! kinds {
    ($($name:ident => $kind:ty,)*) => {
        /// A request's kind, as a token keeps it. Sealed: postcard writes the variant's
        /// index, so a kind is only ever appended.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub(crate) enum Kind {
            $($name,)*
        }

        /// A request as the tool made it: its kind's own data.
        #[derive(Debug, Clone)]
        pub(crate) enum Asked {
            $($name(<$kind as AskKind>::Asked),)*
        }

        /// One answer. The runtime has checked its shape (and, for a form the token
        /// kept, its content) already.
        #[derive(Debug, Clone)]
        pub(crate) enum Answer {
            $($name(<$kind as AskKind>::Answered),)*
            /// The client reported that it could not perform the step (the
            /// `tools/resumeSaga` format carries this; MRTR has no such answer).
            Failed(StepFailure),
        }

        impl Kind {
            /// Every kind, in their sealed order.
            #[cfg(test)]
            pub(crate) const ALL: &[Kind] = &[$(Kind::$name,)*];

            pub(crate) fn prefix(self) -> &'static str {
                match self {
                    $(Kind::$name => <$kind as AskKind>::PREFIX,)*
                }
            }

            pub(crate) fn restatable(self) -> bool {
                match self {
                    $(Kind::$name => <$kind as AskKind>::RESTATABLE,)*
                }
            }

            pub(crate) fn lacks(self, cx: &SagaContext, required: &mut ClientCapabilities) -> bool {
                match self {
                    $(Kind::$name => <$kind as AskKind>::lacks(cx, required),)*
                }
            }

            pub(crate) fn resend(self, params: &str) -> serde_json::Result<InputRequest> {
                match self {
                    $(Kind::$name => <$kind as AskKind>::resend(params),)*
                }
            }

            pub(crate) fn parse(self, value: Value, kept: bool, key: &str) -> Result<Answer, ErrorData> {
                match self {
                    $(Kind::$name => <$kind as AskKind>::parse(value, kept, key).map(Answer::$name),)*
                }
            }
        }

        impl Asked {
            pub(crate) fn kind(&self) -> Kind {
                match self {
                    $(Asked::$name(_) => Kind::$name,)*
                }
            }

            pub(crate) fn digest(&self, hash: &mut Fnv) {
                match self {
                    $(Asked::$name(asked) => <$kind as AskKind>::digest(asked, hash),)*
                }
            }

            pub(crate) fn kept_params(&self) -> Option<String> {
                match self {
                    $(Asked::$name(asked) => <$kind as AskKind>::kept_params(asked),)*
                }
            }

            pub(crate) fn input(self, tool: &str) -> Result<InputRequest, ErrorData> {
                match self {
                    $(Asked::$name(asked) => <$kind as AskKind>::input(asked, tool),)*
                }
            }
        }
    };
}

kinds! {
    Form => form::FormKind,
    Url => url::UrlKind,
    Sample => sample::SampleKind,
    Roots => roots::RootsKind,
}

/// The answer at `key` read as a `T`, or the client's error (`-32602`) naming what it is
/// not.
fn read_answer<T: serde::de::DeserializeOwned>(
    value: Value,
    key: &str,
    expected: &str,
) -> Result<T, ErrorData> {
    serde_json::from_value::<T>(value).map_err(|error| malformed(key, expected, &error))
}

fn malformed(key: &str, expected: &str, error: &serde_json::Error) -> ErrorData {
    tracing::info!(
        key = %Escaped(key),
        error = %Escaped(&error.to_string()),
        "malformed input response"
    );
    ErrorData::invalid_params(
        format!("inputResponses[{key:?}] is not a valid {expected}: {error}"),
        None,
    )
}

/// A well-shaped answer that says something the request rules out (`-32602`).
fn refused(key: &str, what: &str, why: &str) -> ErrorData {
    tracing::info!(key = %Escaped(key), why, "refused {what} answer");
    ErrorData::invalid_params(format!("inputResponses[{:?}] {why}", Escaped(key)), None)
}

/// An elicitation's answer, form or URL mode.
fn read_elicit_result(value: Value, key: &str) -> Result<ElicitResult, ErrorData> {
    match elicit_result(value) {
        Ok(result) => Ok(result),
        Err(value) => read_answer(value, key, "ElicitResult"),
    }
}

/// The `ElicitResult` serde would read from `value`, built by moving `content` instead of
/// rebuilding it node by node; anything but the common shape (an object with a known
/// `action` and no `_meta`) is handed back for serde to read, with serde's errors.
pub(crate) fn elicit_result(value: Value) -> Result<ElicitResult, Value> {
    let Value::Object(object) = value else {
        return Err(value);
    };
    let action = match object.get("action").and_then(Value::as_str) {
        Some("accept") => ElicitationAction::Accept,
        Some("decline") => ElicitationAction::Decline,
        Some("cancel") => ElicitationAction::Cancel,
        _ => return Err(Value::Object(object)),
    };
    if object.contains_key("_meta") {
        return Err(Value::Object(object));
    }
    let mut result = ElicitResult::new(action);
    // Taken by consuming the object: removing it from the map cost more. serde reads
    // `"content": null` as no content, as here.
    result.content = object
        .into_iter()
        .find_map(|(name, value)| (name == "content").then_some(value))
        .filter(|content| !content.is_null());
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens keep a request's kind as its variant's index: a kind moved or removed would
    /// make every sealed round read as another kind.
    #[test]
    fn each_kind_keeps_its_sealed_index_and_prefix() {
        let sealed = [
            (Kind::Form, 0u8, "elicit"),
            (Kind::Url, 1, "elicit"),
            (Kind::Sample, 2, "sample"),
            (Kind::Roots, 3, "roots"),
        ];
        assert_eq!(
            Kind::ALL.len(),
            sealed.len(),
            "a new kind gets its row here"
        );
        for (kind, index, prefix) in sealed {
            assert_eq!(postcard::to_allocvec(&kind).ok(), Some(vec![index]));
            assert_eq!(kind.prefix(), prefix);
        }
    }

    /// What a round's digest binds of each kind, byte for byte (tokens hold digests).
    #[test]
    fn each_kind_writes_its_sealed_digest_bytes() {
        let digest_of = |asked: Asked| {
            let mut hash = Fnv::new();
            asked.digest(&mut hash);
            hash.finish()
        };
        let expected = |parts: &[&[u8]]| {
            let mut hash = Fnv::new();
            hash.write(parts[0]);
            for part in &parts[1..] {
                hash.write_str(std::str::from_utf8(part).unwrap_or_default());
            }
            hash.finish()
        };
        assert_eq!(digest_of(Asked::Roots(())), expected(&[b"R"]));
        let url =
            crate::engine::Request::from(elicit_url("https://x.test", "Go").elicitation_id("7"));
        assert_eq!(
            digest_of(url.asked),
            expected(&[b"U", b"Go", b"https://x.test", b"7"])
        );
    }
}
