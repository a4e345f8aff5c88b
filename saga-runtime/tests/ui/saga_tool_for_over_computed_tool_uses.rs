use saga_runtime::prelude::*;

/// A type of the user's with a `tool_uses()` that computes its items (not a getter of a
/// borrow, as saga's `Turn::tool_uses` is): a `for` over it, asking inside, cannot resume
/// by calling it again.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Toolbox {
    names: Vec<String>,
}

impl Toolbox {
    fn tool_uses(&self) -> Vec<String> {
        self.names.iter().map(|name| format!("use {name}")).collect()
    }
}

#[saga_tool]
async fn run(toolbox: Toolbox) -> Result<String, SagaError> {
    let mut done = Vec::new();
    for used in toolbox.tool_uses() {
        if elicit::<bool>(format!("{used}?")).await? {
            done.push(used);
        }
    }
    Ok(done.join(","))
}

fn main() {}
