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


#[saga_fn]
async fn confirm(what: String) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Delete {what}?")).await
}

/// The same with a helper in the guard.
#[saga_tool]
async fn delete_with_helper(path: String) -> Result<String, SagaError> {
    match path.as_str() {
        "/" => Ok("refusing to delete /".into()),
        p if confirm(p.to_owned()).await? => Ok(format!("deleted {p}")),
        _ => Ok("kept".into()),
    }
}

fn main() {}
