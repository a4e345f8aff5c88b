use saga_runtime::prelude::*;

/// Not `Serialize`: a borrow of it cannot be fingerprinted after a restore.
struct Opaque {
    name: String,
}

fn first(items: &[Opaque]) -> &Opaque {
    &items[0]
}

// A borrow saga would compute again after the suspension, of a type it cannot check:
// refused at the `let`, with the fix, never taken as the same value unchecked.
#[saga_tool]
async fn pick(names: Vec<String>) -> Result<String, SagaError> {
    let items: Vec<Opaque> = names.into_iter().map(|name| Opaque { name }).collect();
    let chosen: &Opaque = first(&items);
    let ok: bool = elicit("Take it?").await?;
    Ok(format!("{} {ok}", chosen.name))
}

fn main() {}
