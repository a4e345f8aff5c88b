use saga_runtime::prelude::*;

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Roster {
    names: Vec<String>,
}

impl Roster {
    fn captain(&self) -> &String {
        &self.names[0]
    }
}

// A borrow made by a method of the user's (not one of the standard library's, whose
// borrows saga knows), kept across a suspension: the note says to own it, or to write
// the `let`'s type so that it is computed again.
#[saga_tool]
async fn greet(roster: Roster) -> Result<String, SagaError> {
    let first = roster.captain();
    let greeting: String = elicit("Greeting?").await?;
    Ok(format!("{greeting}, {first}"))
}

fn main() {}
