// A `for` over a constant by value whose items are not `Copy`: after a suspension saga
// names the constant again and binds the item again from it, which is exact only for a
// `Copy` item, so it is refused at the constant, with the fix that saves the items.
use saga_runtime::prelude::*;

#[derive(Debug, Serialize, Deserialize)]
enum Kind {
    Small,
    Large,
}

const KINDS: [Kind; 2] = [Kind::Small, Kind::Large];

#[saga_tool]
async fn note_kinds(who: String) -> Result<String, SagaError> {
    let mut out = who;
    for kind in KINDS {
        let note: String = elicit(format!("note on {kind:?}?")).await?;
        out.push_str(&format!("{kind:?}:{note}"));
    }
    Ok(out)
}

fn main() {}
