/// Routes a request by kind.
async fn route(kind: String, cx: &SagaContext) -> Result<String, SagaError> {
    let answer = match kind.as_str() {
        "ask" if cx.can_elicit() => {
            let reply: String = elicit("Your answer?").key("reply").await?;
            reply
        }
        "llm" => {
            let sampled = sample("Answer for me").await?;
            sampled.text().to_owned()
        }
        _ => return Err(SagaError::msg("unknown kind")),
    };
    if let Some(first) = answer.chars().next() {
        if first.is_uppercase() {
            checkpoint().await;
        } else if answer.len() > 3 {
            let roots = list_roots().await?;
            return Ok(format!("{answer} in {} roots", roots.len()));
        }
    }
    Ok(answer)
}
