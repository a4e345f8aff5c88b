//! An agent loop: a sample with tools, a person asked between a tool call and its result.
use saga_runtime::prelude::*;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Search {
    /// Words to look for in the notes.
    pub query: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AskUser {
    /// The question for the person.
    pub question: String,
}

#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Reply {
    /// Your answer.
    pub answer: String,
}

const MAX_TURNS: usize = 6;

fn search(query: &str) -> String {
    format!("no notes on {query}")
}

/// Answers a question from the notes, asking the person what they do not say.
#[saga_tool]
pub async fn research_agent(question: String) -> Result<String, SagaError> {
    let tools = [
        SamplingTool::of::<Search>("search", "Search the project's notes"),
        SamplingTool::of::<AskUser>("ask_user", "Ask the person a question"),
    ];
    let mut history = vec![SamplingMessage::user(question)];
    for _turn in 0..MAX_TURNS {
        let turn = sample_messages(history.clone())
            .system("Answer from the notes; search them first.")
            .tools(tools.clone())
            .max_tokens(400)
            .await?;
        if turn.tool_uses().is_empty() {
            return Ok(turn.text().to_owned());
        }
        let mut results = Vec::new();
        for call in turn.tool_uses() {
            let result = match call.name() {
                "search" => match call.input::<Search>() {
                    Ok(input) => call.result(search(&input.query)),
                    Err(misfit) => call.error(misfit.to_string()),
                },
                "ask_user" => match call.input::<AskUser>() {
                    Ok(input) => {
                        let reply: Reply = elicit(input.question).await?;
                        call.result(reply.answer)
                    }
                    Err(misfit) => call.error(misfit.to_string()),
                },
                other => call.error(format!("no tool named {other}")),
            };
            results.push(result);
        }
        history.extend(turn.continue_with(results));
    }
    Err(SagaError::Tool(format!(
        "the model did not answer within {MAX_TURNS} turns"
    )))
}
