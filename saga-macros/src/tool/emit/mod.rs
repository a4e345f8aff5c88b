//! Emit: the generated code. The state machine built from the lowered body
//! ([`machine`]: its start, one resume per suspension, each exit), a tool's items and
//! `SagaTool` impl ([`tool`]), a helper's ([`helper`]), what the machine keeps at each suspension ([`keep`]), a call
//! of a helper or a future ([`call`]), the requests a suspension states again
//! ([`restate`]), the diagram ([`diagram`]), what a prompt or a resource adds
//! ([`served_as`]), how the state enum is written, read and traced ([`state_codec`]), and the item kept beside the errors when a step fails ([`fallback`]),
//! its body's suspensions typed placeholders ([`unexpanded`]).

pub mod call;
pub mod diagram;
pub mod fallback;
pub mod helper;
pub mod keep;
pub mod machine;
pub mod restate;
pub mod served_as;
pub mod state_codec;
pub mod tool;
pub mod unexpanded;
