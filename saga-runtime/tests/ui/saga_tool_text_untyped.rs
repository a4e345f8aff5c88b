use saga_runtime::prelude::*;

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Flat {
    street: String,
    rent: u32,
}

// A `&str` into a kept `String` from a method saga does not know gives one (`split`),
// assigned in a loop that asks, without the local's type: rustc cannot tell a `&str`
// saved as it is from one saved as where it points, and the error says to write the type
// (`let mut best: Option<&str> = None;`, which tests/corpus/located.rs's `first_words`
// writes and runs).
#[saga_tool]
async fn cheapest(flats: Vec<Flat>) -> Result<String, SagaError> {
    let mut best = None;
    for f in flats.iter() {
        if elicit::<bool>(format!("Pick {}?", f.street)).await? {
            best = Some(f.street.split(' ').next().unwrap_or(""));
        }
    }
    let sure: bool = elicit(format!("Confirm {best:?}?")).await?;
    Ok(format!("{sure}: {best:?}"))
}

fn main() {}
