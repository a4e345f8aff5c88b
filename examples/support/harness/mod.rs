//! What the end-to-end tests (`tests/*/`) share, and nothing the examples use: a server on a
//! loopback port in this process or an example as its own process, raw-HTTP clients of
//! both protocol eras and of the tasks extension, a `redis-server` and a `postgres` of the test's own, and
//! the diagrams' snapshots.

pub mod context;
pub mod http;
pub mod journal;
pub mod log;
pub mod noise;
pub mod oidc;
pub mod openai;
pub mod postgres;
pub mod process;
pub mod redis;
pub mod serving;
pub mod session;
pub mod snapshots;
pub mod stores;
pub mod tasks;
pub mod variant;
