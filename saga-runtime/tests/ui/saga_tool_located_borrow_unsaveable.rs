use saga_runtime::prelude::*;

/// A type the tool reads but does not save (no `Serialize`).
#[derive(Deserialize, schemars::JsonSchema)]
struct Reading {
    sensor: String,
    value: f64,
}

// The best reading so far, a borrow built up in a loop that asks: kept as where it points
// only when what it points at can be saved; here neither `readings` nor the borrow can.
#[saga_tool]
async fn calibrate(readings: Vec<Reading>) -> Result<String, SagaError> {
    let mut best = None;
    for r in readings.iter() {
        if elicit::<bool>(format!("trust {}?", r.sensor)).await? {
            best = Some(r);
        }
    }
    let ok: bool = elicit("calibrate?").await?;
    Ok(format!("{ok} {:?}", best.map(|r| r.value)))
}

fn main() {}
