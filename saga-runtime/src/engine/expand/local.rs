//! What a saga keeps across a suspension: its locals, saved into the token.

use serde::de::DeserializeOwned;

/// A local kept across a suspension.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is kept across a suspension point, so it must be saved in the saga's state",
    label = "this local is still used after a suspension",
    note = "locals that live across `elicit`, `sample`, `list_roots`, `checkpoint` or `join!` are serialized into the requestState token: derive `Serialize` and `Deserialize` for the type, or stop using the local before the suspension; a borrow (`&T`, e.g. from `.first()`, `.get(..)`, `.as_str()`) cannot be saved: keep an owned value instead (`.cloned()`, `.to_owned()`)"
)]
// One serde trait only, so that a type that has neither is one error at the local (a
// type that can be read back nearly always can be written too; the state's own check,
// `SagaState`, covers one that cannot).
pub trait SagaLocal: DeserializeOwned {}

impl<T: DeserializeOwned> SagaLocal for T {}

/// Asserts, at the local's own span, that it can be saved.
pub fn saved<T: SagaLocal>(_local: &T) {}
