use saga_runtime::prelude::*;

/// A connection handle: not Serialize, not Deserialize.
struct Connection {
    host: String,
}

fn connect(host: &str) -> Connection {
    Connection { host: host.to_owned() }
}

/// Asks which database to migrate, after opening the connection.
#[saga_tool]
async fn migrate(host: String) -> Result<String, SagaError> {
    let connection = connect(&host);
    let database: String = elicit("Which database should be migrated?").await?;
    Ok(format!("migrating {database} on {}", connection.host))
}

fn main() {}
