//! The kinds of request a saga can make, behind one trait: [`AskKind`](kind::AskKind).
//!
//! A kind's file here holds its protocol: what a request of the kind carries, the key
//! prefix, the capability it needs, how it is sent and sent again, what enters a round's
//! digest, and how its answer is read and checked. Its public side (the function a tool
//! calls, its builder, and how the tool reads the answer) is its file of the same name in
//! `asks`, above the round.
//!
//! Adding a kind is its file here, its row in the `kinds!` table ([`table`]), and its
//! file in `asks` with its names in that group's prelude. For `#[saga_tool]` to recognise
//! its function, it also gets its row in the macro crate's `tool/parse/suspend.rs` (and its variant in `tool/ir.rs`).
//!
//! Uses `forms`, `call` and `identity`. The round uses the table's enums; the kinds never
//! use the round.

pub(crate) mod form;
pub(crate) mod kind;
pub(crate) mod roots;
pub(crate) mod sample;
pub(crate) mod table;
pub(crate) mod tool_sample;
pub(crate) mod url;
