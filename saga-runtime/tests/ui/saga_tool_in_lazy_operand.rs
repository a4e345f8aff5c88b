use saga_runtime::prelude::*;

/// Deletes a file if it is not protected and the user confirms.
#[saga_tool]
async fn delete(path: String, protected: bool) -> Result<String, SagaError> {
    if !protected && elicit::<bool>(format!("Delete {path}?")).await? {
        return Ok(format!("deleted {path}"));
    }
    Ok("kept".into())
}

/// Archives a file if forced or the user confirms.
#[saga_tool]
async fn archive(path: String, force: bool) -> Result<String, SagaError> {
    if force || elicit::<bool>(format!("Archive {path}?")).await? {
        return Ok(format!("archived {path}"));
    }
    Ok("kept".into())
}

fn main() {}
