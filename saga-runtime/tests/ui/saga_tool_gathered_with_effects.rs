use saga_runtime::prelude::*;

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Shard {
    id: u32,
    stale: bool,
}

// Borrows pushed before a suspension by a loop that also writes another local: the loop
// is not run again after a restore (the log would get its lines twice), so the `Vec` of
// borrows is kept across the suspension, which it cannot be: the error says to own it.
#[saga_tool]
async fn reshard(shards: Vec<Shard>) -> Result<String, SagaError> {
    let mut log: Vec<String> = Vec::new();
    let mut picked = Vec::new();
    for s in shards.iter() {
        if s.stale {
            picked.push(s);
            log.push(format!("pick {}", s.id));
        }
    }
    let go: bool = elicit(format!("move {}?", picked.len())).await?;
    Ok(format!("{go} {} {}", log.join(";"), picked.len()))
}

fn main() {}
