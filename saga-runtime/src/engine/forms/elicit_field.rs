//! The field types a form-mode elicitation can hold, and how each one is asked for and
//! read back. `#[derive(Elicit)]` builds a form from these.

use serde_json::{Map, Value};

use crate::engine::forms::elicit::{Elicit, FormError, as_integer};

/// A type that can be one property of a form-mode elicitation.
///
/// Implemented for `String`, `bool`, the integer and float types, unit-only enums that
/// derive `Elicit` (single select), `Vec` of such an enum (multi select), and `Option` of
/// any of these (not required).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "not a form field type",
    note = "MCP form mode is a flat object of primitives: use String, bool, an integer or float type, a unit-only enum deriving Elicit, Vec of such an enum (multi-select), or Option of any of these"
)]
pub trait ElicitField: Sized {
    /// Whether the property goes in the form's `required` list.
    const REQUIRED: bool = true;

    /// The wire values a select accepts (empty for other fields); the derive checks a
    /// select's `default` against them at compile time.
    #[doc(hidden)]
    const OPTIONS: &'static [&'static str] = &[];

    /// The property's schema: `type` and what the type itself implies (an enum's values,
    /// an integer type's range). The derive adds `title`, `description` and the rest.
    fn property() -> Map<String, Value>;

    /// Reads the property's value from an accepted answer; `None` when it is absent.
    /// An error says what is wrong with the value, without naming the field
    /// (e.g. "is not a string").
    fn parse(value: Option<&Value>) -> Result<Self, FormError>;

    /// Reads the property `name` of an answer, with an error that names it: what a
    /// derived form's `from_content` calls per field, compiled once per field type.
    #[doc(hidden)]
    #[inline(never)]
    fn read_named(content: &Map<String, Value>, name: &str) -> Result<Self, FormError> {
        read_field(content, name)
    }
}

/// A unit-only enum whose variants are the options of a single or multi select.
///
/// `#[derive(Elicit)]` implements it, with serde's `rename` and `rename_all` honoured.
///
/// `Vec<E>` is a form field (a multi select) only for such an `E`, so a `Vec` of anything
/// else ends up here: the message speaks of the field.
#[diagnostic::on_unimplemented(
    message = "`Vec<{Self}>` cannot be a field of an elicitation form",
    label = "not a form field type",
    note = "a Vec field is a multi select: its items must be a unit-only enum deriving Elicit",
    note = "MCP form mode is a flat object of primitives: use String, bool, an integer or float type, a unit-only enum deriving Elicit, Vec of such an enum (multi-select), or Option of any of these"
)]
pub trait ElicitEnum: Sized {
    /// The wire value of each variant, in declaration order.
    const WIRE_NAMES: &'static [&'static str];
    /// The display title of each variant, in declaration order; empty when no variant
    /// has one (the select is then sent as a plain `enum`).
    const TITLES: &'static [&'static str];

    /// The variant whose wire value is `wire`.
    fn from_wire(wire: &str) -> Option<Self>;

    /// The wire value of this variant.
    fn to_wire(&self) -> &'static str;
}

fn object(pairs: impl IntoIterator<Item = (&'static str, Value)>) -> Map<String, Value> {
    pairs
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
}

fn missing(value: Option<&Value>) -> Result<&Value, FormError> {
    match value {
        None | Some(Value::Null) => Err(FormError::new("is missing")),
        Some(value) => Ok(value),
    }
}

impl ElicitField for String {
    fn property() -> Map<String, Value> {
        object([("type", Value::from("string"))])
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        missing(value)?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| FormError::new("is not a string"))
    }
}

impl ElicitField for bool {
    fn property() -> Map<String, Value> {
        object([("type", Value::from("boolean"))])
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        missing(value)?
            .as_bool()
            .ok_or_else(|| FormError::new("is not a boolean"))
    }
}

macro_rules! small_integers {
    ($($ty:ty),*) => {$(
        impl ElicitField for $ty {
            fn property() -> Map<String, Value> {
                object([
                    ("type", Value::from("integer")),
                    ("minimum", Value::from(<$ty>::MIN)),
                    ("maximum", Value::from(<$ty>::MAX)),
                ])
            }
            fn parse(value: Option<&Value>) -> Result<Self, FormError> {
                parse_integer(value)
            }
        }
    )*};
}

small_integers!(i8, i16, i32, u8, u16, u32);

impl ElicitField for i64 {
    fn property() -> Map<String, Value> {
        object([("type", Value::from("integer"))])
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        parse_integer(value)
    }
}

impl ElicitField for isize {
    fn property() -> Map<String, Value> {
        <i64 as ElicitField>::property()
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        parse_integer(value)
    }
}

impl ElicitField for u64 {
    fn property() -> Map<String, Value> {
        // No maximum: MCP's schema holds an `i64` there, and the content check takes an
        // answer above `i64::MAX` where a minimum of 0 or more has no maximum.
        object([
            ("type", Value::from("integer")),
            ("minimum", Value::from(0)),
        ])
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        let value = missing(value)?;
        // Above i64::MAX, as_integer gives up; serde_json still reads a u64 exactly.
        if let Some(unsigned) = value.as_u64() {
            return Ok(unsigned);
        }
        parse_integer(Some(value))
    }
}

impl ElicitField for usize {
    fn property() -> Map<String, Value> {
        <u64 as ElicitField>::property()
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        let wide = <u64 as ElicitField>::parse(value)?;
        Self::try_from(wide)
            .map_err(|_| FormError::new(format!("is out of range for {}", stringify!(usize))))
    }
}

/// The numbers without an `Elicit` impl of their own (`i64` and `f64` have one): one-field
/// forms, read as a form's field of that type is. An integer type's range is in the
/// schema, so that `elicit::<u32>("How many?")` asks for a whole number from 0 to
/// 4294967295 and an answer outside it is asked again with the reason; so is an `f32`'s
/// (±3.4028235e38).
macro_rules! one_field_numbers {
    ($($ty:ty),*) => {$(
        impl Elicit for $ty {
            fn requested_schema() -> Map<String, Value> {
                one_field_schema::<$ty>()
            }
            fn from_content(content: &Map<String, Value>) -> Result<Self, FormError> {
                one_field_from_content(content)
            }
        }
    )*};
}

one_field_numbers!(i8, i16, i32, isize, u8, u16, u32, u64, usize, f32);

fn parse_integer<T: TryFrom<i64>>(value: Option<&Value>) -> Result<T, FormError> {
    let value = missing(value)?;
    if let Some(wide) = value.as_u64().filter(|wide| *wide > i64::MAX as u64) {
        return Err(FormError::new(format!("is out of range: {wide}")));
    }
    let wide = as_integer(value).ok_or_else(|| FormError::new("is not an integer"))?;
    T::try_from(wide).map_err(|_| FormError::new(format!("is out of range: {wide}")))
}

impl ElicitField for f64 {
    fn property() -> Map<String, Value> {
        object([("type", Value::from("number"))])
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        missing(value)?
            .as_f64()
            .ok_or_else(|| FormError::new("is not a number"))
    }
}

/// The largest answer an `f32` takes, as JSON writes `f32::MAX` (3.4028235e38): every
/// number up to it rounds to a finite `f32` (up to half a step past `f32::MAX`), so a
/// client that echoes the bound is not refused.
const F32_LIMIT: f64 = 3.4028235e38;

impl ElicitField for f32 {
    fn property() -> Map<String, Value> {
        // `f32`'s range in the schema, so that an answer beyond it is asked again with the
        // reason, as an integer type's is.
        object([
            ("type", Value::from("number")),
            ("minimum", Value::from(-F32_LIMIT)),
            ("maximum", Value::from(F32_LIMIT)),
        ])
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        let wide = <f64 as ElicitField>::parse(value)?;
        let narrow = wide as f32;
        if narrow.is_finite() {
            Ok(narrow)
        } else {
            Err(FormError::new(format!("is out of range: {wide}")))
        }
    }
}

impl<T: ElicitField> ElicitField for Option<T> {
    const REQUIRED: bool = false;
    const OPTIONS: &'static [&'static str] = T::OPTIONS;
    fn property() -> Map<String, Value> {
        T::property()
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(_) => T::parse(value).map(Some),
        }
    }
}

impl<E: ElicitEnum> ElicitField for Vec<E> {
    const OPTIONS: &'static [&'static str] = E::WIRE_NAMES;
    fn property() -> Map<String, Value> {
        let items = if E::TITLES.is_empty() {
            object([
                ("type", Value::from("string")),
                ("enum", Value::from(E::WIRE_NAMES.to_vec())),
            ])
        } else {
            object([("anyOf", titled_options::<E>())])
        };
        object([
            ("type", Value::from("array")),
            ("items", Value::Object(items)),
        ])
    }
    fn parse(value: Option<&Value>) -> Result<Self, FormError> {
        missing(value)?
            .as_array()
            .ok_or_else(|| FormError::new("is not an array"))?
            .iter()
            .map(|item| {
                let wire = item
                    .as_str()
                    .ok_or_else(|| FormError::new("has an item that is not a string"))?;
                E::from_wire(wire).ok_or_else(|| {
                    FormError::new(format!("has an item not in {:?}", E::WIRE_NAMES))
                })
            })
            .collect()
    }
}

fn titled_options<E: ElicitEnum>() -> Value {
    E::WIRE_NAMES
        .iter()
        .zip(E::TITLES)
        .map(|(wire, title)| {
            Value::Object(object([
                ("const", Value::from(*wire)),
                ("title", Value::from(*title)),
            ]))
        })
        .collect()
}

/// The single-select property of an [`ElicitEnum`]: `enum`, or `oneOf` when titled.
#[doc(hidden)]
pub fn select_property<E: ElicitEnum>() -> Map<String, Value> {
    if E::TITLES.is_empty() {
        object([
            ("type", Value::from("string")),
            ("enum", Value::from(E::WIRE_NAMES.to_vec())),
        ])
    } else {
        object([
            ("type", Value::from("string")),
            ("oneOf", titled_options::<E>()),
        ])
    }
}

/// Reads a single-select answer.
#[doc(hidden)]
pub fn parse_select<E: ElicitEnum>(value: Option<&Value>) -> Result<E, FormError> {
    let wire = missing(value)?
        .as_str()
        .ok_or_else(|| FormError::new("is not a string"))?;
    E::from_wire(wire).ok_or_else(|| FormError::new(format!("is not one of {:?}", E::WIRE_NAMES)))
}

/// One property of a derived form's schema: what `#[derive(Elicit)]` writes per field,
/// as data, so that building the schema is compiled once, not once per form.
#[doc(hidden)]
pub struct SchemaField<'a> {
    /// The property's name (after serde renames).
    pub name: &'a str,
    /// The field type's own property ([`ElicitField::property`]).
    pub property: fn() -> Map<String, Value>,
    /// Whether the property goes in `required` ([`ElicitField::REQUIRED`]).
    pub required: bool,
    /// What the field's attributes add to the property, in order: `title`,
    /// `description`, `format`, the bounds, `default`.
    pub refine: &'a [(&'a str, SchemaValue<'a>)],
}

/// A value an attribute of `#[derive(Elicit)]` puts in a property: always a literal.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum SchemaValue<'a> {
    Str(&'a str),
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    /// A multi select's default: its wire values.
    Strs(&'a [&'a str]),
}

impl From<SchemaValue<'_>> for Value {
    fn from(value: SchemaValue<'_>) -> Value {
        match value {
            SchemaValue::Str(text) => Value::from(text),
            SchemaValue::Bool(flag) => Value::from(flag),
            SchemaValue::Int(int) => Value::from(int),
            SchemaValue::UInt(int) => Value::from(int),
            SchemaValue::Float(float) => Value::from(float),
            SchemaValue::Strs(items) => Value::from(items.to_vec()),
        }
    }
}

/// The schema of a derived form: an object of `fields`' properties, in order, with the
/// required ones listed.
#[doc(hidden)]
pub fn object_schema(fields: &[SchemaField<'_>]) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in fields {
        let mut property = (field.property)();
        for (key, value) in field.refine {
            property.insert((*key).to_owned(), Value::from(*value));
        }
        if field.required {
            required.push(Value::from(field.name));
        }
        properties.insert(field.name.to_owned(), Value::Object(property));
    }
    let mut schema = object([
        ("type", Value::from("object")),
        ("properties", Value::Object(properties)),
    ]);
    if !required.is_empty() {
        schema.insert("required".to_owned(), Value::Array(required));
    }
    schema
}

/// The field name of a one-field form.
const VALUE_FIELD: &str = "value";

/// The schema of a one-field form whose field, `value`, is a `T`.
#[doc(hidden)]
pub fn one_field_schema<T: ElicitField>() -> Map<String, Value> {
    let mut schema = object([
        ("type", Value::from("object")),
        (
            "properties",
            Value::Object(object([(VALUE_FIELD, Value::Object(T::property()))])),
        ),
    ]);
    if T::REQUIRED {
        schema.insert("required".to_owned(), Value::from(vec![VALUE_FIELD]));
    }
    schema
}

/// Reads a one-field form whose field, `value`, is a `T`.
#[doc(hidden)]
pub fn one_field_from_content<T: ElicitField>(
    content: &Map<String, Value>,
) -> Result<T, FormError> {
    read_field(content, VALUE_FIELD)
}

/// Reads the property `name` of an answer, with an error that names it.
#[doc(hidden)]
pub fn read_field<T: ElicitField>(
    content: &Map<String, Value>,
    name: &str,
) -> Result<T, FormError> {
    T::parse(content.get(name)).map_err(|why| why.in_field(name))
}

/// Whether `list` holds `wire`; usable in constants, to check a select's default.
#[doc(hidden)]
pub const fn contains(list: &[&str], wire: &str) -> bool {
    let mut index = 0;
    while index < list.len() {
        let candidate = list[index].as_bytes();
        let wire = wire.as_bytes();
        if candidate.len() == wire.len() {
            let mut byte = 0;
            while byte < wire.len() && candidate[byte] == wire[byte] {
                byte += 1;
            }
            if byte == wire.len() {
                return true;
            }
        }
        index += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An integer above `i64::MAX` reaches the reading where a signed field has a minimum
    /// of 0 and no maximum (the content check cannot tell it from a `u64` field): it is
    /// out of range there, not "not an integer"; a `u64` takes it.
    #[test]
    fn an_integer_above_i64_is_out_of_range_for_a_signed_field() {
        let wide = json!(1u64 << 63);
        let refused = <i64 as ElicitField>::parse(Some(&wide)).expect_err("above i64::MAX");
        assert_eq!(refused.reason(), "is out of range: 9223372036854775808");
        assert_eq!(<u64 as ElicitField>::parse(Some(&wide)), Ok(1u64 << 63));
        assert_eq!(<u32 as ElicitField>::parse(Some(&json!(7))), Ok(7));
        assert!(<u8 as ElicitField>::parse(Some(&json!(256))).is_err());
    }

    /// An `f32`'s bounds as its schema writes them: `f32::MAX` as JSON prints it passes
    /// the check and reads as `f32::MAX`; a number past it is refused by the check (and
    /// so asked again), not only when it is read.
    #[test]
    fn an_f32_takes_its_range_and_refuses_beyond_it_in_the_check() {
        let schema = one_field_schema::<f32>();
        let echoed = json!({ "value": f32::MAX });
        assert_eq!(echoed["value"].to_string(), "3.4028234663852886e+38");
        let printed: serde_json::Value =
            serde_json::from_str(r#"{"value": 3.4028235e38}"#).expect("JSON");
        for content in [&echoed, &printed, &json!({"value": -3.4028235e38})] {
            crate::engine::forms::elicit::check_content(&schema, content).expect("in range");
            let read = <f32 as ElicitField>::parse(content.get("value")).expect("an f32");
            assert_eq!(read.abs(), f32::MAX);
        }
        let beyond = json!({"value": 1e39});
        let refused =
            crate::engine::forms::elicit::check_content(&schema, &beyond).expect_err("beyond f32");
        assert!(
            refused.reason().contains("above the maximum 3.4028235e38"),
            "{refused}"
        );
    }
}
