//! A saved value as the slots' checks see it: its type behind the few serde calls the
//! checks make of it.
//!
//! Every type a saga keeps across a suspension gets the checks that keep a slot from being
//! sealed as bytes it would not read back from: postcard's read-back (the samples', when
//! the type is first met, and the tagged form's), MessagePack's, and the comparison of
//! what was read with what was written ([`super::same`]). Written generic over the type,
//! each of them was compiled again for every saved type of every tool, about 1,300 LLVM
//! lines a type (issue 80, `cargo llvm-lines` of `benches/compile/realistic/`). Through
//! [`Saved`] a type compiles only its methods, one serde call each, and the checks are
//! compiled once. Of a postcard slot that reads back (the common case, every seal and
//! open), only [`Saved::skips`] is called through it, one virtual call per slot at the
//! seal: its value is written and read by the state's own serde, as before.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::msgpack::{self, Input};
use super::{skips, write};

/// What the checks ask of a saved value: each method one serde call of its type.
pub(crate) trait Saved {
    /// The type's name, as `std::any::type_name` gives it.
    fn type_name(&self) -> &'static str;

    /// Whether its serialization skips a field or has a length it cannot tell
    /// ([`skips`]): postcard, which reads by position, cannot read it back.
    fn skips(&self) -> bool;

    /// Its postcard.
    fn postcard(&self) -> postcard::Result<Vec<u8>>;

    /// Its MessagePack, `Some` marked ([`write`]), appended to `out`.
    fn write(&self, out: &mut Vec<u8>) -> Result<(), msgpack::Error>;

    /// A value of its type read from the postcard at the start of `bytes`, and how many
    /// bytes are left after it.
    fn read_postcard<'s>(&'s self, bytes: &[u8]) -> postcard::Result<(Box<dyn Saved + 's>, usize)>;

    /// A value of its type read from all of `input` ([`msgpack::read_input`]).
    fn read_msgpack<'s>(&'s self, input: &Input<'_>)
    -> Result<Box<dyn Saved + 's>, msgpack::Error>;
}

impl<T: Serialize + DeserializeOwned> Saved for T {
    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }

    fn skips(&self) -> bool {
        skips::skips(self)
    }

    fn postcard(&self) -> postcard::Result<Vec<u8>> {
        postcard::to_allocvec(self)
    }

    fn write(&self, out: &mut Vec<u8>) -> Result<(), msgpack::Error> {
        write::append(out, self)
    }

    fn read_postcard<'s>(&'s self, bytes: &[u8]) -> postcard::Result<(Box<dyn Saved + 's>, usize)> {
        let (again, rest) = postcard::take_from_bytes::<T>(bytes)?;
        Ok((Box::new(again), rest.len()))
    }

    fn read_msgpack<'s>(
        &'s self,
        input: &Input<'_>,
    ) -> Result<Box<dyn Saved + 's>, msgpack::Error> {
        Ok(Box::new(msgpack::read_input::<T>(input)?))
    }
}
