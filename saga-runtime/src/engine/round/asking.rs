//! A round's requests as they are asked: keyed, gated by the client's capabilities, and
//! asked again word for word (or as this build states them) when an answer does not fit.

use crate::engine::caller::error::Failure;
use rmcp::model::{ClientCapabilities, ElicitRequestParams, InputRequest, InputRequests};

use crate::engine::caller::context::SagaContext;
use crate::engine::caller::error::tool_bug;
use crate::engine::forms::elicit::FormError;
use crate::engine::round::digest::RoundDigest;
use crate::engine::round::pending::{Key, Pending, Pendings, RoundRecord, key_text, params_json};
use crate::engine::round::requests::Request;
use crate::log::Escaped;

/// Turns the tool's requests into pending entries, giving each its key; also returns
/// them as the round's `inputRequests`, so that they need not be decoded back from the
/// entries (which costs more than sealing the token).
pub(crate) fn assign(
    requests: Vec<Request>,
    next_key: &mut u32,
    tool: &str,
) -> Result<Assigned, Failure> {
    let mut pending = Pendings::with_capacity(requests.len());
    let mut input_requests = InputRequests::new();
    let mut restated = RoundDigest::default();
    for request in requests {
        let kind = request.asked.kind();
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
        let from_state = request.restatable && kind.restatable();
        if from_state {
            restated.add(&text, &request.asked);
        }
        let fast_params = if from_state {
            None
        } else {
            request.asked.kept_params()
        };
        let input = request.asked.input(tool)?;
        let params =
            match fast_params {
                Some(params) => Some(params),
                None if from_state => None,
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
    head: &RoundRecord,
    restated: Option<Vec<Request>>,
    tool: &str,
    build: u16,
) -> Result<(InputRequests, Option<u32>), Failure> {
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
                if request.asked.kind() != entry.kind {
                    return Err(tool_bug(
                        tool,
                        &format!(
                            "the request {:?} was stated again as another kind",
                            entry.key()
                        ),
                    ));
                }
                digest.add(&entry.key(), &request.asked);
                request.asked.input(tool)?
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
    } else if digest != head.restated {
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
    misfits: &[(usize, FormError)],
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

/// Refuses the round with `-32021` if the request did not declare a capability that one of
/// `pending` needs. Checked on every request: a client's capabilities are whatever this
/// request says, never what an earlier one said.
pub(crate) fn gate(pending: &[Pending], cx: &SagaContext) -> Result<(), Failure> {
    let mut required = ClientCapabilities::default();
    let mut missing = false;
    for entry in pending {
        missing |= entry.kind.lacks(cx, &mut required);
    }
    if missing {
        tracing::info!(
            ?required,
            "the client did not declare a capability the saga needs"
        );
        return Err(Failure::MissingCapability(Box::new(required)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Assigned, asked_again, assign};
    use crate::engine::kinds::form::ask::elicit;
    use crate::engine::kinds::kind::elicit_result;
    use crate::engine::kinds::roots::ask::list_roots;
    use crate::engine::kinds::sample::ask::sample;
    use crate::engine::kinds::table::Kind;
    use crate::engine::kinds::url::ask::elicit_url;
    use crate::engine::round::pending::{Key, Pending, RoundRecord};
    use crate::engine::round::requests::Request;
    use crate::state::TokenFormat;

    fn requests() -> Vec<Request> {
        vec![
            elicit::<bool>("Sure?").into(),
            sample("Summarise").max_tokens(7).into(),
            list_roots().into(),
        ]
    }

    #[test]
    fn pending_entries_keep_params_only_and_restate_the_same_requests() {
        let mut next_key = 0;
        let Assigned {
            pending,
            input_requests: asked,
            ..
        } = assign(requests(), &mut next_key, "t").expect("valid requests");
        assert_eq!(pending.len(), 3);
        for entry in &pending {
            let params = entry.params.as_deref().expect("kept");
            assert!(!params.contains("\"method\""), "{params}");
            let restated = entry.input_request().expect("the entry restates");
            assert_eq!(
                serde_json::to_value(&restated).ok(),
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
        round.push(elicit_url("https://x.test", "Go").into());
        for request in &mut round {
            request.restatable = true;
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
            request.restatable = true;
        }
        round
    }

    fn asked(round: Vec<Request>) -> RoundRecord {
        let mut next_key = 0;
        let assigned = assign(round, &mut next_key, "t").expect("valid requests");
        RoundRecord {
            next_key,
            round: 1,
            pending: assigned.pending,
            restated: assigned.restated,
            build: 0,
            trace: None,
        }
    }

    #[test]
    fn a_round_stated_again_must_match_its_digest_word_for_word() {
        let head = asked(restated(["Sure?", "Summarise"]));
        let (again, _) = asked_again(&head, Some(restated(["Sure?", "Summarise"])), "t", 0)
            .expect("the same round");
        assert_eq!(again.len(), 3);
        for changed in [["Sure!", "Summarise"], ["Sure?", "Summarize"]] {
            assert!(
                asked_again(&head, Some(restated(changed)), "t", 0).is_err(),
                "{changed:?} is another round"
            );
        }
        let mut other_form: Vec<Request> = restated(["Sure?", "Summarise"]);
        other_form[0] = elicit::<String>("Sure?").into();
        other_form[0].restatable = true;
        assert!(
            asked_again(&head, Some(other_form), "t", 0).is_err(),
            "a form of another answer type is another round"
        );
        // After a deploy, the build that asks again states the round its own way.
        let (again, _) = asked_again(&head, Some(restated(["Sure!", "Summarise"])), "t", 1)
            .expect("another build's statement of the round");
        assert_eq!(again.len(), 3);
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
            match elicit_result(answer.clone()) {
                Ok(read) => assert_eq!(Some(read), by_serde.ok(), "{answer}"),
                Err(handed_back) => assert_eq!(handed_back, answer),
            }
        }
    }

    #[test]
    fn heads_round_trip_with_generated_and_named_keys() {
        let head = RoundRecord {
            next_key: 12,
            round: 3,
            restated: Some(0xdead_beef),
            build: 0x0102,
            trace: None,
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
        // Both layouts: the head this build seals (0x50) and the one of the tokens before it
        // (0x40), which still open.
        for format in [TokenFormat::Compact, TokenFormat::Fixed] {
            let mut bytes = encode(&head, format);
            bytes.extend_from_slice(b"state");
            let (read, rest) = RoundRecord::decode(format, &bytes).expect("decodes");
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
                ],
                "{format:?}"
            );
            assert_eq!(read.pending[1].params.as_deref(), Some("{}"));
            assert!(read.needs_restating());
        }
        // A generated key in sequence costs one byte, not its text: the whole head is
        // four bytes (next key, round, count, the entry), seven in 0x40.
        let short = RoundRecord {
            next_key: 11,
            pending: head.pending[..1].iter().cloned().collect(),
            restated: None,
            ..RoundRecord::default()
        };
        assert_eq!(encode(&short, TokenFormat::Compact).len(), 4);
        assert_eq!(encode(&short, TokenFormat::Fixed).len(), 7);
    }

    /// `head` in `format`'s layout.
    fn encode(head: &RoundRecord, format: TokenFormat) -> Vec<u8> {
        head.encode(format, Vec::new()).expect("encodes")
    }

    #[test]
    fn generated_keys_are_spelled_whole_up_to_the_largest_number() {
        for &kind in Kind::ALL {
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
            let head = RoundRecord {
                next_key,
                pending: smallvec::smallvec![
                    entry("sample-5"),
                    entry("sample-6"),
                    entry("sample-2")
                ],
                ..RoundRecord::default()
            };
            for format in [TokenFormat::Compact, TokenFormat::Fixed] {
                let bytes = encode(&head, format);
                let (read, _) = RoundRecord::decode(format, &bytes).expect("decodes");
                let keys: Vec<String> = read.pending.iter().map(|e| e.key().to_owned()).collect();
                assert_eq!(
                    keys,
                    ["sample-5", "sample-6", "sample-2"],
                    "next_key {next_key}, {format:?}"
                );
            }
        }
    }
}
