//! The limits of a trace and the samples it answers with: a type whose `Deserialize`
//! refuses one profile's samples (`NonZeroU32` refuses zero, a URL the empty string) is
//! traced again with the next.

/// The unit struct name that [`Unreachable`](crate::engine::expand::saga_fn::Unreachable) asks for: a
/// variant holding it is a call site of an ordinary future, which never suspends.
pub(crate) const UNREACHABLE: &str = "saga::Unreachable";

/// The newtype name a `#[saga_tool]`'s runtime state reads as: its layout is traced
/// through its step, never from this type.
pub(crate) const MACRO_STATE: &str = "saga::MacroState";

/// The newtype name a `SlotTrace` of a MessagePack slot reads as; the tracer then reads
/// the type's name as a unit struct inside it. The macros' state enums trace their slots
/// through `slot::trace_slot`, which records what this path records; the path stays, as
/// the tests' reference for it.
#[cfg(test)]
pub(crate) const SELF_DESCRIBED: &str = "saga::MessagePack";

/// The error of a state enum without variants: a saga that never suspends.
pub(crate) const EMPTY_ROOT: &str = "the state has no suspension point";

/// How deep containers may nest before the trace gives up.
pub(super) const MAX_DEPTH: usize = 96;
/// Passes of one profile (each explores at least one more enum variant).
pub(super) const MAX_PASSES: usize = 4096;

/// The sample values of one pass. Profiles after the first satisfy types whose
/// `Deserialize` validates what it reads.
#[derive(Clone, Copy)]
pub(super) struct Profile {
    pub(super) int: u8,
    pub(super) text: &'static str,
    pub(super) bytes: usize,
}

pub(super) const PROFILES: &[Profile] = &[
    Profile {
        int: 0,
        text: "",
        bytes: 0,
    },
    Profile {
        int: 1,
        text: "a",
        bytes: 16,
    },
    Profile {
        int: 1,
        text: "1970-01-01T00:00:00Z",
        bytes: 32,
    },
    Profile {
        int: 1,
        text: "http://localhost/",
        bytes: 8,
    },
    Profile {
        int: 1,
        text: "00000000-0000-0000-0000-000000000000",
        bytes: 4,
    },
    Profile {
        int: 1,
        text: "0",
        bytes: 1,
    },
    Profile {
        int: 1,
        text: "user@example.com",
        bytes: 2,
    },
    Profile {
        int: 1,
        text: "https://example.com/a?b=c#d",
        bytes: 20,
    },
];

/// The newtype names a postcard slot's trace reads as, by the index of the profile its
/// type traced with alone: the tracer takes that profile inside the slot, so that a state
/// holding a URL, a date and a UUID traces although no one profile satisfies all three.
/// One per profile. The tests' reference path only (see `SELF_DESCRIBED`).
#[cfg(test)]
pub(crate) const SLOT_PROFILES: [&str; 8] = [
    "saga::Slot0",
    "saga::Slot1",
    "saga::Slot2",
    "saga::Slot3",
    "saga::Slot4",
    "saga::Slot5",
    "saga::Slot6",
    "saga::Slot7",
];

#[cfg(test)]
const _: () = assert!(SLOT_PROFILES.len() == PROFILES.len());
