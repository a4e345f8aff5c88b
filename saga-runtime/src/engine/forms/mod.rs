//! Forms: what a form-mode elicitation asks for. A type's requested schema and the
//! check an answer must pass ([`elicit`]), the field types a form holds
//! ([`elicit_field`]), and a type's form as it is sent and digested ([`type_form`]); and the
//! JSON Schema of a type's arguments, a tool's or a sampling tool's ([`json_schema`],
//! [`integer_formats`]).
//!
//! Uses `identity` (the digest's hash) only.

pub(crate) mod elicit;
pub(crate) mod elicit_field;
pub(crate) mod integer_formats;
pub(crate) mod json_schema;
pub(crate) mod type_form;
