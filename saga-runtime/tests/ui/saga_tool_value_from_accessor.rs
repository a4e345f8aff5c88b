use saga_runtime::prelude::*;

#[derive(Serialize, Deserialize)]
struct Counter {
    n: i64,
}

impl Counter {
    /// A getter named like a standard accessor (`get` with a key), which computes a
    /// value.
    fn get(&self, _key: &str) -> i64 {
        self.n
    }

    fn bump(&mut self) {
        self.n += 1;
    }
}

// A value from a method named like an accessor, kept across a suspension while its owner
// changes: saga would call it again after the suspension, so it says to own the value.
#[saga_tool]
async fn count(start: i64) -> Result<String, SagaError> {
    let mut counter = Counter { n: start };
    let before = counter.get("n");
    counter.bump();
    let more: i64 = elicit("More?").await?;
    Ok(format!("{before} then {} (+{more})", counter.get("n")))
}

fn main() {}
