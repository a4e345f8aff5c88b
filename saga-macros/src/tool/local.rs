//! The saga's locals, as the state machine sees them: in scope at a point, or saved in the
//! state at a suspension.

use syn::Ident;

/// A local the runtime saves at a suspension.
#[derive(Clone, PartialEq, Eq)]
pub struct Saved {
    pub ident: Ident,
    pub mutable: bool,
    /// The state variant's field holding it: the local's name, made unique.
    pub field: Ident,
}

/// A local in scope: its name and whether it was declared `mut`.
#[derive(Clone)]
pub struct Binding {
    pub ident: Ident,
    pub mutable: bool,
}
