use saga_runtime::prelude::*;

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Task {
    title: String,
    urgent: bool,
}

// A macro of the user's own may expand to a write (`keep!` pushes), in a loop that asks
// each turn: its pushes are not seen, so the `Vec` of borrows is not made again from the
// loop's positions after a restore (it would come back without them); it is kept across
// the suspension, which it cannot be: the error says to own it.
macro_rules! keep {
    ($v:ident, $x:expr) => {
        $v.push($x)
    };
}

#[saga_tool]
async fn triage(open: Vec<Task>) -> Result<String, SagaError> {
    let mut picked: Vec<&str> = Vec::new();
    for t in open.iter() {
        if t.urgent {
            keep!(picked, t.title.as_str());
        }
        let _seen: bool = elicit(format!("seen {}?", t.title)).await?;
    }
    let go: bool = elicit(format!("close {}?", picked.len())).await?;
    Ok(format!("{go} {}", picked.join(",")))
}

fn main() {}
