//! Tasks: the MCP tasks extension, over real processes and a real `redis-server`: durable
//! records, replicas killed mid-task, who may run a task and when, and the task support
//! `tools/list` declares.
//!
//! One binary: `cargo test -p saga-workspace --test tasks`, or one file of it with `cargo test -p saga-workspace --test tasks
//! task_claims::`. The helpers are `saga_examples::harness` (`examples/support/harness/`).

mod borrows;
mod durable;
mod effects;
mod store_failures;
mod stores;
mod task_claims;
mod task_support_listed;
mod tasks;
