use saga_runtime::prelude::*;

/// A handle: neither `Serialize` nor `Deserialize`.
struct Client {
    base: String,
}

fn open(base: &str) -> Client {
    Client { base: base.to_owned() }
}

fn fetch(client: &Client, path: &str) -> String {
    format!("{}/{path}", client.base)
}

// Kept across two suspensions, and passed to functions that fix its type after each:
// still one error, at the local.
#[saga_tool]
async fn sync(base: String) -> Result<String, SagaError> {
    let client = open(&base);
    let first: String = elicit("Which path first?").await?;
    let one = fetch(&client, &first);
    checkpoint().await;
    let two = fetch(&client, "second");
    Ok(format!("{one} {two}"))
}

fn main() {}
