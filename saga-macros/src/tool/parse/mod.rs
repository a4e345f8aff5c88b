//! Parse: what the user wrote, read. The attribute's arguments ([`attr`]), the signature
//! ([`sig`]), the arguments of the macros a body may call ([`macro_args`]), and which
//! expressions are suspensions ([`suspend`]).

pub mod attr;
pub mod macro_args;
pub mod sig;
pub mod suspend;
