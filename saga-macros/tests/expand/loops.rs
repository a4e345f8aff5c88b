/// Collects names until the user says stop, then confirms each.
async fn collect(limit: u32, candidates: Vec<String>) -> Result<Vec<String>, SagaError> {
    let mut names = Vec::new();
    while names.len() < limit as usize {
        let name: String = elicit("Another name?").await?;
        if name == "stop" {
            break;
        }
        names.push(name);
    }
    'outer: for candidate in candidates {
        for attempt in 0..2 {
            let keep: bool = elicit(format!("Keep {candidate} (try {attempt})?")).await?;
            if !keep {
                continue 'outer;
            }
        }
        names.push(candidate);
    }
    Ok(names)
}
