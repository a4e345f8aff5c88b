/// Gets the weather for a location, after checking who asks.
async fn get_weather(location: String) -> Result<String, SagaError> {
    let (login, capital) = join!(
        elicit::<GithubLogin>("Please provide your GitHub username").key("github_login"),
        sample("What is the capital of France?").max_tokens(100).key("capital_of_france"),
    );
    let login = login?;
    let capital = capital?;
    Ok(format!("Weather for {location}: sunny. Asked by {} (capital check: {})", login.name, capital.text()))
}
