use saga_runtime::prelude::*;

/// Asks for a label for every file.
#[saga_tool]
async fn label_files(files: Vec<String>) -> Result<String, SagaError> {
    let labels: Vec<_> = files
        .iter()
        .map(|file| async move { elicit::<String>(format!("Label for {file}?")).await })
        .collect();
    Ok(format!("{} labels", labels.len()))
}

/// The same with a sync closure.
#[saga_tool]
async fn label_files_sync(files: Vec<String>) -> Result<String, SagaError> {
    let ask = |file: &String| elicit::<String>(format!("Label for {file}?")).await;
    Ok(format!("{}", files.len()))
}

fn main() {}
