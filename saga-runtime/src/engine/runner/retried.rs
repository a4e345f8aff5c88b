//! A request sent again: with a single-use store that records outcomes, the request that
//! redeems a token records what it answered ([`record`]), and the same request sent again
//! (same token, same caller, same answers) gets that answer ([`replayed`]) instead of
//! running the round a second time. One sent while the first still runs waits for its
//! answer, for at most the codec's
//! [`retry_wait`](crate::state::StateCodec::retry_wait).
//!
//! The plaintext of a recorded outcome is JSON, version
//! [`OUTCOME_VERSION`](crate::state) of the sealed layout (see `state::outcome`):
//!
//! ```text
//! {"complete": CallToolResult} | {"inputRequired": InputRequiredResult} | {"error": ErrorData}
//! ```
//!
//! Each reads back into the same value, and so encodes to the same bytes, in whatever wire
//! format the request came in.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CallToolResult, InputRequiredResult};
use serde::{Deserialize, Serialize};

use crate::engine::caller::error::{Failure, invalid_state};
use crate::log::Escaped;
use crate::metrics::Refusal;
use crate::state::{Claim, Claimed, StateCodec, unix_now};

/// The largest outcome recorded: a larger answer is sent, not kept, and a retry of its
/// request is refused (as without recorded outcomes).
pub(crate) const MAX_OUTCOME_BYTES: usize = 4 << 20;

#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
#[serde(rename_all = "camelCase")]
enum Recorded {
    Complete(CallToolResult),
    InputRequired(InputRequiredResult),
    Error(ErrorData),
}

/// What [`encode`] writes: [`Recorded`]'s JSON from a borrowed outcome, so that the
/// response is not cloned to be recorded (the same bytes: a test reads them back).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum Recording<'a> {
    Complete(&'a CallToolResult),
    InputRequired(&'a InputRequiredResult),
    Error(&'a ErrorData),
}

/// `outcome` as a recorded outcome's plaintext; `None` for an outcome no retry is
/// answered from (a task's creation, which the route answers from the task's record).
fn encode(outcome: &Result<CallToolResponse, ErrorData>) -> Option<Vec<u8>> {
    let recording = match outcome {
        Ok(CallToolResponse::Complete(result)) => Recording::Complete(result),
        Ok(CallToolResponse::InputRequired(required)) => Recording::InputRequired(required),
        Ok(_) => return None,
        Err(error) => Recording::Error(error),
    };
    let bytes = match recording {
        // `{"inputRequired":RESULT}`, as serde_json writes `Recording`, the result written
        // straight out (`written`): through rmcp's serializer, a `Value` was built for
        // every input request, and that was most of what a record cost.
        Recording::InputRequired(required) => {
            let mut bytes = Vec::with_capacity(1024);
            bytes.extend_from_slice(br#"{"inputRequired":"#);
            super::written::write_input_required(required, None, &mut bytes).ok()?;
            bytes.push(b'}');
            bytes
        }
        recording => serde_json::to_vec(&recording).ok()?,
    };
    (bytes.len() <= MAX_OUTCOME_BYTES).then_some(bytes)
}

fn decode(plaintext: &[u8]) -> Option<Result<CallToolResponse, ErrorData>> {
    Some(match serde_json::from_slice(plaintext).ok()? {
        Recorded::Complete(result) => Ok(CallToolResponse::Complete(result)),
        Recorded::InputRequired(required) => Ok(CallToolResponse::InputRequired(required)),
        Recorded::Error(error) => Err(error),
    })
}

/// Records what the request that claimed its token answered, once the drive is done with
/// it. A store that cannot keep it is logged: the request still answers, and a retry of it
/// is refused.
///
/// `None`: the answer is not one to give again (a task's creation); the token is spent.
pub(crate) async fn record(
    codec: &StateCodec,
    claimed: &Claimed,
    tool: &str,
    outcome: Option<&Result<CallToolResponse, ErrorData>>,
) {
    let plaintext = outcome.and_then(encode);
    if plaintext.is_none() {
        tracing::debug!(tool = %Escaped(tool), "an outcome not recorded: a retry of its request is refused");
    }
    if let Err(error) = codec.record(claimed, plaintext.as_deref()).await {
        tracing::warn!(
            tool = %Escaped(tool),
            %error,
            "cannot record a round's outcome: a retry of its request is refused"
        );
    }
}

/// What a token claimed for this request answers: `None` if the round is this request's
/// to run, else the answer recorded for it (waiting for it while the first request
/// runs), or the refusal.
pub(crate) async fn replayed(
    codec: &StateCodec,
    tool: &str,
    claim: Claim,
    claimed: &Claimed,
) -> Result<Option<Result<CallToolResponse, ErrorData>>, Failure> {
    let deadline = tokio::time::Instant::now() + codec.retry_wait();
    let mut pause = Duration::from_millis(10);
    let mut claim = claim;
    loop {
        match claim {
            Claim::First => return Ok(None),
            Claim::Recorded(sealed) => {
                return match codec
                    .open_outcome(claimed, &sealed)
                    .as_deref()
                    .and_then(decode)
                {
                    Some(outcome) => {
                        tracing::info!(tool = %Escaped(tool), "a request sent again: answered from its recorded outcome");
                        Ok(Some(outcome))
                    }
                    // Other answers (or another build's outcome): refused, as any
                    // redeemed token is.
                    None => Err(invalid_state(tool, &Refusal::Redeemed)),
                };
            }
            Claim::Running { lease_until } => {
                if lease_until < unix_now() {
                    // Its runner died (or gave the round back): this request runs the
                    // round again from the same token, its effects under the keys they
                    // had, where the store takes claims over. Lost to another retry (or
                    // to its runner's renewal or answer): it waits for that run's answer
                    // as for any running one.
                    match codec.take_over(claimed, lease_until).await {
                        Ok(true) => return Ok(None),
                        Ok(false) if codec.renewal().is_none() => return Err(lost(tool)),
                        Ok(false) => {}
                        Err(error) => {
                            tracing::error!(tool = %Escaped(tool), %error, "cannot take over a stopped round");
                            return Err(unavailable());
                        }
                    }
                }
                if tokio::time::Instant::now() + pause > deadline {
                    return Err(still_running());
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(250));
                claim = match codec.claim_again(claimed).await {
                    // Never the round for a request that waited: a store of one's own that
                    // answers so is read as having nothing.
                    Ok(Claim::First) => Claim::Spent,
                    Ok(claim) => claim,
                    Err(error) => {
                        tracing::error!(tool = %Escaped(tool), %error, "cannot read a redeemed token's outcome");
                        return Err(unavailable());
                    }
                };
            }
            // Spent, retired, or a claim of a store's own kind: refused.
            _ => return Err(invalid_state(tool, &Refusal::Redeemed)),
        }
    }
}

/// The store could not be asked: the round did not run, and the same request sent again
/// later runs it (`-32603`, its `data` saying it may be sent again).
pub(crate) fn unavailable() -> Failure {
    Failure::Unavailable("the server cannot accept this round now; retry later".into())
}

/// The first request of this token is still running past the codec's retry wait: sent
/// again later, it gets that request's answer.
fn still_running() -> Failure {
    Failure::Tool(Box::new(still_running_error()))
}

/// What a request sent again gets while the first sending of it is still running, past
/// the wait (and, in one process, while a resume of the same token runs): `-32600`, which
/// its `data` says may be sent again (`retryable`, and after how long).
pub(crate) fn still_running_error() -> ErrorData {
    ErrorData::invalid_request(
        "this requestState is being answered by an earlier request that is still running; \
         send the same request again shortly to get its answer",
        Some(serde_json::json!({"retryable": true, "retryAfterMs": 1000})),
    )
}

/// The request that redeemed the token ran past its lease without recording an answer
/// (its server stopped, or it was stopped), in a store that does not take claims over:
/// what it did is not known, and the round is not run a second time.
fn lost(tool: &str) -> Failure {
    tracing::warn!(tool = %Escaped(tool), "a request sent again after its first was lost");
    Failure::InvalidParams(
        "the request that first sent this requestState stopped before it answered (its \
         server stopped, or it ran past its bound); what its round did is not known, and \
         it is not run a second time: start the call again"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock as Content, InputRequest, InputRequests};

    fn round_trip(outcome: Result<CallToolResponse, ErrorData>) {
        let bytes = encode(&outcome).expect("recorded");
        // The borrowed encoding writes what the owned layout reads and writes.
        let owned = match outcome.clone() {
            Ok(CallToolResponse::Complete(result)) => Recorded::Complete(result),
            Ok(CallToolResponse::InputRequired(required)) => Recorded::InputRequired(required),
            Err(error) => Recorded::Error(error),
            Ok(_) => unreachable!(),
        };
        assert_eq!(serde_json::to_vec(&owned).expect("encoded"), bytes);
        let back = decode(&bytes).expect("read back");
        assert_eq!(encode(&back).expect("recorded again"), bytes);
        let wire = |outcome: &Result<CallToolResponse, ErrorData>| match outcome {
            Ok(CallToolResponse::Complete(result)) => serde_json::to_string(result).unwrap(),
            Ok(CallToolResponse::InputRequired(required)) => {
                serde_json::to_string(required).unwrap()
            }
            Err(error) => serde_json::to_string(error).unwrap(),
            Ok(_) => unreachable!(),
        };
        assert_eq!(wire(&back), wire(&outcome), "the same bytes on the wire");
    }

    #[test]
    fn every_outcome_reads_back_to_the_same_bytes() {
        let mut result =
            CallToolResult::success(vec![Content::text("done"), Content::text("second")]);
        result.structured_content = Some(serde_json::json!({"z": 1, "a": [1.5, null, "x"]}));
        round_trip(Ok(CallToolResponse::Complete(result)));
        round_trip(Ok(CallToolResponse::Complete(CallToolResult::error(vec![
            Content::text("no"),
        ]))));
        let form: rmcp::model::ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "mode": "form",
            "message": "Ship it?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        }))
        .expect("a form");
        let mut requests = InputRequests::new();
        requests.insert(
            "a".into(),
            InputRequest::Elicitation(rmcp::model::ElicitRequest::new(form)),
        );
        let sample: rmcp::model::CreateMessageRequestParams =
            serde_json::from_value(serde_json::json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 100,
                // An `f32`, which rmcp's serializer writes widened through a `Value`: the
                // record's own writer writes the same bytes.
                "temperature": 0.7,
                "tools": [{"name": "look", "inputSchema": {"type": "object"}}]
            }))
            .expect("a sample");
        requests.insert(
            "b".into(),
            InputRequest::CreateMessage(rmcp::model::CreateMessageRequest::new(sample)),
        );
        requests.insert("c".into(), InputRequest::ListRoots(Default::default()));
        round_trip(Ok(CallToolResponse::InputRequired(
            InputRequiredResult::new(Some(requests), Some("token".into())),
        )));
        round_trip(Ok(CallToolResponse::InputRequired(
            InputRequiredResult::from_request_state("t"),
        )));
        round_trip(Err(ErrorData::invalid_params(
            "bad",
            Some(serde_json::json!({"k": 1})),
        )));
    }

    /// A claim of the token an `Opened` names, by a codec whose store is `store`.
    async fn claimed_by(store: impl crate::state::TokenStore) -> (StateCodec, Claimed) {
        let codec = StateCodec::new(
            crate::state::KeyRing::from_keys([[4; 32]]).expect("a key"),
            Duration::from_secs(600),
        )
        .with_single_use(std::sync::Arc::new(store));
        let opened = crate::state::Opened {
            plaintext: Vec::new(),
            nonce: [9; 24],
            expires_at: unix_now() + 600,
            point: [0; 8],
            format: crate::state::TokenFormat::SEALED,
            sealed_len: 0,
            trace: None,
            key_id: [0; 4],
        };
        let binding = crate::state::Binding::new("t", "tools/call", "ann", None);
        let (claim, claimed) = codec
            .claim(&opened, &binding, vec![1])
            .await
            .expect("claimed");
        assert_eq!(claim, Claim::First);
        (codec, claimed)
    }

    /// A store of one's own that keeps outcomes but renews no lease (the trait's
    /// defaults): the old rule.
    #[derive(Debug)]
    struct Unrenewed(crate::state::MemoryStore);

    impl crate::state::TokenStore for Unrenewed {
        fn redeem<'a>(
            &'a self,
            id: &'a [u8; 24],
            keep_until: u64,
        ) -> futures::future::BoxFuture<'a, Result<bool, crate::state::StoreError>> {
            self.0.redeem(id, keep_until)
        }
        fn retire<'a>(
            &'a self,
            chain: &'a [u8; 8],
            floor: u64,
            keep_until: u64,
        ) -> futures::future::BoxFuture<'a, Result<(), crate::state::StoreError>> {
            self.0.retire(chain, floor, keep_until)
        }
        fn records_outcomes(&self) -> bool {
            true
        }
        fn claim<'a>(
            &'a self,
            id: &'a [u8; 24],
            keep_until: u64,
            lease_until: u64,
        ) -> futures::future::BoxFuture<'a, Result<Claim, crate::state::StoreError>> {
            self.0.claim(id, keep_until, lease_until)
        }
    }

    /// A runner that died (its lease ran out, or it gave the round back): its retry takes
    /// the round over and runs it, once; a second retry finds it running again.
    #[tokio::test]
    async fn a_first_request_past_its_lease_is_taken_over_and_run_again() {
        let (codec, claimed) = claimed_by(crate::state::MemoryStore::new(10)).await;
        let store = codec.single_use_store().expect("a store");
        // Its runner stopped renewing long ago.
        assert!(store.renew(claimed.nonce(), 1).await.expect("renewed"));
        let taken = replayed(&codec, "t", Claim::Running { lease_until: 1 }, &claimed).await;
        assert!(matches!(taken, Ok(None)), "{:?}", taken.map(|_| ()));
        let again = codec.claim_again(&claimed).await.expect("read");
        assert!(
            matches!(again, Claim::Running { lease_until } if lease_until > unix_now()),
            "{again:?}"
        );
        // Only one retry takes it: the lease it saw is not the one held now.
        assert!(!codec.take_over(&claimed, 1).await.expect("asked"));
    }

    #[tokio::test]
    async fn past_its_lease_in_a_store_that_renews_none_it_is_lost_not_run_again() {
        let (codec, claimed) = claimed_by(Unrenewed(crate::state::MemoryStore::new(10))).await;
        let lost = replayed(&codec, "t", Claim::Running { lease_until: 1 }, &claimed).await;
        match lost {
            Err(Failure::InvalidParams(message)) => {
                assert!(message.contains("not run a second time"), "{message}")
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_waits_for_the_first_then_is_told_to_send_again() {
        let (codec, claimed) = claimed_by(crate::state::MemoryStore::new(10)).await;
        let running = codec.claim_again(&claimed).await.expect("read");
        assert!(matches!(running, Claim::Running { .. }), "{running:?}");
        // The first never answers: past the wait, a retryable error.
        let waited = replayed(&codec, "t", running.clone(), &claimed).await;
        match waited {
            Err(Failure::Tool(error)) => {
                assert_eq!(
                    error.data,
                    Some(serde_json::json!({"retryable": true, "retryAfterMs": 1000}))
                );
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
        // The first answers while the second waits: the second gets its answer.
        let answer: Result<CallToolResponse, ErrorData> =
            Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                Content::text("once"),
            ])));
        let (first, second) = tokio::join!(
            async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                record(&codec, &claimed, "t", Some(&answer)).await;
            },
            replayed(&codec, "t", running, &claimed),
        );
        let () = first;
        match second {
            Ok(Some(Ok(CallToolResponse::Complete(result)))) => {
                assert_eq!(
                    serde_json::to_value(&result).unwrap()["content"][0]["text"],
                    "once"
                );
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
        // Another request (other answers) is refused.
        let mut other = claimed.clone();
        other.set_request_for_test(&[2]);
        let refused = replayed(
            &codec,
            "t",
            codec.claim_again(&other).await.expect("read"),
            &other,
        )
        .await;
        assert!(matches!(refused, Err(Failure::InvalidParams(_))));
    }
}
