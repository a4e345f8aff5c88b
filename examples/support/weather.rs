//! `get_weather`: one round with two requests at once, keyed `github_login` (who is
//! asking) and `capital_of_france` (a check of the client's LLM), then the weather for
//! the location. The example of the "dependent requests" proposal, as a saga. Served by
//! `examples/weather.rs`.

use saga_runtime::prelude::*;

/// Who is asking.
#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct GithubLogin {
    pub name: String,
}

/// Gets the current weather for a location.
#[saga_tool]
pub async fn get_weather(location: String) -> Result<String, SagaError> {
    let (login, capital) = join!(
        elicit::<GithubLogin>("Please provide your GitHub username").key("github_login"),
        sample("What is the capital of France?")
            .system("You are a helpful assistant.")
            .model_hint("claude-3-sonnet")
            .intelligence_priority(0.8)
            .speed_priority(0.5)
            .max_tokens(100)
            .key("capital_of_france"),
    );
    let login = login?;
    let capital = capital?;
    tracing::info!(user = %login.name, llm_says = capital.text(), "weather requested");
    Ok(format!(
        "Current weather in {location}:\nTemperature: 72°F\nConditions: Partly cloudy"
    ))
}

/// The server of this example, with the given keys.
pub fn server(keys: KeyRing) -> anyhow::Result<SagaServer> {
    Ok(SagaServer::builder()
        .info("weather-server", env!("CARGO_PKG_VERSION"))
        .keys(keys)
        .tool(get_weather)
        .build()?)
}
