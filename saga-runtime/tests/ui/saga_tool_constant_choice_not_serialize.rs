use saga_runtime::prelude::*;

// Not `Serialize`: which constant `limits` holds cannot be saved by its value.
pub struct Limits {
    pub rounds: u32,
}

const SHORT: Limits = Limits { rounds: 1 };
const LONG: Limits = Limits { rounds: 2 };

// A reference chosen among constants, kept across a suspension: one error, at the
// constant, saying to derive `Serialize`.
#[saga_tool]
async fn quiz(long: bool) -> Result<String, SagaError> {
    let limits: &Limits = if long { &LONG } else { &SHORT };
    let name: String = elicit("Your name?").await?;
    Ok(format!("{name}: {} rounds", limits.rounds))
}

fn main() {}
