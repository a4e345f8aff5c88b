use saga_runtime::prelude::*;

// A value moved into a request in a loop (`sample_messages(history)` without `.clone()`):
// one error, at the use, as rustc gives it for the function as written, with `.clone()`.
#[saga_tool]
async fn agent(question: String) -> Result<String, SagaError> {
    let history = vec![SamplingMessage::user(question)];
    for _turn in 0..4 {
        let turn = sample_messages(history).max_tokens(100).await?;
        if !turn.text().is_empty() {
            return Ok(turn.text().to_owned());
        }
    }
    Ok(String::new())
}

fn main() {}
