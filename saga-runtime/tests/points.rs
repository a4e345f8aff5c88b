//! What a tool's suspension points are traced as: every saved type's layout, or a clear
//! error when the server is built.

use saga_runtime::prelude::*;

/// An address the type itself checks: it refuses most strings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Email(String);

impl TryFrom<String> for Email {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        if text.contains('@') {
            Ok(Email(text))
        } else {
            Err(format!("{text:?} is no email address"))
        }
    }
}

impl From<Email> for String {
    fn from(email: Email) -> String {
        email.0
    }
}

#[saga_tool]
async fn invite(address: String) -> Result<String, SagaError> {
    let email = Email::try_from(address).map_err(SagaError::msg)?;
    let ok: bool = elicit("Send the invitation?").await?;
    Ok(format!("{}: {ok}", String::from(email)))
}

#[saga_tool]
async fn keeps_json(raw: String) -> Result<String, SagaError> {
    let value: serde_json::Value = serde_json::from_str(&raw).unwrap_or_default();
    let ok: bool = elicit("Keep it?").await?;
    Ok(format!("{value} {ok}"))
}

#[test]
fn a_type_that_validates_what_it_reads_is_traced() {
    let points = saga_runtime::__support::Points::of(&invite).expect("traces");
    let layouts: Vec<&str> = points.iter().map(|point| point.layout.as_str()).collect();
    // `try_from = "String"`: postcard reads a string, and so does the trace.
    assert_eq!(layouts, ["{ email: str, __m0: \"PhantomData\" }"]);
}

#[test]
fn a_saved_type_postcard_cannot_read_is_kept_as_messagepack_and_named_in_the_layout() {
    let points = saga_runtime::__support::Points::of(&keeps_json).expect("traces");
    let layouts: Vec<&str> = points.iter().map(|point| point.layout.as_str()).collect();
    assert_eq!(
        layouts,
        ["{ value: msgpack \"Value\", __m0: \"PhantomData\" }"]
    );
    SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(invite)
        .tool(keeps_json)
        .build()
        .expect("a serde_json::Value can be saved");
}

/// A helper that never suspends.
#[saga_fn]
async fn plain_helper(n: u32) -> Result<u32, SagaError> {
    Ok(n + 1)
}

#[saga_tool]
async fn calls_a_plain_helper(n: u32) -> Result<String, SagaError> {
    let m = plain_helper(n).await?;
    let ok: bool = elicit("Ok?").await?;
    Ok(format!("{m} {ok}"))
}

#[test]
fn a_tool_calling_a_helper_that_never_suspends_builds() {
    let points = saga_runtime::__support::Points::of(&calls_a_plain_helper).expect("traces");
    assert!(points.iter().count() >= 1);
}
