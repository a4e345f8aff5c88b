//! Task records in Redis: `saga:task:<id>` holds the record as JSON and expires with the
//! task; `saga:tasks:working` is the set of tasks that may need a worker. The quotas
//! count buckets, each three keys (`…:ids` scoring task ids by expiry, `…:bytes` their
//! sizes, `…:total` the sum): `saga:tasks:principal:<principal>` per principal,
//! `saga:tasks:shared` for unverified callers together, `saga:tasks:store` for the whole
//! store. An insert checks and fills them in one Lua script, clearing expired ids as it
//! goes. An update is a compare-and-set in a Lua script, retried when another replica
//! wrote in between.
//!
//! A saga state kept by reference is `saga:state:<key>`, expiring with its token, counted
//! by the same insert script in buckets of its own (`saga:states:…`).

use rmcp::model::TaskStatus;

use super::TaskRecord;
use super::store::{Change, KeptEntry, Quota, TaskBackend, TaskStore, TaskStoreError, unavailable};
use futures::future::BoxFuture;

const RECORD_PREFIX: &str = "saga:task:";
/// Where a saga state kept by reference is: `saga:state:<key>`, expiring with it.
const STATE_PREFIX: &str = "saga:state:";
const WORKING_SET: &str = "saga:tasks:working";
const PRINCIPAL_PREFIX: &str = "saga:tasks:principal:";
const SHARED_BUCKET: &str = "saga:tasks:shared";
const STORE_BUCKET: &str = "saga:tasks:store";
/// How many records one sweep reads per round trip.
const ORPHAN_BATCH: usize = 256;
/// How often an update is retried when other writers keep winning.
const MAX_CAS_ATTEMPTS: usize = 64;

/// Sets `KEYS[1]` to `ARGV[2]` (expiring at `ARGV[3]` unix ms) only if it still holds
/// `ARGV[1]`; keeps the working set in step (`ARGV[4]`: 1 to add, 0 to remove, for id
/// `ARGV[5]`). The record's new size is `ARGV[6]` bytes: in each bucket that counts it
/// (two keys from `KEYS[3]` on: the hash of sizes and the running total; two arguments
/// from `ARGV[7]` on: the byte bound and the code returned when it would be passed), a
/// record that grows past the bound is not written. Returns 1 when written, 0 when the
/// record changed in between.
const COMPARE_AND_SET: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local bytes = tonumber(ARGV[6])
local buckets = (#KEYS - 2) / 2
local before = {}
for b = 0, buckets - 1 do
  local sizes, total = KEYS[3 + 2 * b], KEYS[4 + 2 * b]
  local size = redis.call('HGET', sizes, ARGV[5])
  if size then
    before[b] = tonumber(size)
    local grown = bytes - before[b]
    if grown > 0 and tonumber(redis.call('GET', total) or '0') + grown > tonumber(ARGV[7 + 2 * b]) then
      return tonumber(ARGV[8 + 2 * b])
    end
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
if ARGV[4] == '1' then redis.call('SADD', KEYS[2], ARGV[5]) else redis.call('SREM', KEYS[2], ARGV[5]) end
for b = 0, buckets - 1 do
  if before[b] then
    redis.call('HSET', KEYS[3 + 2 * b], ARGV[5], bytes)
    redis.call('INCRBY', KEYS[4 + 2 * b], bytes - before[b])
  end
end
return 1
";

/// Inserts `KEYS[1]` (`ARGV[1]`, expiring at `ARGV[2]` unix ms, `ARGV[4]` bytes; `ARGV[3]`
/// 1 if working, then added to the working set `KEYS[2]` as id `ARGV[5]`) unless a bucket
/// it counts against is spent at `ARGV[6]` (now, unix ms). Each bucket is three keys from
/// `KEYS[3]` on (a sorted set of ids by expiry, a hash of their bytes, a running byte
/// total) and three arguments from `ARGV[7]` on (its task and byte bounds, and the code
/// returned when it is spent). Returns 1 when inserted.
const INSERT: &str = r"
local now = tonumber(ARGV[6])
local bytes = tonumber(ARGV[4])
local buckets = (#KEYS - 2) / 3
for b = 0, buckets - 1 do
  local ids, sizes, total = KEYS[3 + 3 * b], KEYS[4 + 3 * b], KEYS[5 + 3 * b]
  local gone = redis.call('ZRANGEBYSCORE', ids, '-inf', now, 'LIMIT', 0, 512)
  for _, id in ipairs(gone) do
    local size = redis.call('HGET', sizes, id)
    if size then redis.call('DECRBY', total, size) end
    redis.call('HDEL', sizes, id)
    redis.call('ZREM', ids, id)
  end
  local max_tasks, max_bytes = tonumber(ARGV[7 + 3 * b]), tonumber(ARGV[8 + 3 * b])
  if redis.call('ZCOUNT', ids, '(' .. now, '+inf') >= max_tasks then return tonumber(ARGV[9 + 3 * b]) end
  if tonumber(redis.call('GET', total) or '0') + bytes > max_bytes then return tonumber(ARGV[9 + 3 * b]) - 1 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
if ARGV[3] == '1' then redis.call('SADD', KEYS[2], ARGV[5]) end
for b = 0, buckets - 1 do
  local ids, sizes, total = KEYS[3 + 3 * b], KEYS[4 + 3 * b], KEYS[5 + 3 * b]
  redis.call('ZADD', ids, ARGV[2], ARGV[5])
  redis.call('HSET', sizes, ARGV[5], bytes)
  redis.call('INCRBY', total, bytes)
  local last = redis.call('ZRANGE', ids, -1, -1, 'WITHSCORES')
  for _, key in ipairs({ids, sizes, total}) do redis.call('PEXPIREAT', key, last[2]) end
end
return 1
";

/// The codes [`INSERT`] returns when a bucket is spent: its tasks, then (one less) its
/// bytes.
const SPENT_PRINCIPAL: i64 = -10;
const SPENT_GROUP: i64 = -20;
const SPENT_STORE: i64 = -30;

pub(crate) struct RedisTasks {
    connection: redis::aio::ConnectionManager,
    script: redis::Script,
    insert: redis::Script,
}

impl std::fmt::Debug for RedisTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTasks").finish_non_exhaustive()
    }
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
            insert: redis::Script::new(INSERT),
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

/// A bound as Lua reads it exactly (a double holds integers up to 2^53).
fn bound(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX).min(1 << 53)
}

fn decode(text: &str) -> Result<TaskRecord, TaskStoreError> {
    serde_json::from_str(text).map_err(unavailable)
}

/// What [`INSERT`] writes: the value at `key`, counted under `id` for `owner`.
struct Counted<'a> {
    key: String,
    text: &'a str,
    expires_ms: u64,
    working: bool,
    id: &'a str,
    owner: &'a str,
}

/// The names of the buckets an insert counts in: an owner's (a prefix), the shared
/// part's, the store's.
struct Buckets {
    principal: &'static str,
    shared: &'static str,
    store: &'static str,
}

const TASK_BUCKETS: Buckets = Buckets {
    principal: PRINCIPAL_PREFIX,
    shared: SHARED_BUCKET,
    store: STORE_BUCKET,
};

/// Saga states kept by reference count in buckets of their own, apart from tasks.
const STATE_BUCKETS: Buckets = Buckets {
    principal: "saga:states:principal:",
    shared: "saga:states:shared",
    store: "saga:states:store",
};

impl RedisTasks {
    /// Inserts `counted` with [`INSERT`], unless a bucket of `buckets` it counts in is
    /// spent under `quota`.
    async fn insert_counted(
        &self,
        counted: Counted<'_>,
        quota: &Quota,
        buckets: &Buckets,
    ) -> Result<(), TaskStoreError> {
        let mut connection = self.connection.clone();
        let mut invocation = self.insert.prepare_invoke();
        invocation
            .key(&counted.key)
            .key(WORKING_SET)
            .arg(counted.text)
            .arg(counted.expires_ms)
            .arg(if counted.working { "1" } else { "0" })
            .arg(counted.text.len())
            .arg(counted.id)
            .arg(super::clock::now_ms());
        let mut bucket = |name: String, tasks: usize, bytes: usize, spent: i64| {
            invocation
                .key(format!("{name}:ids"))
                .key(format!("{name}:bytes"))
                .key(format!("{name}:total"))
                .arg(bound(tasks))
                .arg(bound(bytes))
                .arg(spent);
        };
        bucket(
            format!("{}{}", buckets.principal, counted.owner),
            quota.tasks_per_principal,
            quota.bytes_per_principal,
            SPENT_PRINCIPAL,
        );
        if let Some(share) = quota.shared {
            bucket(
                buckets.shared.to_owned(),
                share.tasks,
                share.bytes,
                SPENT_GROUP,
            );
        }
        bucket(
            buckets.store.to_owned(),
            quota.tasks,
            quota.bytes,
            SPENT_STORE,
        );
        let inserted: i64 = invocation
            .invoke_async(&mut connection)
            .await
            .map_err(unavailable)?;
        match inserted {
            1 => Ok(()),
            SPENT_PRINCIPAL => Err(TaskStoreError::PrincipalQuota(quota.tasks_per_principal)),
            code if code == SPENT_PRINCIPAL - 1 => {
                Err(TaskStoreError::PrincipalBytes(quota.bytes_per_principal))
            }
            code if code == SPENT_GROUP || code == SPENT_GROUP - 1 => {
                Err(TaskStoreError::SharedQuota)
            }
            _ => Err(TaskStoreError::Full),
        }
    }
}

impl TaskBackend for RedisTasks {
    fn insert<'a>(
        &'a self,
        record: &'a TaskRecord,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let text = serde_json::to_string(record).map_err(unavailable)?;
            let working = record.status == TaskStatus::Working;
            self.insert_counted(
                Counted {
                    key: format!("{RECORD_PREFIX}{}", record.id),
                    text: &text,
                    expires_ms: record.expires_ms().max(1),
                    working,
                    id: &record.id,
                    owner: record.quota_owner(),
                },
                quota,
                &TASK_BUCKETS,
            )
            .await
        })
    }

    fn keep_state<'a>(
        &'a self,
        entry: &'a KeptEntry,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let key = format!("{STATE_PREFIX}{}", entry.key);
            let mut connection = self.connection.clone();
            // Keys are random: one already kept (live or not yet swept) is never replaced.
            let taken: bool = redis::cmd("EXISTS")
                .arg(&key)
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            if taken {
                return Err(TaskStoreError::Unavailable("a state's key is taken".into()));
            }
            self.insert_counted(
                Counted {
                    key,
                    text: &entry.token,
                    expires_ms: entry.expires_ms.max(1),
                    working: false,
                    id: &entry.key,
                    owner: &entry.owner,
                },
                quota,
                &STATE_BUCKETS,
            )
            .await
        })
    }

    fn read_state<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            redis::cmd("GET")
                .arg(format!("{STATE_PREFIX}{key}"))
                .query_async(&mut connection)
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
        quota: &'a Quota,
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
                let mut invocation = self.script.prepare_invoke();
                invocation
                    .key(format!("{RECORD_PREFIX}{id}"))
                    .key(WORKING_SET)
                    .arg(&old_text)
                    .arg(&new_text)
                    .arg(record.expires_ms().max(1))
                    .arg(working)
                    .arg(id)
                    .arg(new_text.len());
                // Every bucket the insert counted it in (the script skips one that does
                // not hold the id: the shared one, for a verified principal's task).
                let mut bucket = |name: String, bytes: usize, spent: i64| {
                    invocation
                        .key(format!("{name}:bytes"))
                        .key(format!("{name}:total"))
                        .arg(bound(bytes))
                        .arg(spent);
                };
                bucket(
                    format!("{PRINCIPAL_PREFIX}{}", current.quota_owner()),
                    quota.bytes_per_principal,
                    SPENT_PRINCIPAL - 1,
                );
                bucket(
                    SHARED_BUCKET.to_owned(),
                    quota.shared.map_or(usize::MAX, |share| share.bytes),
                    SPENT_GROUP - 1,
                );
                bucket(STORE_BUCKET.to_owned(), quota.bytes, SPENT_STORE - 1);
                let written: i64 = invocation
                    .invoke_async(&mut connection)
                    .await
                    .map_err(unavailable)?;
                match written {
                    1 => return Ok(Some(record)),
                    0 => {}
                    code if code == SPENT_PRINCIPAL - 1 => {
                        return Err(TaskStoreError::PrincipalBytes(quota.bytes_per_principal));
                    }
                    code if code == SPENT_GROUP - 1 => return Err(TaskStoreError::SharedQuota),
                    _ => return Err(TaskStoreError::Full),
                }
            }
            Err(TaskStoreError::Unavailable(format!(
                "task {id} kept changing under {MAX_CAS_ATTEMPTS} updates"
            )))
        })
    }

    fn depth(&self, now_ms: u64) -> BoxFuture<'_, Result<Option<usize>, TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            // The store bucket scores each id by its expiry: those after now are kept.
            let depth: usize = redis::cmd("ZCOUNT")
                .arg(format!("{STORE_BUCKET}:ids"))
                .arg(format!("({now_ms}"))
                .arg("+inf")
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            Ok(Some(depth))
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
            let mut expired = Vec::new();
            for batch in ids.chunks(ORPHAN_BATCH) {
                let keys: Vec<String> = batch
                    .iter()
                    .map(|id| format!("{RECORD_PREFIX}{id}"))
                    .collect();
                let texts: Vec<Option<String>> = redis::cmd("MGET")
                    .arg(&keys)
                    .query_async(&mut connection)
                    .await
                    .map_err(unavailable)?;
                for (id, text) in batch.iter().zip(texts) {
                    let Some(text) = text else {
                        expired.push(id.clone());
                        continue;
                    };
                    // One record this build cannot read must not stop every takeover.
                    match decode(&text) {
                        Ok(record)
                            if record.status == TaskStatus::Working
                                && record.lease_until_ms < now_ms =>
                        {
                            orphans.push(id.clone());
                        }
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(task = %id, %error, "a task record could not be read");
                        }
                    }
                }
            }
            if !expired.is_empty() {
                let _: Result<i64, _> = redis::cmd("SREM")
                    .arg(WORKING_SET)
                    .arg(&expired)
                    .query_async(&mut connection)
                    .await;
            }
            Ok(orphans)
        })
    }
}

impl TaskStore {
    /// Tasks in Redis at `url` (e.g. `redis://127.0.0.1/`), shared by every replica: a
    /// task whose worker dies is taken over by another replica when its lease ends.
    pub async fn redis(url: &str) -> Result<Self, TaskStoreError> {
        Ok(Self(std::sync::Arc::new(RedisTasks::connect(url).await?)))
    }
}
