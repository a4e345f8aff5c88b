//! Loops over a parameter's nested vectors, its fields read on both sides of questions.
use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fleet {
    pub region: String,
    pub hosts: Vec<String>,
    pub canaries: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plan {
    pub version: String,
    pub fleet: Fleet,
}

/// Deploys to the canaries, then, on a go, to every host.
#[saga_tool]
pub async fn deploy_hosts(plan: Plan) -> Result<String, SagaError> {
    let mut log = Vec::new();
    for host in &plan.fleet.canaries {
        checkpoint().await;
        log.push(format!("canary {host} on {}", plan.version));
    }
    let go: bool = elicit(format!(
        "Canaries in {} run {}. Go on with {} hosts?",
        plan.fleet.region,
        plan.version,
        plan.fleet.hosts.len()
    ))
    .await?;
    if !go {
        return Ok(format!("stopped after canaries: {}", log.join(", ")));
    }
    for (i, host) in plan.fleet.hosts.iter().enumerate() {
        if i % 10 == 9 {
            checkpoint().await;
        }
        log.push(host.clone());
    }
    Ok(log.join(", "))
}
