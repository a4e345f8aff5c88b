//! Forms: what a form-mode elicitation asks for. A type's requested schema and the
//! check an answer must pass ([`elicit`]), the field types a form holds
//! ([`elicit_field`]), and a type's form as it is sent and digested ([`form`]).
//!
//! Uses `identity` (the digest's hash) only.

pub(crate) mod elicit;
pub(crate) mod elicit_field;
pub(crate) mod form;
