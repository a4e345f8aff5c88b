//! The guide's chapters (`docs/guide/src/*.md`), so that their Rust code blocks compile
//! and run as doctests: `cargo test -p saga-runtime --doc guide`. Only built by rustdoc's
//! test runner.

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/introduction.md")]
pub struct Introduction;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/wire.md")]
pub struct Wire;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/writing-tools.md")]
pub struct WritingTools;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/transform.md")]
pub struct Transform;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/serving.md")]
pub struct Serving;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/eras-and-formats.md")]
pub struct ErasAndFormats;

// Its example opens a SQLite store: `cargo test --workspace` builds the runtime with the
// feature (the examples' crate asks for it).
#[cfg(all(doctest, feature = "sqlite"))]
#[doc = include_str!("../../docs/guide/src/tasks.md")]
pub struct Tasks;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/effects.md")]
pub struct Effects;

// Its examples configure the OpenAI-compatible model and a SQLite state store (features
// `openai` and `sqlite`, which the examples' crate asks for).
#[cfg(all(doctest, feature = "openai", feature = "sqlite"))]
#[doc = include_str!("../../docs/guide/src/sampling.md")]
pub struct Sampling;

// Its example configures authorization (feature `oauth`, which the examples' crate asks
// for).
#[cfg(all(doctest, feature = "oauth"))]
#[doc = include_str!("../../docs/guide/src/authorization.md")]
pub struct Authorization;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/deploying.md")]
pub struct Deploying;

// Its examples install the OpenTelemetry exporter (feature `otel`): scripts/test.sh runs
// them with `cargo test -p saga-runtime --features otel --doc guide::Observability`.
#[cfg(all(doctest, feature = "otel"))]
#[doc = include_str!("../../docs/guide/src/observability.md")]
pub struct Observability;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/security.md")]
pub struct Security;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/clients.md")]
pub struct Clients;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/cli.md")]
pub struct Cli;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/src/contributing.md")]
pub struct Contributing;
