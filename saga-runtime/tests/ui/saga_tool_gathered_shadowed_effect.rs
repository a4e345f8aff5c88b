use saga_runtime::prelude::*;

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Shard {
    name: String,
    ok: bool,
    notes: Option<String>,
}

// The loop that builds `picked` also pushes to the function's `notes`; a pattern of the
// loop binds another `notes`, which a name alone does not tell from the function's. Run
// again after a restore, the loop would push its lines to `notes` twice: it is not, so
// the `Vec` of borrows is kept across the suspension, which it cannot be.
#[saga_tool]
async fn pick(shards: Vec<Shard>) -> Result<String, SagaError> {
    let mut notes: Vec<String> = Vec::new();
    let mut picked = Vec::new();
    for s in shards.iter() {
        if let Some(notes) = &s.notes {
            if notes.contains("skip") {
                continue;
            }
        }
        picked.push(s);
        notes.push(format!("picked {}", s.name));
    }
    let go: bool = elicit(format!("approve {}?", picked.len())).await?;
    Ok(format!("{go} {} {}", notes.join(";"), picked.iter().filter(|s| s.ok).count()))
}

fn main() {}
