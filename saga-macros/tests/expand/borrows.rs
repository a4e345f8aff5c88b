/// Asks about each database source, keeping borrows of the loop's item across the
/// suspension: the state saves `sources` and the loop's position, and the continuation
/// borrows `src`, `name` and `tables` again.
#[saga_tool]
async fn borrows(sources: Vec<Source>, fast: bool) -> Result<String, SagaError> {
    let mode = if fast { "fast" } else { "slow" };
    let mut done = Vec::new();
    for src in &sources {
        if let Source::Db { name, tables } = src {
            let pick: String = elicit(format!("Tables of {name} ({mode})?")).await?;
            done.push(format!("{name}: {pick} of {}", tables.len()));
        }
    }
    Ok(format!("{} ({mode})", done.join(", ")))
}
