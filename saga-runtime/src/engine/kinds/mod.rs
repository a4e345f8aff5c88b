//! The kinds of request a saga can make, behind one trait: [`AskKind`](kind::AskKind).
//!
//! A kind is one folder (`form/`, `url/`, `sample/`, `tool_sample/`, `roots/`) of two
//! files. `protocol.rs` is what a request of the kind carries, the key prefix, the
//! capability it needs, how it is sent and sent again, what enters a round's digest, and
//! how its answer is read and checked: it sits below the round, which uses the table's
//! enums. `ask.rs` is its public side (the function a tool calls, its builder, and how the
//! tool reads the answer): it sits above the round, in the `asks` layer, and its names
//! are in `asks`' prelude.
//!
//! Adding a kind touches, and only touches:
//!
//! | where | what |
//! |---|---|
//! | `kinds/NAME/` | the folder: `mod.rs`, `protocol.rs`, and `ask.rs` (its `awaited_outside!` line included, so that awaiting it outside a saga is one error) |
//! | `kinds/mod.rs` | `pub(crate) mod NAME;` |
//! | `kinds/table.rs` | its row in the `kinds!` table ([`table`]): its variant in `Kind`, `Asked` and `Answer`, appended (a token keeps the index) |
//! | `asks/mod.rs` | its public names in `asks`' prelude |
//! | `saga-macros/src/tool/parse/suspend.rs`, `tool/ir.rs` | its function's row, and its `RequestKind` variant, for `#[saga_tool]` to recognise it |
//!
//! A kind that sends a request MCP already has (a form, a URL, a sample, the roots) needs
//! nothing else. A kind that sends a *new* MCP request also needs, because each reads the
//! wire's closed set of requests: `round/pending.rs` (`params_json`, what a token keeps of
//! it), `serve/session.rs` (`ask`, how a session sends it), `testing.rs` (`Answer` and
//! `Asked`, how a test answers it), and the CLI's `answers.rs` and `call/respond.rs` (how
//! a person answers it). The guide's chapter for contributors (`contributing.md`) says the
//! same.
//!
//! A `protocol.rs` uses `forms`, `caller` and `identity`, never the round; an `ask.rs` may
//! use the round too. `tests/layers.rs` checks both.

pub(crate) mod form;
pub(crate) mod kind;
pub(crate) mod roots;
pub(crate) mod sample;
pub(crate) mod table;
pub(crate) mod tool_sample;
pub(crate) mod url;
