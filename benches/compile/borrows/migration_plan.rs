//! A `match` on a borrowed loop item, its fields used on both sides of a question.
use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind")]
pub enum Source {
    Postgres {
        dsn: String,
        tables: Vec<String>,
    },
    S3 {
        bucket: String,
        prefix: Option<String>,
    },
}

/// Plans a migration, asking which tables and buckets to copy.
#[saga_tool]
pub async fn migration_plan(sources: Vec<Source>) -> Result<String, SagaError> {
    let mut done = Vec::new();
    for src in &sources {
        match src {
            Source::Postgres { dsn, tables } => {
                let pick: String = elicit(format!("Which tables from {dsn}?")).await?;
                done.push(format!("{dsn}: {pick} of {}", tables.len()));
            }
            Source::S3 { bucket, prefix } => {
                let ok: bool = elicit(format!("Copy bucket {bucket}?")).await?;
                if ok {
                    done.push(format!("s3://{bucket}/{}", prefix.as_deref().unwrap_or("")));
                }
            }
        }
    }
    Ok(done.join("; "))
}
