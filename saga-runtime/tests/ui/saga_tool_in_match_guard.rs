use saga_runtime::prelude::*;

/// Deletes a file, if the user confirms.
#[saga_tool]
async fn delete(path: String) -> Result<String, SagaError> {
    match path.as_str() {
        "/" => Ok("refusing to delete /".into()),
        p if elicit::<bool>(format!("Delete {p}?")).await? => Ok(format!("deleted {p}")),
        _ => Ok("kept".into()),
    }
}

fn main() {}
