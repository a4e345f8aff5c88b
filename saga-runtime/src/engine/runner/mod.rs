//! The runner: one request, one transition ([`transition`]; the tool's types behind
//! [`Typed`](crate::engine::contract::typed::Typed)), a token read without a transition ([`inspect`]), a tool and its retired
//! builds behind one name ([`family`]), what one drive of a call carries from round to round
//! ([`per_call`]), a panic in tool code kept to its call
//! ([`unwind`]), and a round's samples answered by the server's model ([`sampling`]), and an input-required
//! result written as JSON for its reply and its record ([`written`]).
//!
//! The top of the engine: it may use every group but `expand`.

pub(crate) mod drive;
pub(crate) mod family;
pub(crate) mod inspect;
pub(crate) mod per_call;
pub(crate) mod retried;
pub(crate) mod sampling;
pub(crate) mod transition;
pub(crate) mod unwind;
pub(crate) mod written;
