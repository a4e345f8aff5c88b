use saga_runtime::prelude::*;

/// A handle: neither `Serialize` nor `Deserialize`.
#[derive(Default)]
struct Handle {
    id: u32,
}

/// Saved without its handle, which serde skips.
#[derive(Serialize, Deserialize)]
struct Job {
    name: String,
    #[serde(skip)]
    handle: Handle,
}

// The items can be saved, but a binding that takes one apart holds the part serde skips:
// one error, at that binding.
#[saga_tool]
async fn run(names: Vec<String>) -> Result<String, SagaError> {
    let jobs: Vec<Job> = names
        .into_iter()
        .map(|name| Job { name, handle: Handle::default() })
        .collect();
    let mut done = Vec::new();
    for Job { name, handle } in jobs {
        if elicit::<bool>(format!("run {name}?")).await? {
            done.push(format!("{name}#{}", handle.id));
        }
    }
    Ok(done.join(", "))
}

fn main() {}
