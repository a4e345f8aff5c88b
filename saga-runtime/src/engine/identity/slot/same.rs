//! Whether a value read back is the value that was written.
//!
//! Compared as serde sees them, not as JSON shows them: JSON shows `None`, `Some(())`,
//! `Some(None)` and `Some(Value::Null)` all as `null`, so a comparison of renderings
//! passed a slot that read `Some(Value::Null)` back as `None` (issue 72). Here both
//! values are written with [`super::write`] (`Some` marked, maps with keys of any kind,
//! NaN and `-0.0` kept) and read into a [`Tree`] that orders what a hasher ordered.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::msgpack;
use super::saved::Saved;

/// Whether `a` and `b` are the same value: the same serde calls, but for the order of a
/// sequence's elements and a map's entries (a `HashSet` or `HashMap` lists its elements
/// in its hasher's order). A value that cannot be written is not taken as the same.
// Through `Saved`: compiled once, not once per saved type ([`super::saved`]).
pub(crate) fn same_value(a: &dyn Saved, b: &dyn Saved) -> bool {
    let mut left = Vec::new();
    a.write(&mut left).is_ok() && reads_as_written(&left, b)
}

/// Whether `again`, a value read back from `written` (its [`super::write`] bytes), is the value
/// that was written: its own bytes the same, or the same [`Tree`].
pub(crate) fn reads_as_written(written: &[u8], again: &dyn Saved) -> bool {
    let mut bytes = Vec::with_capacity(written.len());
    again.write(&mut bytes).is_ok() && same_bytes(written, &bytes)
}

fn same_bytes(left: &[u8], right: &[u8]) -> bool {
    if left == right {
        return true;
    }
    match (tree(left), tree(right)) {
        (Some(left), Some(right)) => left == right,
        _ => false,
    }
}

fn tree(bytes: &[u8]) -> Option<Tree> {
    let mut tree: Tree = msgpack::from_slice_marked(bytes).ok()?;
    tree.sort();
    Some(tree)
}

/// A value as serde wrote it, floats by their bits.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Tree {
    Nil,
    Some(Box<Tree>),
    Bool(bool),
    Int(i128),
    F32(u32),
    F64(u64),
    Str(String),
    Bytes(Vec<u8>),
    Seq(Vec<Tree>),
    Map(Vec<(Tree, Tree)>),
    /// An extension type (a newtype only `rmp-serde`'s extension is read as).
    Ext(Box<Tree>),
}

impl Tree {
    fn sort(&mut self) {
        match self {
            Tree::Some(inner) | Tree::Ext(inner) => inner.sort(),
            Tree::Seq(items) => {
                items.iter_mut().for_each(Tree::sort);
                items.sort();
            }
            Tree::Map(entries) => {
                for (key, value) in entries.iter_mut() {
                    key.sort();
                    value.sort();
                }
                entries.sort();
            }
            _ => {}
        }
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Nil)
    }

    fn visit_none<E>(self) -> Result<Tree, E> {
        Ok(Tree::Nil)
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<Tree, D::Error> {
        Tree::deserialize(inner).map(|tree| Tree::Some(Box::new(tree)))
    }

    fn visit_bool<E>(self, value: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Tree, E> {
        Ok(Tree::Int(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Tree, E> {
        Ok(Tree::Int(value.into()))
    }

    fn visit_f32<E>(self, value: f32) -> Result<Tree, E> {
        Ok(Tree::F32(value.to_bits()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Tree, E> {
        Ok(Tree::F64(value.to_bits()))
    }

    fn visit_str<E>(self, value: &str) -> Result<Tree, E> {
        Ok(Tree::Str(value.to_owned()))
    }

    fn visit_bytes<E>(self, value: &[u8]) -> Result<Tree, E> {
        Ok(Tree::Bytes(value.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Tree::Map(entries))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<Tree, D::Error> {
        Tree::deserialize(inner).map(|tree| Tree::Ext(Box::new(tree)))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use serde_json::{Value, json};

    use super::*;

    /// [`same_value`] of two values of one type, as the checks compare them.
    fn same<T: serde::Serialize + serde::de::DeserializeOwned>(a: &T, b: &T) -> bool {
        same_value(a, b)
    }

    #[test]
    fn options_of_nothing_are_not_none() {
        assert!(!same(&Some(Value::Null), &None));
        assert!(!same(&Some(None::<u8>), &None));
        assert!(!same(&Some(()), &None));
        assert!(!same(&Some(Some(())), &Some(None)));
        assert!(same(&Some(Value::Null), &Some(Value::Null)));
        assert!(same(&None::<Value>, &None));
    }

    #[test]
    fn a_hashers_order_is_not_a_difference_and_values_are() {
        let a: HashSet<String> = (0..40).map(|i| format!("s{i}")).collect();
        let mut listed: Vec<String> = a.iter().cloned().collect();
        listed.reverse();
        let b: HashSet<String> = listed.into_iter().collect();
        assert!(same(&a, &b));
        let m: HashMap<u32, Option<()>> =
            (0..40).map(|i| (i, (i % 2 == 0).then_some(()))).collect();
        let n: HashMap<u32, Option<()>> = m.iter().map(|(k, v)| (*k, *v)).collect();
        assert!(same(&m, &n));
        let mut changed = n.clone();
        changed.insert(1, Some(()));
        assert!(!same(&m, &changed));
        assert!(!same(&json!({"a": 1}), &json!({"a": 1.0})));
        assert!(!same(&f64::NAN, &-f64::NAN));
        assert!(same(&f64::NAN, &f64::NAN));
        assert!(!same(&0.0f64, &-0.0f64));
    }
}
