//! Task records in Redis: `saga:task:<id>` holds the record as JSON and expires with the
//! task; `saga:tasks:working` is the set of tasks that may need a worker. An update is a
//! compare-and-set in a Lua script, retried when another replica wrote in between.

use rmcp::model::TaskStatus;

use super::TaskRecord;
use super::store::{Change, TaskBackend, TaskStoreError};

type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

const RECORD_PREFIX: &str = "saga:task:";
const WORKING_SET: &str = "saga:tasks:working";
/// How often an update is retried when other writers keep winning.
const MAX_CAS_ATTEMPTS: usize = 64;

/// Sets `KEYS[1]` to `ARGV[2]` (expiring at `ARGV[3]` unix ms) only if it still holds
/// `ARGV[1]`; keeps the working set in step (`ARGV[4]`: 1 to add, 0 to remove).
const COMPARE_AND_SET: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
if ARGV[4] == '1' then redis.call('SADD', KEYS[2], ARGV[5]) else redis.call('SREM', KEYS[2], ARGV[5]) end
return 1
";

pub(crate) struct RedisTasks {
    connection: redis::aio::ConnectionManager,
    script: redis::Script,
}

impl std::fmt::Debug for RedisTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTasks").finish_non_exhaustive()
    }
}

fn unavailable(error: impl std::fmt::Display) -> TaskStoreError {
    TaskStoreError::Unavailable(error.to_string())
}

impl RedisTasks {
    pub(crate) async fn connect(url: &str) -> Result<Self, TaskStoreError> {
        let client = redis::Client::open(url).map_err(unavailable)?;
        let connection = redis::aio::ConnectionManager::new(client)
            .await
            .map_err(unavailable)?;
        Ok(Self {
            connection,
            script: redis::Script::new(COMPARE_AND_SET),
        })
    }

    async fn read(&self, id: &str) -> Result<Option<String>, TaskStoreError> {
        let mut connection = self.connection.clone();
        redis::cmd("GET")
            .arg(format!("{RECORD_PREFIX}{id}"))
            .query_async(&mut connection)
            .await
            .map_err(unavailable)
    }
}

fn decode(text: &str) -> Result<TaskRecord, TaskStoreError> {
    serde_json::from_str(text).map_err(unavailable)
}

impl TaskBackend for RedisTasks {
    fn insert<'a>(&'a self, record: &'a TaskRecord) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let text = serde_json::to_string(record).map_err(unavailable)?;
            let mut connection = self.connection.clone();
            let mut pipe = redis::pipe();
            pipe.atomic()
                .cmd("SET")
                .arg(format!("{RECORD_PREFIX}{}", record.id))
                .arg(text)
                .arg("PXAT")
                .arg(record.expires_ms().max(1))
                .ignore();
            if record.status == TaskStatus::Working {
                pipe.cmd("SADD").arg(WORKING_SET).arg(&record.id).ignore();
            }
            pipe.query_async::<()>(&mut connection)
                .await
                .map_err(unavailable)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move { self.read(id).await?.as_deref().map(decode).transpose() })
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: Change<'a>,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            for _ in 0..MAX_CAS_ATTEMPTS {
                let Some(old_text) = self.read(id).await? else {
                    return Ok(None);
                };
                let current = decode(&old_text)?;
                let mut record = current.clone();
                if !change(&mut record) {
                    return Ok(Some(current));
                }
                let new_text = serde_json::to_string(&record).map_err(unavailable)?;
                let working = if record.status == TaskStatus::Working {
                    "1"
                } else {
                    "0"
                };
                let mut connection = self.connection.clone();
                let written: i64 = self
                    .script
                    .key(format!("{RECORD_PREFIX}{id}"))
                    .key(WORKING_SET)
                    .arg(&old_text)
                    .arg(&new_text)
                    .arg(record.expires_ms().max(1))
                    .arg(working)
                    .arg(id)
                    .invoke_async(&mut connection)
                    .await
                    .map_err(unavailable)?;
                if written == 1 {
                    return Ok(Some(record));
                }
            }
            Err(TaskStoreError::Unavailable(format!(
                "task {id} kept changing under {MAX_CAS_ATTEMPTS} updates"
            )))
        })
    }

    fn orphans(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<String>, TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let ids: Vec<String> = redis::cmd("SMEMBERS")
                .arg(WORKING_SET)
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            let mut orphans = Vec::new();
            for id in ids {
                match self.read(&id).await? {
                    Some(text) => {
                        let record = decode(&text)?;
                        if record.status == TaskStatus::Working && record.lease_until_ms < now_ms {
                            orphans.push(id);
                        }
                    }
                    None => {
                        // Expired: drop it from the set.
                        let _: Result<i64, _> = redis::cmd("SREM")
                            .arg(WORKING_SET)
                            .arg(&id)
                            .query_async(&mut connection)
                            .await;
                    }
                }
            }
            Ok(orphans)
        })
    }
}
