//! A structured result (`Json<T>`), a decline per item, a final confirmation.
use saga_runtime::prelude::*;

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rotation {
    pub rotated: Vec<String>,
    pub skipped: Vec<String>,
}

/// Rotates the secrets the person agrees to.
#[saga_tool]
pub async fn secret_rotation(
    names: Vec<String>,
    vault: String,
) -> Result<Json<Rotation>, SagaError> {
    let mut rotation = Rotation {
        rotated: Vec::new(),
        skipped: Vec::new(),
    };
    for name in &names {
        match elicit::<bool>(format!("Rotate {vault}/{name}?"))
            .outcome()
            .await?
        {
            Elicited::Accepted(true) => rotation.rotated.push(name.clone()),
            Elicited::Accepted(false) | Elicited::Declined => rotation.skipped.push(name.clone()),
            Elicited::Cancelled => break,
        }
    }
    if !rotation.rotated.is_empty() {
        let sure: bool = elicit(format!("Rotate {} secrets now?", rotation.rotated.len())).await?;
        if !sure {
            rotation.skipped.append(&mut rotation.rotated);
        }
    }
    Ok(Json(rotation))
}
