//! The requests a suspended saga is waiting on, kept inside its token, and the checks an
//! answer must pass before the tool sees it.

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    InputRequest, InputRequests, InputResponses, ListRootsRequest, ListRootsResult, Role,
    RootsCapabilities, SamplingCapability, SamplingMessageContentBlock, UrlElicitationCapability,
};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::answers::{Answer, AnswerSlots, StepFailure};
use super::context::SagaContext;
use super::digest::{PreviousDigest, RoundDigest};
use super::elicit::{ContentCheck, Misfit};
use super::error::tool_bug;
use super::requests::{Form, Request, RequestKind};
use crate::log::Escaped;

/// The part of a token's plaintext the runtime reads without knowing the tool's state
/// type; the tool's state follows it.
#[derive(Debug, Default)]
pub(crate) struct Head {
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Kind {
    Form,
    Url,
    Sample,
    Roots,
}

impl Kind {
    /// The prefix of the keys generated for requests of this kind.
    fn prefix(self) -> &'static str {
        match self {
            Kind::Form | Kind::Url => "elicit",
            Kind::Sample => "sample",
            Kind::Roots => "roots",
        }
    }
}

/// A round's pending requests: most rounds ask one thing, which needs no allocation.
pub(crate) type Pendings = SmallVec<[Pending; 1]>;

/// One outstanding request: its key, its kind, and, unless the tool states it again from
/// its saved state ([`Step::AskAgain`](super::Step::AskAgain)), its params as JSON (the
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

fn key_text(kind: Kind, key: &Key) -> KeyText<'_> {
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

/// A [`SealedHead`] as it is written, straight from the [`Head`].
#[derive(Serialize)]
struct SealingHead<'a> {
    next_key: u32,
    round: u32,
    pending: SealingPending<'a>,
    restated: Option<[u8; 6]>,
}

/// The head's pending entries written as `Vec<SealedPending>`, each made as it is written.
struct SealingPending<'a>(&'a Head);

impl Serialize for SealingPending<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let head = self.0;
        let generated = head
            .pending
            .iter()
            .filter(|entry| matches!(entry.key, Key::Generated(_)))
            .count();
        let mut last = first_generated(head.next_key, generated);
        serializer.collect_seq(head.pending.iter().map(|entry| SealedPending {
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
        }))
    }
}

impl Head {
    /// Appends the head to `out`; the tool's state follows it.
    pub(crate) fn encode(&self, out: Vec<u8>) -> postcard::Result<Vec<u8>> {
        let sealing = SealingHead {
            next_key: self.next_key,
            round: self.round,
            pending: SealingPending(self),
            restated: self.restated.map(|digest| {
                let [a, b, c, d] = digest.to_be_bytes();
                let [e, f] = self.build.to_be_bytes();
                [a, b, c, d, e, f]
            }),
        };
        postcard::to_extend(&sealing, out)
    }

    /// Reads the head at the start of a token's plaintext; returns it with the bytes of
    /// the state that follow.
    pub(crate) fn decode(plaintext: &[u8]) -> postcard::Result<(Head, &[u8])> {
        let (sealed, rest) = postcard::take_from_bytes::<SealedHead<'_>>(plaintext)?;
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
        let head = Head {
            next_key: sealed.next_key,
            round: sealed.round,
            pending,
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

    pub(crate) fn input_request(&self) -> Result<InputRequest, ErrorData> {
        let Some(request) = &self.params else {
            tracing::error!(key = %self.key(), "a pending request was not kept");
            return Err(ErrorData::internal_error(
                "the saga's pending request could not be rebuilt",
                None,
            ));
        };
        let params = match self.kind {
            Kind::Roots => return Ok(InputRequest::ListRoots(ListRootsRequest::default())),
            Kind::Form | Kind::Url => serde_json::from_str::<ElicitRequestParams>(request)
                .map(|params| InputRequest::Elicitation(ElicitRequest::new(params))),
            Kind::Sample => serde_json::from_str::<CreateMessageRequestParams>(request)
                .map(|params| InputRequest::CreateMessage(CreateMessageRequest::new(params))),
        };
        params
            .or_else(|error| serde_json::from_str::<InputRequest>(request).map_err(|_| error))
            .map_err(|error| {
                tracing::error!(key = %self.key(), %error, "a sealed request does not decode");
                ErrorData::internal_error("the saga's pending request could not be rebuilt", None)
            })
    }

    fn requested_schema(&self) -> Option<Map<String, Value>> {
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
fn params_json(input: &InputRequest) -> serde_json::Result<String> {
    match input {
        InputRequest::Elicitation(request) => serde_json::to_string(&request.params),
        InputRequest::CreateMessage(request) => serde_json::to_string(&request.params),
        InputRequest::ListRoots(_) => Ok(String::new()),
        other => serde_json::to_string(other),
    }
}

/// A request as it is sent: its kind and the rmcp request.
fn kind_of(request: &RequestKind) -> Kind {
    match request {
        RequestKind::Elicit { .. } => Kind::Form,
        RequestKind::ElicitUrl { .. } => Kind::Url,
        RequestKind::Sample(_) => Kind::Sample,
        RequestKind::ListRoots => Kind::Roots,
    }
}

fn input_of(request: RequestKind, tool: &str) -> Result<InputRequest, ErrorData> {
    Ok(match request {
        RequestKind::Elicit { message, form } => {
            let requested_schema = match &form.typed {
                Ok(schema) => schema.clone(),
                Err(reason) => return Err(tool_bug(tool, reason)),
            };
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message,
                    requested_schema,
                },
            ))
        }
        RequestKind::ElicitUrl {
            message,
            url,
            elicitation_id,
        } => InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message,
                url,
                elicitation_id: elicitation_id.unwrap_or_else(crate::state::random_id),
            },
        )),
        RequestKind::Sample(params) => {
            InputRequest::CreateMessage(CreateMessageRequest::new(*params))
        }
        RequestKind::ListRoots => InputRequest::ListRoots(ListRootsRequest::default()),
    })
}

/// Turns the tool's requests into pending entries, giving each its key; also returns
/// them as the round's `inputRequests`, so that they need not be decoded back from the
/// entries (which costs more than sealing the token).
pub(crate) fn assign(
    requests: Vec<Request>,
    next_key: &mut u32,
    tool: &str,
) -> Result<Assigned, ErrorData> {
    let mut pending = Pendings::with_capacity(requests.len());
    let mut input_requests = InputRequests::new();
    let mut restated = RoundDigest::default();
    for request in requests {
        let kind = kind_of(&request.kind);
        let key = match request.key {
            Some(key) => Key::Named(key),
            None => {
                *next_key += 1;
                Key::Generated(*next_key)
            }
        };
        let text = key_text(kind, &key);
        if pending.iter().any(|other| *other.key() == *text) {
            return Err(tool_bug(
                tool,
                &format!(
                    "two requests of one round share the key {text:?}; give each a distinct .key(..)"
                ),
            ));
        }
        // A URL elicitation's id is drawn here, not by the tool, so it could not be stated
        // again word for word: it is always kept.
        let rebuilt = request.rebuilt && kind != Kind::Url;
        if rebuilt {
            restated.add(&text, &request.kind);
        }
        let form_params = match &request.kind {
            RequestKind::Elicit { message, form } if !rebuilt => form.params_json(message),
            _ => None,
        };
        let input = input_of(request.kind, tool)?;
        let params =
            match form_params {
                Some(params) => Some(params),
                None if rebuilt => None,
                None => Some(params_json(&input).map_err(|error| {
                    tool_bug(tool, &format!("a request does not encode: {error}"))
                })?),
            };
        input_requests.insert(text.to_owned(), input);
        pending.push(Pending { key, kind, params });
    }
    Ok(Assigned {
        pending,
        input_requests,
        restated: restated.finish(),
    })
}

/// A round's requests, as the token keeps them and as they are sent.
pub(crate) struct Assigned {
    pub(crate) pending: Pendings,
    pub(crate) input_requests: InputRequests,
    /// The digest of the requests kept without params, if any.
    pub(crate) restated: Option<u32>,
}

/// The `inputRequests` of a round asked again: each kept request as it was kept, each
/// other one as the tool stated it again (`restated`, in the round's order).
pub(crate) fn asked_again(
    head: &Head,
    restated: Option<Vec<Request>>,
    tool: &str,
    build: u16,
) -> Result<(InputRequests, Option<u32>), ErrorData> {
    let pending = &head.pending;
    let mut digest = RoundDigest::default();
    let mut restated = restated.map(Vec::into_iter);
    if let Some(requests) = &restated
        && requests.len() != pending.len()
    {
        return Err(tool_bug(
            tool,
            &format!(
                "it stated {} requests again where its last round made {}",
                requests.len(),
                pending.len()
            ),
        ));
    }
    let mut input_requests = InputRequests::new();
    for entry in pending {
        let again = restated.as_mut().and_then(Iterator::next);
        let input = match (&entry.params, again) {
            (Some(_), _) => entry.input_request()?,
            (None, Some(request)) => {
                if kind_of(&request.kind) != entry.kind {
                    return Err(tool_bug(
                        tool,
                        &format!(
                            "the request {:?} was stated again as another kind",
                            entry.key()
                        ),
                    ));
                }
                digest.add(&entry.key(), &request.kind);
                input_of(request.kind, tool)?
            }
            (None, None) => entry.input_request()?,
        };
        input_requests.insert(entry.key().to_owned(), input);
    }
    let digest = digest.finish();
    if head.build != build {
        // Another build asked: after a deploy, the round is asked as this build states it.
        tracing::info!(
            tool = %crate::log::Escaped(tool),
            "a round asked by another build is asked again as this build states it"
        );
    } else if digest != head.restated && previous_digest(pending, &input_requests) != head.restated
    {
        return Err(tool_bug(
            tool,
            "it stated its last round differently from how it asked it (a request reads \
             something that changed: a Display or From impl of its own, or a field its \
             saved state leaves out); keep such a request in the token by building it \
             with a function of your own",
        ));
    }
    Ok((input_requests, digest))
}

/// Says, in each question asked again because its answer did not fit its form, why
/// (`misfits` by position in the round): the message of a form asked again ends with
/// the reason. Both eras allow it: MRTR asks again with a new `inputRequests` entry
/// under the same key, and a session sends a new `elicitation/create`; either way the
/// client shows the message it gets, and the form itself is unchanged, so an answer is
/// checked as before. The log line names the tool, the key, the field and the rule.
pub(crate) fn explain_misfits(
    pending: &[Pending],
    requests: &mut InputRequests,
    misfits: &[(usize, Misfit)],
    tool: &str,
) {
    for (index, misfit) in misfits {
        let Some(entry) = pending.get(*index) else {
            continue;
        };
        let key = entry.key();
        tracing::info!(
            tool = %Escaped(tool),
            key = %Escaped(&key),
            field = %Escaped(misfit.field.as_deref().unwrap_or("")),
            rule = %Escaped(&misfit.rule),
            "an answer does not fit its form: asking again, with the reason"
        );
        if let Some(InputRequest::Elicitation(request)) = requests.get_mut(&*key)
            && let ElicitRequestParams::FormElicitationParams { message, .. } = &mut request.params
        {
            message.push_str(&misfit.asked_again_note());
        }
    }
}

/// The digest the build before this one kept of the same round (see [`PreviousDigest`]).
fn previous_digest(pending: &[Pending], input_requests: &InputRequests) -> Option<u32> {
    let mut digest = PreviousDigest::default();
    for entry in pending.iter().filter(|entry| entry.params.is_none()) {
        let key = entry.key();
        if let Some(input) = input_requests.get(&*key) {
            digest.add(&key, input);
        }
    }
    digest.finish()
}

/// Refuses the round with `-32021` if the request did not declare a capability that one of
/// `pending` needs. Checked on every request: a client's capabilities are whatever this
/// request says, never what an earlier one said.
pub(crate) fn gate(pending: &[Pending], cx: &SagaContext) -> Result<(), ErrorData> {
    let mut required = ClientCapabilities::default();
    let mut missing = false;
    for entry in pending {
        match entry.kind {
            Kind::Form if !cx.can_elicit() => {
                required
                    .elicitation
                    .get_or_insert_with(ElicitationCapability::default);
                missing = true;
            }
            Kind::Url if !cx.can_elicit_url() => {
                let elicitation = required
                    .elicitation
                    .get_or_insert_with(ElicitationCapability::default);
                elicitation.url = Some(UrlElicitationCapability::default());
                missing = true;
            }
            Kind::Sample if !cx.can_sample() => {
                required.sampling = Some(SamplingCapability::default());
                missing = true;
            }
            Kind::Roots if !cx.can_list_roots() => {
                required.roots = Some(RootsCapabilities::default());
                missing = true;
            }
            _ => {}
        }
    }
    if missing {
        tracing::info!(
            ?required,
            "the client did not declare a capability the saga needs"
        );
        return Err(ErrorData::missing_required_client_capability(required));
    }
    Ok(())
}

/// What the client's `inputResponses` amount to.
pub(crate) enum Collected {
    /// Every pending request has a usable answer, in pending order (each `Some`, as
    /// [`Answers`](super::Answers) keeps them until the tool takes them).
    All(AnswerSlots),
    /// Something is missing or unusable: ask the same requests again. `misfits` are the
    /// answers outside their forms, by position in the round, to say why.
    Ask {
        reason: String,
        misfits: Vec<(usize, Misfit)>,
    },
}

/// Reads the answers to `pending` out of `responses`. A response that is not the result
/// type its request calls for is a malformed request (`-32602`); a missing response, or a
/// form whose content does not match the schema that was sent, means asking again.
/// Responses to keys that are not pending are ignored.
pub(crate) fn collect(
    pending: &[Pending],
    mut responses: InputResponses,
    failures: &BTreeMap<String, StepFailure>,
) -> Result<Collected, ErrorData> {
    let mut answers = AnswerSlots::with_capacity(pending.len());
    let mut missing = Vec::new();
    for entry in pending {
        let key = entry.key();
        if let Some(failure) = failures.get(&*key) {
            answers.push(Some(Answer::Failed(failure.clone())));
            continue;
        }
        let Some(value) = responses.remove(&*key) else {
            missing.push(key);
            continue;
        };
        answers.push(Some(parse(entry, value)?));
    }
    if !missing.is_empty() {
        return Ok(Collected::Ask {
            reason: format!("no answer for {missing:?}"),
            misfits: Vec::new(),
        });
    }
    let mut misfits = Vec::new();
    for (index, (entry, answer)) in pending.iter().zip(&answers).enumerate() {
        // A form the token keeps no params of is an `Answer::FormUnchecked`, checked as
        // the tool reads it: there is no schema here to check it against.
        if let (Kind::Form, Some(params), Some(Answer::Elicit(result))) =
            (entry.kind, &entry.params, answer)
            && result.action == ElicitationAction::Accept
        {
            let content = result.content.as_ref().unwrap_or(&Value::Null);
            let verdict = match Form::of_params(params) {
                Some(form) => form.kept_check.check(content),
                None => {
                    ContentCheck::new(&entry.requested_schema().unwrap_or_default()).check(content)
                }
            };
            if let Err(misfit) = verdict {
                misfits.push((index, misfit));
            }
        }
    }
    if !misfits.is_empty() {
        return Ok(Collected::Ask {
            reason: "an answer does not fit its form".to_owned(),
            misfits,
        });
    }
    Ok(Collected::All(answers))
}

fn parse(entry: &Pending, value: Value) -> Result<Answer, ErrorData> {
    let key = entry.key();
    let malformed = |expected: &str, error: serde_json::Error| {
        tracing::info!(
            key = %Escaped(&key),
            error = %Escaped(&error.to_string()),
            "malformed input response"
        );
        ErrorData::invalid_params(
            format!(
                "inputResponses[{:?}] is not a valid {expected}: {error}",
                key
            ),
            None,
        )
    };
    Ok(match entry.kind {
        Kind::Form | Kind::Url => {
            let result = match elicit_result(value) {
                Ok(result) => result,
                Err(value) => serde_json::from_value::<ElicitResult>(value)
                    .map_err(|e| malformed("ElicitResult", e))?,
            };
            match (entry.kind, &entry.params) {
                (Kind::Form, None) => Answer::FormUnchecked(result),
                _ => Answer::Elicit(result),
            }
        }
        Kind::Sample => {
            let result = serde_json::from_value::<CreateMessageResult>(value)
                .map_err(|e| malformed("CreateMessageResult", e))?;
            check_sampled(&key, &result)?;
            Answer::Sample(Box::new(result))
        }
        Kind::Roots => {
            let result = serde_json::from_value::<ListRootsResult>(value)
                .map_err(|e| malformed("ListRootsResult", e))?;
            check_roots(&key, &result)?;
            Answer::Roots(result)
        }
    })
}

/// The `ElicitResult` serde would read from `value`, built by moving `content` instead of
/// rebuilding it node by node; anything but the common shape (an object with a known
/// `action` and no `_meta`) is handed back for serde to read, with serde's errors.
fn elicit_result(value: Value) -> Result<ElicitResult, Value> {
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

/// A sampling answer is the client's LLM speaking: role `assistant`, and text, since saga
/// asks only for text (MCP 2026-07-28 `CreateMessageResult`).
fn check_sampled(key: &str, result: &CreateMessageResult) -> Result<(), ErrorData> {
    let refuse = |why: &str| {
        tracing::info!(key = %Escaped(key), why, "refused sampling answer");
        Err(ErrorData::invalid_params(
            format!("inputResponses[{:?}] {why}", Escaped(key)),
            None,
        ))
    };
    if result.message.role != Role::Assistant {
        return refuse("must have role \"assistant\"");
    }
    if !result
        .message
        .content
        .iter()
        .all(|block| matches!(block, SamplingMessageContentBlock::Text(_)))
    {
        return refuse("must hold text content only: the request asked for text");
    }
    Ok(())
}

/// Roots are `file://` URIs (MCP 2026-07-28 `Root.uri`).
fn check_roots(key: &str, result: &ListRootsResult) -> Result<(), ErrorData> {
    if let Some(root) = result
        .roots
        .iter()
        .find(|root| !root.uri.starts_with("file://"))
    {
        tracing::info!(key = %Escaped(key), uri = %Escaped(&root.uri), "refused roots answer");
        return Err(ErrorData::invalid_params(
            format!(
                "inputResponses[{:?}] has a root whose URI is not a file:// URI",
                Escaped(key)
            ),
            None,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Head, Key, Kind, Pending, assign};
    use crate::engine::requests::{Request, elicit, list_roots, sample};

    fn requests() -> Vec<Request> {
        vec![
            elicit::<bool>("Sure?").into(),
            sample("Summarise").max_tokens(7).into(),
            list_roots().into(),
        ]
    }

    #[test]
    fn pending_entries_keep_params_only_and_rebuild_the_same_requests() {
        let mut next_key = 0;
        let super::Assigned {
            pending,
            input_requests: asked,
            ..
        } = assign(requests(), &mut next_key, "t").expect("valid requests");
        assert_eq!(pending.len(), 3);
        for entry in &pending {
            let params = entry.params.as_deref().expect("kept");
            assert!(!params.contains("\"method\""), "{params}");
            let rebuilt = entry.input_request().expect("the entry rebuilds");
            assert_eq!(
                serde_json::to_value(&rebuilt).ok(),
                serde_json::to_value(&asked[&*entry.key()]).ok(),
                "{} is asked again word for word",
                entry.key()
            );
        }
        let schema = pending[0].requested_schema().expect("a form has a schema");
        assert_eq!(schema["properties"]["value"]["type"], "boolean");
    }

    #[test]
    fn restated_requests_keep_no_params_except_a_url_elicitation() {
        let mut round = requests();
        round.push(crate::engine::requests::elicit_url("https://x.test", "Go").into());
        for request in &mut round {
            request.rebuilt = true;
        }
        let mut next_key = 0;
        let assigned = assign(round, &mut next_key, "t").expect("valid requests");
        assert!(assigned.restated.is_some(), "a digest of what is not kept");
        let pending = assigned.pending;
        let kept: Vec<bool> = pending.iter().map(|entry| entry.params.is_some()).collect();
        assert_eq!(kept, [false, false, false, true]);
    }

    fn restated(messages: [&str; 2]) -> Vec<Request> {
        let mut round: Vec<Request> = vec![
            elicit::<bool>(messages[0]).into(),
            sample(messages[1]).max_tokens(7).into(),
            list_roots().into(),
        ];
        for request in &mut round {
            request.rebuilt = true;
        }
        round
    }

    fn asked(round: Vec<Request>) -> Head {
        let mut next_key = 0;
        let assigned = assign(round, &mut next_key, "t").expect("valid requests");
        Head {
            next_key,
            round: 1,
            pending: assigned.pending,
            restated: assigned.restated,
            build: 0,
        }
    }

    #[test]
    fn a_round_stated_again_must_match_its_digest_word_for_word() {
        let head = asked(restated(["Sure?", "Summarise"]));
        let (again, _) = super::asked_again(&head, Some(restated(["Sure?", "Summarise"])), "t", 0)
            .expect("the same round");
        assert_eq!(again.len(), 3);
        for changed in [["Sure!", "Summarise"], ["Sure?", "Summarize"]] {
            assert!(
                super::asked_again(&head, Some(restated(changed)), "t", 0).is_err(),
                "{changed:?} is another round"
            );
        }
        let mut other_form: Vec<Request> = restated(["Sure?", "Summarise"]);
        other_form[0] = elicit::<String>("Sure?").into();
        other_form[0].rebuilt = true;
        assert!(
            super::asked_again(&head, Some(other_form), "t", 0).is_err(),
            "a form of another answer type is another round"
        );
        // After a deploy, the build that asks again states the round its own way.
        let (again, _) = super::asked_again(&head, Some(restated(["Sure!", "Summarise"])), "t", 1)
            .expect("another build's statement of the round");
        assert_eq!(again.len(), 3);
    }

    /// The build before this one hashed each restated request's JSON; a round it sealed
    /// can still be asked again.
    #[test]
    fn a_round_sealed_with_the_previous_digest_can_be_asked_again() {
        let mut head = asked(restated(["Sure?", "Summarise"]));
        let mut next_key = 0;
        let inputs = assign(restated(["Sure?", "Summarise"]), &mut next_key, "t")
            .expect("valid requests")
            .input_requests;
        let mut previous = crate::engine::digest::PreviousDigest::default();
        for entry in &head.pending {
            previous.add(&entry.key(), &inputs[&*entry.key()]);
        }
        head.restated = previous.finish();
        assert_ne!(
            head.restated,
            asked(restated(["Sure?", "Summarise"])).restated
        );
        assert!(super::asked_again(&head, Some(restated(["Sure?", "Summarise"])), "t", 0).is_ok());
        assert!(super::asked_again(&head, Some(restated(["Sure!", "Summarise"])), "t", 0).is_err());
    }

    /// The shortcut reads every elicitation answer exactly as serde does, or leaves it
    /// to serde.
    #[test]
    fn elicitation_answers_read_as_serde_reads_them() {
        let answers = [
            json!({"action": "accept", "content": {"value": "prod", "n": [1, {"a": null}]}}),
            json!({"action": "accept"}),
            json!({"action": "accept", "content": null}),
            json!({"action": "accept", "content": "not an object"}),
            json!({"action": "decline"}),
            json!({"action": "cancel", "extra": true}),
            json!({"action": "accept", "_meta": {"k": 1}, "content": {}}),
            json!({"action": "Accept"}),
            json!({"action": 1}),
            json!({"content": {}}),
            json!({"action": "accept", "_meta": 3}),
            json!(["accept"]),
            json!(null),
        ];
        for answer in answers {
            let by_serde = serde_json::from_value::<rmcp::model::ElicitResult>(answer.clone());
            match super::elicit_result(answer.clone()) {
                Ok(read) => assert_eq!(Some(read), by_serde.ok(), "{answer}"),
                Err(handed_back) => assert_eq!(handed_back, answer),
            }
        }
    }

    #[test]
    fn heads_round_trip_with_generated_and_named_keys() {
        let head = Head {
            next_key: 12,
            round: 3,
            restated: Some(0xdead_beef),
            build: 0x0102,
            pending: smallvec::smallvec![
                Pending {
                    key: Key::from_text(Kind::Form, "elicit-11".into()),
                    kind: Kind::Form,
                    params: None,
                },
                Pending {
                    key: Key::from_text(Kind::Sample, "sample-12".into()),
                    kind: Kind::Sample,
                    params: Some("{}".into()),
                },
                // Look generated but are not the canonical spelling: kept by name.
                Pending {
                    key: Key::from_text(Kind::Form, "elicit-012".into()),
                    kind: Kind::Form,
                    params: None,
                },
                Pending {
                    key: Key::from_text(Kind::Form, "elicit-+5".into()),
                    kind: Kind::Form,
                    params: None,
                },
                Pending {
                    key: Key::from_text(Kind::Form, "elicit-99999999999".into()),
                    kind: Kind::Form,
                    params: None,
                },
                Pending {
                    key: Key::from_text(Kind::Roots, "mine".into()),
                    kind: Kind::Roots,
                    params: None,
                },
            ],
        };
        let mut bytes = head.encode(Vec::new()).expect("encodes");
        bytes.extend_from_slice(b"state");
        let (read, rest) = Head::decode(&bytes).expect("decodes");
        assert_eq!(rest, b"state");
        assert_eq!((read.next_key, read.round), (12, 3));
        assert_eq!((read.restated, read.build), (Some(0xdead_beef), 0x0102));
        let keys: Vec<String> = read
            .pending
            .iter()
            .map(|entry| entry.key().to_owned())
            .collect();
        assert_eq!(
            keys,
            [
                "elicit-11",
                "sample-12",
                "elicit-012",
                "elicit-+5",
                "elicit-99999999999",
                "mine"
            ]
        );
        assert_eq!(read.pending[1].params.as_deref(), Some("{}"));
        assert!(read.needs_restating());
        // A generated key in sequence costs one byte, not its text.
        let short = Head {
            next_key: 11,
            pending: head.pending[..1].iter().cloned().collect(),
            restated: None,
            ..Head::default()
        };
        assert_eq!(short.encode(Vec::new()).expect("encodes").len(), 7);
    }

    #[test]
    fn generated_keys_are_spelled_whole_up_to_the_largest_number() {
        for kind in [Kind::Form, Kind::Url, Kind::Sample, Kind::Roots] {
            for n in [0, 7, 10, 4_294_967_295] {
                let spelled = super::key_text(kind, &Key::Generated(n)).to_owned();
                assert_eq!(spelled, format!("{}-{n}", kind.prefix()));
                assert_eq!(Key::from_text(kind, spelled), Key::Generated(n));
            }
        }
    }

    #[test]
    fn a_pinned_key_spelled_like_a_generated_one_is_the_same_key() {
        let round: Vec<Request> = vec![
            elicit::<bool>("First?").into(),
            elicit::<bool>("Second?").key("elicit-1").into(),
        ];
        let mut next_key = 0;
        assert!(
            assign(round, &mut next_key, "t").is_err(),
            "two requests under elicit-1"
        );
    }

    #[test]
    fn generated_keys_out_of_sequence_keep_their_numbers() {
        let entry = |key: &str| Pending {
            key: Key::from_text(Kind::Sample, key.into()),
            kind: Kind::Sample,
            params: None,
        };
        for next_key in [0, 3, 7, u32::MAX] {
            let head = Head {
                next_key,
                pending: smallvec::smallvec![
                    entry("sample-5"),
                    entry("sample-6"),
                    entry("sample-2")
                ],
                ..Head::default()
            };
            let bytes = head.encode(Vec::new()).expect("encodes");
            let (read, _) = Head::decode(&bytes).expect("decodes");
            let keys: Vec<String> = read.pending.iter().map(|e| e.key().to_owned()).collect();
            assert_eq!(
                keys,
                ["sample-5", "sample-6", "sample-2"],
                "next_key {next_key}"
            );
        }
    }
}
