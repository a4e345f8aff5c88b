//! Suspension points and their identities: what a token names, so that a build resumes
//! it only where it saved the same thing.
//!
//! A tool's state is an enum with one variant per suspension point (for a hand-written
//! tool whose state is not an enum, the whole state is one point). Each point's identity
//! is a SHA-256 of the tool's name, its declared `version`, the point's name and the
//! point's saved layout ([`crate::engine::identity::layout`]). It is computed once, when the server is
//! built.
//!
//! A token carries the point in its header, in 8 bytes: 4 of a hash of the tool and point
//! names, the version, and 2 of the identity. That is enough to find the point and to say
//! in the log why a token was refused (an unknown point, another version, another layout).
//! The whole identity is in the token's associated data, so a token opens only for the
//! exact identity it was sealed with, whatever the 8 bytes.
//!
//! The point's variant index is not sealed: the token's state is the variant's fields
//! alone, and the build that opens it puts back its own index for that point. So a
//! suspension added before the one in flight moves no token onto another variant.
//!
//! A `#[saga_tool]`'s point has a *tagged twin*: the same point, for a state sealed in the
//! tagged form (every saved local tagged with its encoding; see [`crate::engine::identity::slot`]). Its
//! identity hashes the layout with a suffix no layout text can hold, and the variant index
//! the build puts back for it is offset by [`TAGGED`], which tells the state's decoder.

use saga_wire::__private::{point_key, tagged_point_key};

use crate::engine::identity::layout::frame::Frame;
use crate::engine::identity::layout::profile::{EMPTY_ROOT, UNREACHABLE};
use crate::engine::identity::layout::shape::{LayoutError, Traced};
use crate::engine::identity::layout::{self};
use crate::metrics::{AsRefusal, Refusal};
use crate::state::PointKey;

/// The offset of a tagged state's variant index (see the module docs). Far above any
/// state's variant count, so that no untagged state reads as tagged.
pub(crate) const TAGGED: u32 = 1 << 20;

/// Whether `bytes`, a state enum's encoding, are in the tagged form; if so, the same
/// state with its untagged variant index.
pub(crate) fn untag(bytes: &[u8]) -> Option<Vec<u8>> {
    let (index, len) = varint(bytes)?;
    let index = index.checked_sub(TAGGED)?;
    let mut buffer = [0u8; 5];
    let mut untagged = put_varint(&mut buffer, index).to_vec();
    untagged.extend_from_slice(&bytes[len..]);
    Some(untagged)
}

/// `bytes`, a state enum's encoding, with its variant index moved into the tagged range.
pub(crate) fn tag(bytes: &[u8]) -> Option<Vec<u8>> {
    let (index, len) = varint(bytes)?;
    let mut buffer = [0u8; 5];
    let mut tagged = put_varint(&mut buffer, index.checked_add(TAGGED)?).to_vec();
    tagged.extend_from_slice(&bytes[len..]);
    Some(tagged)
}

/// How a tool's state is framed in postcard, which says where its variant index is.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// An enum: the index is the first varint.
    Enum,
    /// A byte string holding an enum (`#[saga_tool]`'s state): a length, then the index.
    Bytes,
    /// Not an enum: one point, no index.
    Whole,
}

/// A tool state's layout, point by point.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct StateLayout {
    pub(crate) framing: Framing,
    /// Per variant, by index: its name and its layout, or `None` for a variant that is
    /// never sealed (an ordinary future's call site).
    pub(crate) variants: Vec<(String, Option<String>)>,
    /// The state type traced: a tool's layout must be of its own state (a wrapper that
    /// forwards `layout` keeps the wrapped tool's state).
    pub(crate) state_type: &'static str,
    /// The version of the tool whose step was traced, when it was (a wrapper must forward
    /// it too).
    pub(crate) version: Option<u16>,
    /// The code tags of the helpers the tool calls.
    pub(crate) helper_tags: Vec<u16>,
}

impl StateLayout {
    /// These variants, framed so; the rest filled in by whoever traced them.
    fn new(framing: Framing, variants: Vec<(String, Option<String>)>) -> Self {
        StateLayout {
            framing,
            variants,
            state_type: "",
            version: None,
            helper_tags: Vec::new(),
        }
    }

    /// The layout of a hand-written tool's state type.
    pub(crate) fn of<S: serde::de::DeserializeOwned>() -> Result<Self, LayoutError> {
        let traced = match layout::trace::<S>() {
            Err(error) if error.0 == EMPTY_ROOT => {
                let mut layout = StateLayout::new(Framing::Enum, Vec::new());
                layout.state_type = std::any::type_name::<S>();
                return Ok(layout);
            }
            traced => traced?,
        };
        let mut layout = Self::from_traced(&traced, Framing::Enum, Vec::new(), &[], &[]);
        layout.state_type = std::any::type_name::<S>();
        Ok(layout)
    }

    fn from_traced(
        traced: &Traced,
        framing: Framing,
        callees: Vec<(String, String)>,
        unreachable: &[String],
        site_tags: &[&str],
    ) -> Self {
        match traced.root_variants() {
            Some(variants) => StateLayout::new(
                framing,
                variants
                    .into_iter()
                    .enumerate()
                    .map(|(index, (name, text))| {
                        let mut text = text.trim_start().to_owned();
                        if let Some(tag) = site_tags.get(index).filter(|tag| !tag.is_empty()) {
                            text.push_str(" @ ");
                            text.push_str(tag);
                        }
                        if text.contains(&format!("{:?}", UNREACHABLE))
                            || unreachable.contains(&name)
                        {
                            return (name, None);
                        }
                        for (variant, callee) in &callees {
                            if *variant == name {
                                text.push_str(" where __callee = [");
                                text.push_str(callee);
                                text.push(']');
                            }
                        }
                        (name, Some(text))
                    })
                    .collect(),
            ),
            None => StateLayout::new(
                Framing::Whole,
                vec![("State".to_owned(), Some(traced.render()))],
            ),
        }
    }

    /// The layout of a `#[saga_tool]`'s state, traced in its step (see
    /// [`crate::engine::expand::expand_support::macro_layout`]).
    pub(crate) fn of_frame(frame: Frame) -> Result<Self, LayoutError> {
        let traced = match &frame.state {
            Some(Ok(traced)) => traced.clone(),
            Some(Err(error)) if error.0 == EMPTY_ROOT => {
                return Ok(StateLayout::new(Framing::Bytes, Vec::new()));
            }
            Some(Err(error)) => return Err(error.clone()),
            None => return Err(LayoutError("the step did not trace its state".into())),
        };
        let mut helper_tags = Vec::new();
        frame.callee_tags(&mut helper_tags);
        let callees = frame
            .callees
            .iter()
            .map(|(variant, callee)| callee.render().map(|text| (variant.clone(), text)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut layout = Self::from_traced(
            &traced,
            Framing::Bytes,
            callees,
            &frame.unreachable,
            &frame.site_tags,
        );
        layout.helper_tags = helper_tags;
        Ok(layout)
    }
}

/// One suspension point of a tool.
#[derive(Debug, Clone)]
pub struct Point {
    /// Its name: the state variant's (`AfterElicitTarget`, …).
    pub name: String,
    /// The variant's index in this build.
    pub(crate) variant: u32,
    /// Its identity.
    pub key: PointKey,
    /// What it saves, as text.
    pub layout: String,
    /// Whether a state sealed here reads back as itself (checked at its first seal).
    pub(crate) reads_back: std::sync::OnceLock<Result<(), String>>,
}

/// Why a token names no point of a tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PointRefusal {
    /// No point of that name in this build.
    #[error("the token stopped at a suspension point this build does not have")]
    Unknown,
    /// The point exists, at another `version`.
    #[error("the token's point {point} is of version {token}, this build's is {ours}")]
    OtherVersion {
        /// The point's name.
        point: String,
        /// The token's version.
        token: u16,
        /// This build's.
        ours: u16,
    },
    /// The point exists and saves another layout.
    #[error("the token's point {point} saved another layout than this build's")]
    OtherLayout {
        /// The point's name.
        point: String,
    },
}

/// The suspension points of one tool build.
#[derive(Debug, Clone)]
pub struct Points {
    tool: String,
    version: u16,
    framing: Framing,
    /// By variant index.
    points: Vec<Option<Point>>,
    /// By variant index, each point's tagged twin (a `#[saga_tool]`'s state only).
    tagged: Vec<Option<Point>>,
    /// The tool's code tag with its helpers' folded in (see `SagaTool::build_tag`).
    build_tag: u16,
    /// Header bytes and variant index, sorted: a token's point is found by binary search,
    /// however many points the saga has.
    by_header: Vec<([u8; 8], usize)>,
    /// The tool's metric keys, built once: a transition then reports without building a
    /// label (see [`crate::metrics`]).
    metric_keys: std::sync::Arc<crate::metrics::ToolKeys>,
    /// The variants no state is ever sealed at: the call sites of ordinary `async fn`s
    /// (a `#[saga_fn]`'s would suspend), which the types, not the syntax, tell apart.
    never: Vec<String>,
}

impl Points {
    /// The points of a tool registered as `name`, from what it says of itself: its
    /// version and build tag, its state's type name, and its state's layout. Not generic,
    /// so that it is compiled once; [`Points::of`] is the tool's way in.
    pub(crate) fn from_layout(
        name: &str,
        version: u16,
        tool_build_tag: u16,
        state_type: &str,
        layout: StateLayout,
    ) -> Result<Self, LayoutError> {
        if layout.state_type != state_type {
            return Err(LayoutError(format!(
                "its layout was traced from `{}`, but its state is `{state_type}`: a tool \
                 that wraps another keeps the wrapped tool's `State`, or traces its own",
                layout.state_type
            )));
        }
        if let Some(traced) = layout.version.filter(|traced| *traced > version) {
            // A lower version would resume the tokens the wrapped tool's bump refuses.
            return Err(LayoutError(format!(
                "its layout is of a tool at version {traced}, but it says version {version}: \
                 a tool that wraps another forwards `version` (and `build_tag`) with `layout`"
            )));
        }
        let build_tag = layout
            .helper_tags
            .iter()
            .fold(tool_build_tag, |tag, helper| {
                tag.rotate_left(5) ^ helper.wrapping_mul(0x9e37)
            });
        let points: Vec<Option<Point>> = layout
            .variants
            .iter()
            .enumerate()
            .map(|(index, (point, text))| {
                text.as_ref().map(|text| Point {
                    name: point.clone(),
                    variant: index as u32,
                    key: point_key(name, version, point, text),
                    layout: text.clone(),
                    reads_back: std::sync::OnceLock::new(),
                })
            })
            .collect();
        let tagged: Vec<Option<Point>> = if layout.framing == Framing::Bytes {
            points
                .iter()
                .map(|point| {
                    point.as_ref().map(|point| Point {
                        name: point.name.clone(),
                        variant: point.variant + TAGGED,
                        key: tagged_point_key(name, version, &point.name, &point.layout),
                        layout: point.layout.clone(),
                        reads_back: std::sync::OnceLock::new(),
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut by_header: Vec<([u8; 8], usize)> = points
            .iter()
            .chain(&tagged)
            .flatten()
            .map(|point| (point.key.header, point.variant as usize))
            .collect();
        by_header.sort_unstable();
        Ok(Points {
            tool: name.to_owned(),
            version,
            framing: layout.framing,
            points,
            tagged,
            by_header,
            build_tag,
            metric_keys: std::sync::Arc::new(crate::metrics::ToolKeys::new(name)),
            never: layout
                .variants
                .iter()
                .filter(|(_, text)| text.is_none())
                .map(|(point, _)| point.clone())
                .collect(),
        })
    }

    /// The variants no state is ever sealed at (see the field).
    pub(crate) fn never(&self) -> &[String] {
        &self.never
    }

    /// The tool's metric keys.
    pub(crate) fn metric_keys(&self) -> &crate::metrics::ToolKeys {
        &self.metric_keys
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The tool's declared version.
    pub fn version(&self) -> u16 {
        self.version
    }

    /// The tool's code tag, its helpers' folded in.
    pub(crate) fn build_tag(&self) -> u16 {
        self.build_tag
    }

    /// Every point that can be sealed.
    pub fn iter(&self) -> impl Iterator<Item = &Point> {
        self.points.iter().flatten()
    }

    /// Whether each point has a tagged twin (a `#[saga_tool]`'s state).
    pub(crate) fn has_twins(&self) -> bool {
        self.framing == Framing::Bytes
    }

    /// Every point and tagged twin a token may name.
    pub(crate) fn with_twins(&self) -> impl Iterator<Item = &Point> {
        self.points.iter().chain(&self.tagged).flatten()
    }

    /// The point a token's header names, if this build has it with the same identity.
    pub fn find(&self, header: &[u8; 8]) -> Option<&Point> {
        // Within one build, two points share a header only if 48 bits of two hashes
        // collide; across the builds of a family, `SagaTools` refuses such a pair.
        let at = self.by_header.partition_point(|(known, _)| known < header);
        let (known, index) = self.by_header.get(at)?;
        (known == header).then(|| self.at(*index as u32)).flatten()
    }

    /// The point (or tagged twin) this build puts back as variant `index`.
    fn at(&self, index: u32) -> Option<&Point> {
        match index.checked_sub(TAGGED) {
            Some(index) => self.tagged.get(index as usize),
            None => self.points.get(index as usize),
        }
        .and_then(Option::as_ref)
    }

    /// Why `header` names none of these points.
    pub fn refusal(&self, header: &[u8; 8]) -> PointRefusal {
        let named = self
            .iter()
            .find(|point| point.key.header[..4] == header[..4]);
        match named {
            None => PointRefusal::Unknown,
            Some(point) => {
                let token = PointKey::version_of(header);
                if token != self.version {
                    PointRefusal::OtherVersion {
                        point: point.name.clone(),
                        token,
                        ours: self.version,
                    }
                } else {
                    PointRefusal::OtherLayout {
                        point: point.name.clone(),
                    }
                }
            }
        }
    }

    /// Takes the variant index out of the state encoded at `encoded[from..]`, and gives
    /// the point it names.
    pub(crate) fn split(&self, encoded: &mut Vec<u8>, from: usize) -> Result<&Point, String> {
        let (index, cut) = match self.framing {
            Framing::Whole => (0, 0..0),
            Framing::Enum => {
                let (index, len) = varint(&encoded[from..]).ok_or("no variant index")?;
                (index, from..from + len)
            }
            Framing::Bytes => {
                let (length, prefix) = varint(&encoded[from..]).ok_or("no length")?;
                if length as usize != encoded.len() - from - prefix {
                    return Err("the state is not one byte string".to_owned());
                }
                let (index, len) = varint(&encoded[from + prefix..]).ok_or("no variant index")?;
                (index, from..from + prefix + len)
            }
        };
        let point = match self.framing {
            Framing::Bytes => self.at(index),
            Framing::Enum | Framing::Whole => {
                self.points.get(index as usize).and_then(Option::as_ref)
            }
        }
        .ok_or_else(|| format!("variant {index} is no suspension point"))?;
        encoded.drain(cut);
        Ok(point)
    }

    /// The state's encoding for `point` from its sealed fields, as this build reads it.
    pub(crate) fn join(&self, point: &Point, fields: &[u8]) -> Vec<u8> {
        let mut prefix = [0u8; 10];
        let len = self.prefix(point, fields.len(), &mut prefix);
        [&prefix[..len], fields].concat()
    }

    /// Runs `read` on the state's encoding for `point`, made in place from the sealed
    /// fields at `plaintext[at..]` (its index put in front, then taken out again), so that
    /// resuming costs no copy of the state.
    pub(crate) fn read_in_place<R>(
        &self,
        point: &Point,
        plaintext: &mut Vec<u8>,
        at: usize,
        read: impl FnOnce(&[u8]) -> R,
    ) -> R {
        let mut prefix = [0u8; 10];
        let len = self.prefix(point, plaintext.len().saturating_sub(at), &mut prefix);
        let at = at.min(plaintext.len());
        let end = plaintext.len();
        // Within the spare capacity the tag left behind: no allocation, two short moves.
        plaintext.resize(end + len, 0);
        plaintext.copy_within(at..end, at + len);
        plaintext[at..at + len].copy_from_slice(&prefix[..len]);
        let result = read(&plaintext[at..]);
        plaintext.copy_within(at + len.., at);
        plaintext.truncate(end);
        result
    }

    /// What goes before a point's sealed fields of `fields` bytes for postcard to read
    /// them as this build's state: its variant index (and, for a byte string, the length);
    /// its length in `buffer`.
    fn prefix(&self, point: &Point, fields: usize, buffer: &mut [u8; 10]) -> usize {
        let mut index = [0u8; 5];
        let index = put_varint(&mut index, point.variant);
        match self.framing {
            Framing::Whole => 0,
            Framing::Enum => {
                buffer[..index.len()].copy_from_slice(index);
                index.len()
            }
            Framing::Bytes => {
                let mut len = [0u8; 5];
                let total = u32::try_from(index.len() + fields).unwrap_or(u32::MAX);
                let len = put_varint(&mut len, total);
                buffer[..len.len()].copy_from_slice(len);
                buffer[len.len()..len.len() + index.len()].copy_from_slice(index);
                len.len() + index.len()
            }
        }
    }
}

pub(crate) fn varint(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut value: u32 = 0;
    for (i, byte) in bytes.iter().take(5).enumerate() {
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

pub(crate) fn put_varint(buffer: &mut [u8; 5], mut value: u32) -> &[u8] {
    let mut len = 0;
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            buffer[len] = byte;
            return &buffer[..=len];
        }
        buffer[len] = byte | 0x80;
        len += 1;
    }
}

// A refusal's metric label: here, since the metrics sit below the engine.
impl AsRefusal for PointRefusal {
    fn refusal(&self) -> Refusal {
        Refusal::from(self)
    }
}

impl From<&PointRefusal> for Refusal {
    fn from(refusal: &PointRefusal) -> Self {
        match refusal {
            PointRefusal::Unknown => Refusal::UnknownPoint,
            PointRefusal::OtherVersion { .. } => Refusal::OtherVersion,
            PointRefusal::OtherLayout { .. } => Refusal::OtherLayout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for value in [0u32, 1, 127, 128, 300, 16_384, u32::MAX] {
            let mut buffer = [0u8; 5];
            let bytes = put_varint(&mut buffer, value).to_vec();
            assert_eq!(bytes, postcard::to_allocvec(&value).expect("encodes"));
            assert_eq!(varint(&bytes), Some((value, bytes.len())));
        }
    }

    #[test]
    fn tagging_moves_the_index_and_back() {
        let bytes = [3u8, 9, 9];
        let tagged = tag(&bytes).expect("tags");
        assert_ne!(tagged, bytes);
        assert_eq!(untag(&tagged).expect("tagged"), bytes);
        assert_eq!(untag(&bytes), None);
    }

    #[test]
    fn keys_differ_by_every_part() {
        let base = point_key("pay", 0, "AfterConfirm", "{ a: str }");
        for other in [
            point_key("pay2", 0, "AfterConfirm", "{ a: str }"),
            point_key("pay", 1, "AfterConfirm", "{ a: str }"),
            point_key("pay", 0, "AfterConfirm2", "{ a: str }"),
            point_key("pay", 0, "AfterConfirm", "{ b: str }"),
        ] {
            assert_ne!(base.identity, other.identity);
        }
        assert_eq!(
            PointKey::version_of(&point_key("pay", 7, "A", "").header),
            7
        );
    }
}
