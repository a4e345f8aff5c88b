/// Deploys a service after confirming with the user and an LLM.
async fn complex_tool(initial_arg: String, replicas: Option<u32>) -> Result<String, SagaError> {
    let target: Target = elicit("Please provide the deployment target:").await?;
    let verdict = sample(format!("Is deploying to '{}' safe right now?", target.target))
        .max_tokens(100)
        .await?;
    if !verdict.text().starts_with("Yes") {
        return Ok("Deployment postponed.".into());
    }
    Ok(format!("Deployment to {} initiated successfully based on confirmation.", target.target))
}
