//! A local server of the OpenAI chat completions API, for the clients' tests
//! (`tests/clients/run.sh`): `POST /v1/chat/completions` with the bearer key
//! `FAKE_MODEL_KEY` (checked), answering every request with `FAKE_MODEL_SAYS`
//! (`Yes, all systems are green.` unless set), or, with `FAKE_MODEL_BEHAVIOUR=research`,
//! as a small research agent that calls the `research` example's tools. Prints
//! `listening on http://ADDR/v1`.
//!
//! ```text
//! FAKE_MODEL_KEY=sk-local cargo run -p saga-workspace --example fake_chat_completions
//! SAGA_MODEL_URL=http://ADDR/v1 SAGA_MODEL_KEY=sk-local cargo run -p saga-workspace --example deploy
//! ```

use saga_examples::harness::openai::{Behaviour, FakeOpenAi};

#[tokio::main]
async fn main() {
    let key = std::env::var("FAKE_MODEL_KEY").unwrap_or_else(|_| "sk-local".to_owned());
    let says = std::env::var("FAKE_MODEL_SAYS")
        .unwrap_or_else(|_| "Yes, all systems are green.".to_owned());
    let server = FakeOpenAi::start(&key).await;
    match std::env::var("FAKE_MODEL_BEHAVIOUR").as_deref() {
        Ok("research") => server.behave(Behaviour::Research),
        _ => server.behave(Behaviour::Say(says)),
    }
    println!("listening on {}", server.base_url);
    std::future::pending::<()>().await;
}
