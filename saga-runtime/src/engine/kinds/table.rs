//! The registration of every kind: its variant in [`Kind`], [`Asked`] and [`Answer`], and
//! the dispatch from those enums to the kind's [`AskKind`] impl. A kind is added here by
//! its row in the `kinds!` table, and nowhere else in the runtime.

use crate::engine::caller::error::Failure;
use rmcp::model::{ClientCapabilities, InputRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::form::protocol::FormKind;
use super::kind::{AskKind, StepFailure};
use super::roots::protocol::RootsKind;
use super::sample::protocol::SampleKind;
use super::tool_sample::protocol::ToolSampleKind;
use super::url::protocol::UrlKind;
use crate::engine::caller::context::SagaContext;
use crate::engine::identity::fnv::Fnv;

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
            /// The server's model gave no answer to a sample, for this reason.
            ModelFailed(String),
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

            pub(crate) fn parse(self, value: Value, kept: bool, key: &str) -> Result<Answer, Failure> {
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

            pub(crate) fn input(self, tool: &str) -> Result<InputRequest, Failure> {
                match self {
                    $(Asked::$name(asked) => <$kind as AskKind>::input(asked, tool),)*
                }
            }
        }
    };
}

impl Kind {
    /// Whether it is a sample, with tools or without: the server's model may answer it.
    pub(crate) fn is_sample(self) -> bool {
        matches!(self, Kind::Sample | Kind::ToolSample)
    }
}

kinds! {
    Form => FormKind,
    Url => UrlKind,
    Sample => SampleKind,
    Roots => RootsKind,
    ToolSample => ToolSampleKind,
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
            (Kind::ToolSample, 4, "sample"),
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
        let url = crate::engine::round::requests::Request::from(
            crate::engine::kinds::url::ask::elicit_url("https://x.test", "Go").elicitation_id("7"),
        );
        assert_eq!(
            digest_of(url.asked),
            expected(&[b"U", b"Go", b"https://x.test", b"7"])
        );
    }
}
