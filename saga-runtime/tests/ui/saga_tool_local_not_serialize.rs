use saga_runtime::prelude::*;

/// Read from a config file: `Deserialize`, but nobody derived `Serialize`.
#[derive(Deserialize)]
struct Settings {
    region: String,
}

fn settings() -> Settings {
    Settings { region: "eu".into() }
}

// A local that can be read back but not written is reported once, at the state, saying
// what to derive.
#[saga_tool]
async fn deploy(service: String) -> Result<String, SagaError> {
    let settings = settings();
    let ok: bool = elicit(format!("Deploy {service}?")).await?;
    Ok(format!("{ok} {}", settings.region))
}

fn main() {}
