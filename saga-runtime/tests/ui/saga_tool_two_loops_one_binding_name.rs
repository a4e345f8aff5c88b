use saga_runtime::prelude::*;

// Two loops bind `name`; the second borrows its items. One error, at the second loop's
// collection: the first loop's `name` is not the one saved there.
#[saga_tool]
async fn review(first: Vec<String>, second: Vec<String>) -> Result<String, SagaError> {
    let mut out = String::new();
    for name in first {
        let _: bool = elicit(format!("{name}?")).await?;
    }
    for name in second.iter().filter(|name| !name.is_empty()) {
        let ok: bool = elicit("ok?").await?;
        out.push_str(&format!("{name}{ok}"));
    }
    Ok(out)
}

fn main() {}
