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
//! Adding a kind is its folder here, its row in the `kinds!` table ([`table`]) and its
//! names in `asks`' prelude. For `#[saga_tool]` to recognise its function, it also gets
//! its row in the macro crate's `tool/parse/suspend.rs` (and its variant in `tool/ir.rs`).
//!
//! A `protocol.rs` uses `forms`, `call` and `identity`, never the round; an `ask.rs` may
//! use the round too. `tests/layers.rs` checks both.

pub(crate) mod form;
pub(crate) mod kind;
pub(crate) mod roots;
pub(crate) mod sample;
pub(crate) mod table;
pub(crate) mod tool_sample;
pub(crate) mod url;
