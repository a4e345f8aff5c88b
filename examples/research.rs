//! `research` (`saga_examples::research`, in `examples/support/research.rs`): an agent
//! loop in straight-line code. The model is offered `search` (a local function over fixed
//! notes) and `ask_user` (an `elicit`), loops until it answers, and each of its turns is a
//! round that survives a restart.
//!
//! ```text
//! cargo run -p saga-workspace --example research              # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run -p saga-workspace --example research -- --stdio   # stdio
//! # The server's model answering (any OpenAI-compatible API; the fake scripts an agent):
//! FAKE_MODEL_BEHAVIOUR=research cargo run -p saga-workspace --example fake_chat_completions
//! SAGA_MODEL_URL=http://ADDR/v1 SAGA_MODEL_KEY=sk-local cargo run -p saga-workspace --example research
//! # As a task that survives its worker (any store SAGA_TASKS names):
//! SAGA_TASKS=sqlite:research.db cargo run -p saga-workspace --example research
//! # Conversations too long for their token kept in a store (any store, as SAGA_TASKS):
//! SAGA_STATES=sqlite:research.db cargo run -p saga-workspace --example research
//! ```

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    let keys = saga_examples::cli::keys()?;
    let wants_tasks =
        std::env::var_os("SAGA_TASKS").is_some() || std::env::var_os("SAGA_TASKS_REDIS").is_some();
    let tasks = match wants_tasks {
        true => Some(saga_examples::cli::task_store().await?),
        false => None,
    };
    let states = match std::env::var("SAGA_STATES") {
        Ok(value) => Some(saga_examples::cli::Stores::parse(&value)?.tasks().await?),
        Err(_) => None,
    };
    saga_examples::cli::serve(saga_examples::research::server(keys, tasks, states)?).await
}
