use saga_runtime::prelude::*;

// The collection of a `for` over copies of its items, changed before a suspension in a
// pass that then leaves the loop: refused as the function as written is (the loop
// borrows it whole), never resumed at a position in the changed collection.
#[saga_tool]
async fn first_after(mut levels: Vec<i64>) -> Result<String, SagaError> {
    for level in levels.iter().copied() {
        levels.insert(0, level);
        let ok: bool = elicit(format!("Stop at {level}?")).await?;
        if ok {
            return Ok(format!("{level}"));
        }
        break;
    }
    Ok(format!("{levels:?}"))
}

fn main() {}
