//! An answer type's form: its schema as it is sent, its digest, and the check an answer
//! must pass, built once per type and shared by every round that asks it.

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{OnceLock, PoisonError, RwLock};

use rmcp::model::ElicitationSchema;
use serde_json::{Map, Value};

use crate::engine::forms::elicit::{ContentCheck, Elicit};
use crate::engine::identity::fnv::Fnv;

/// An answer type's form, built and checked once per type: a schema is a function of the
/// type, and building, converting and hashing it were a measurable part of every round
/// that asks (BENCHMARKS.md).
#[derive(Debug)]
pub(crate) struct Form {
    /// The schema as rmcp's typed form-mode schema; the error says why a hand-written
    /// `Elicit` impl's schema is not a form-mode one.
    pub(crate) typed: Result<ElicitationSchema, String>,
    /// The hash of the schema as it is sent, as JSON text: how the schema enters a round's
    /// digest.
    pub(crate) digest: u64,
    /// What an answer's content must pass, read from the schema as it is sent: for a
    /// form the tool states again from its saved state.
    pub(crate) check: ContentCheck,
    /// The same, read back from `schema_json`, as a form the token keeps was always
    /// checked: serde_json reads some floats' text one step off their value, so a number
    /// bound at the edge of `f64` precision could judge otherwise.
    pub(crate) kept_check: ContentCheck,
    /// The schema as JSON text, as it stands in a form's params (see
    /// [`Form::params_json`]).
    schema_json: String,
}

impl Form {
    /// The params of a form-mode request for this form, as JSON text: what a token keeps
    /// of a request it must be able to send again. Written around the schema's text,
    /// which is written once per type (writing the whole params each round was most of a
    /// hand-written tool's round that asks); the same bytes as serde writes, a test
    /// checks. `None` if the schema is not a form-mode one.
    pub(crate) fn params_json(&self, message: &str) -> Option<String> {
        // Empty exactly when the schema is not a form-mode one.
        if self.schema_json.is_empty() {
            return None;
        }
        let mut params = String::with_capacity(64 + message.len() + self.schema_json.len());
        params.push_str(r#"{"mode":"form","message":"#);
        params.push_str(&serde_json::to_string(message).ok()?);
        params.push_str(SCHEMA_FIELD);
        params.push_str(&self.schema_json);
        params.push('}');
        Some(params)
    }

    /// The form whose params, as [`Form::params_json`] writes them, are `params`, if this
    /// process has built it: its check is read already. Anything else (another layout, a
    /// schema no type here has) is `None`, and the caller reads the schema from `params`.
    pub(crate) fn of_params(params: &str) -> Option<&'static Form> {
        // A JSON string cannot hold the field's name with bare quotes, so the first match
        // follows the message.
        let (_, rest) = params.split_once(SCHEMA_FIELD)?;
        let schema_json = rest.strip_suffix('}')?;
        BY_SCHEMA
            .get()?
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(schema_json)
            .copied()
    }
}

const SCHEMA_FIELD: &str = r#","requestedSchema":"#;

/// Every form built so far, by its schema's JSON text.
static BY_SCHEMA: OnceLock<RwLock<HashMap<&'static str, &'static Form>>> = OnceLock::new();

/// `T`'s form. An answer to a form that the tool states again from its saved state is
/// checked against its `check` (the token keeps no schema).
///
/// Each answer type's form is built once and kept for the life of the process (one per
/// `Elicit` type in the program, so bounded): a `&'static` costs a round nothing to share.
pub(crate) fn cached_form<T: Elicit>() -> &'static Form {
    // Only the type's id and schema are `T`'s: the cache is compiled once for every form.
    cached_form_of(TypeId::of::<T>(), T::requested_schema)
}

fn cached_form_of(id: TypeId, requested_schema: fn() -> Map<String, Value>) -> &'static Form {
    type Table = HashMap<TypeId, &'static Form, BuildHasherDefault<TypeIdHasher>>;
    static BY_TYPE: OnceLock<RwLock<Table>> = OnceLock::new();
    let by_type = BY_TYPE.get_or_init(Default::default);
    let found = by_type
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
        .copied();
    if let Some(form) = found {
        return form;
    }
    // Built with no lock held: `requested_schema` is the tool author's code.
    let built = build_form(requested_schema());
    let mut by_type = by_type.write().unwrap_or_else(PoisonError::into_inner);
    let form: &'static Form = by_type.entry(id).or_insert_with(|| {
        let form: &'static Form = Box::leak(Box::new(built));
        // A schema that is not a form-mode one has no text: no params are written from it.
        if !form.schema_json.is_empty() {
            BY_SCHEMA
                .get_or_init(Default::default)
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(&form.schema_json, form);
        }
        form
    });
    form
}

fn build_form(requested: Map<String, Value>) -> Form {
    let typed = serde_json::from_value::<ElicitationSchema>(Value::Object(requested.clone()))
        .map(|mut schema| {
            // rmcp keeps the properties' wire order in `property_order`. Where it is the
            // map's own sorted order it says nothing, and each round that asks clones the
            // schema: two allocations per property.
            if schema
                .property_order
                .as_ref()
                .is_some_and(|order| order.iter().eq(schema.properties.keys()))
            {
                schema.property_order = None;
            }
            schema
        })
        .map_err(|error| format!("the requested schema is not a form-mode schema: {error}"));
    let sent = match typed.as_ref().map(serde_json::to_value) {
        Ok(Ok(Value::Object(sent))) => sent,
        _ => requested,
    };
    let schema_json = match &typed {
        Ok(schema) => serde_json::to_string(schema).unwrap_or_default(),
        Err(_) => String::new(),
    };
    Form {
        typed,
        digest: Fnv::of_json(&sorted(&sent)),
        check: ContentCheck::new(&sent),
        kept_check: serde_json::from_str::<Map<String, Value>>(&schema_json)
            .map(|kept| ContentCheck::new(&kept))
            .unwrap_or_default(),
        schema_json,
    }
}

/// `schema` with every object's keys sorted: the form's digest is of this, so that it does
/// not depend on the order the fields are sent in (declared order since serde_json's
/// `preserve_order`; sorted before), and a round sealed by an earlier build still matches.
fn sorted(schema: &Map<String, Value>) -> Value {
    let mut sorted = Value::Object(schema.clone());
    sorted.sort_all_objects();
    sorted
}

/// A `TypeId` is already a hash; hashing it again with SipHash was most of a lookup that
/// runs twice per round that asks.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Not how `TypeId` hashes itself today (one `write_u64`), but correct whatever it
        // writes.
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 ^= word;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod schema_tests {
    use serde_json::{Map, Value, json};

    use crate::engine::forms::elicit::{Elicit, FormError};
    use crate::engine::kinds::form::ask::{ElicitForm, elicit};
    use crate::engine::kinds::table::Asked;
    use crate::engine::round::requests::Request;

    /// A hand-written `Elicit` whose schema is not a form-mode one.
    struct NotAForm;

    impl Elicit for NotAForm {
        fn requested_schema() -> Map<String, Value> {
            json!({"type": "array"})
                .as_object()
                .cloned()
                .unwrap_or_default()
        }
        fn from_content(_: &Map<String, Value>) -> Result<Self, FormError> {
            Ok(NotAForm)
        }
    }

    /// A form of two constrained fields.
    struct Target;

    impl Elicit for Target {
        fn requested_schema() -> Map<String, Value> {
            json!({
                "type": "object",
                "properties": {
                    "env": {"type": "string", "enum": ["dev", "prod"], "title": "Env \"quoted\""},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 9}
                },
                "required": ["env"]
            })
            .as_object()
            .cloned()
            .unwrap_or_default()
        }
        fn from_content(_: &Map<String, Value>) -> Result<Self, FormError> {
            Ok(Target)
        }
    }

    fn form_of<T: Elicit>() -> &'static super::Form {
        super::cached_form::<T>()
    }

    fn serde_params<T: Elicit>(message: &str) -> String {
        let form = form_of::<T>();
        let params = rmcp::model::ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_owned(),
            requested_schema: form.typed.clone().expect("a form"),
        };
        serde_json::to_string(&params).expect("params serialize")
    }

    /// The params a token keeps are written around the schema's cached text, and are the
    /// very bytes serde writes.
    #[test]
    fn form_params_are_the_bytes_serde_writes() {
        for message in ["Target?", "say \"hi\"\n\tnow", "é ✓ \u{1}", ""] {
            assert_eq!(
                form_of::<String>().params_json(message).as_deref(),
                Some(serde_params::<String>(message).as_str())
            );
            assert_eq!(
                form_of::<Target>().params_json(message).as_deref(),
                Some(serde_params::<Target>(message).as_str())
            );
        }
        assert_eq!(form_of::<NotAForm>().params_json("x"), None);
    }

    /// How a kept form's answer was checked before forms were kept: against the schema
    /// read from the token's params.
    fn read_from_params(params: &str, content: &Value) -> Result<(), FormError> {
        let params: Value = serde_json::from_str(params).expect("params are JSON");
        let schema = params["requestedSchema"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        crate::engine::forms::elicit::check_content(&schema, content)
    }

    /// A number bound at the edge of `f64` precision, whose text serde_json reads back one
    /// step off.
    struct Edge;

    impl Elicit for Edge {
        fn requested_schema() -> Map<String, Value> {
            json!({
                "type": "object",
                "properties": {"x": {"type": "number", "maximum": 0.9999999999999999}}
            })
            .as_object()
            .cloned()
            .unwrap_or_default()
        }
        fn from_content(_: &Map<String, Value>) -> Result<Self, FormError> {
            Ok(Edge)
        }
    }

    /// A kept form's answer is judged as it was when the check was read from the
    /// token's params, even where reading the bound's text moves it.
    #[test]
    fn a_kept_forms_check_judges_as_the_schema_read_from_its_params() {
        let params = form_of::<Edge>().params_json("How much?").expect("a form");
        let found = super::Form::of_params(&params).expect("the form was built");
        for content in [
            json!({"x": 0.9999999999999999}),
            json!({"x": 0.5}),
            json!({"x": 1.5}),
            json!({"x": 1}),
        ] {
            assert_eq!(
                found.kept_check.check(&content),
                read_from_params(&params, &content),
                "{content}"
            );
        }
    }

    /// The kept schema leaves out rmcp's property order where it is the sorted order, and
    /// is sent exactly as the schema read with it.
    #[test]
    fn a_form_is_sent_as_its_schema_reads() {
        fn as_read<T: Elicit>() -> String {
            let read: rmcp::model::ElicitationSchema =
                serde_json::from_value(Value::Object(T::requested_schema())).expect("a form");
            serde_json::to_string(&read).expect("serializes")
        }
        fn as_kept<T: Elicit>() -> String {
            let kept = form_of::<T>().typed.as_ref().expect("a form");
            assert_eq!(kept.property_order, None);
            serde_json::to_string(kept).expect("serializes")
        }
        assert_eq!(as_kept::<Target>(), as_read::<Target>());
        assert_eq!(as_kept::<String>(), as_read::<String>());
    }

    /// A kept form's answer is checked with its type's check only when the params are
    /// exactly that type's; anything else is read from the params.
    #[test]
    fn kept_params_find_their_form_only_when_they_are_its_own() {
        let params = form_of::<Target>()
            .params_json("Deploy where?")
            .expect("a form");
        let found = super::Form::of_params(&params).expect("the form was built");
        assert!(std::ptr::eq(found, form_of::<Target>()));
        for content in [
            json!({"env": "prod"}),
            json!({"env": "qa"}),
            json!({"replicas": 3}),
        ] {
            assert_eq!(
                found.kept_check.check(&content),
                read_from_params(&params, &content),
                "{content}"
            );
        }
        let whole_request = format!(r#"{{"method":"elicitation/create","params":{params}}}"#);
        let other_schema = params.replace(r#""maximum":9"#, r#""maximum":8"#);
        let trailing = params.replace(r#""required""#, r#""x":1,"required""#);
        for params in [
            whole_request,
            other_schema,
            trailing,
            "{}".to_owned(),
            String::new(),
        ] {
            assert!(super::Form::of_params(&params).is_none(), "{params}");
        }
    }

    fn schema_of<T: Elicit>(form: ElicitForm<T>) -> Result<Value, String> {
        match Request::from(form).asked {
            Asked::Form(asked) => asked
                .form
                .typed
                .clone()
                .map(|schema| serde_json::to_value(schema).unwrap_or(Value::Null)),
            other => panic!("not an elicitation: {other:?}"),
        }
    }

    #[test]
    fn a_types_schema_is_typed_once_and_the_same_each_time() {
        let first = schema_of(elicit::<bool>("a?")).expect("bool is a form");
        let again = schema_of(elicit::<bool>("b?")).expect("bool is a form");
        assert_eq!(first, again);
        assert_eq!(first["properties"]["value"]["type"], "boolean");
        assert_eq!(
            first,
            Value::Object(<bool as Elicit>::requested_schema()),
            "the typed schema says what the type's schema says"
        );
    }

    #[test]
    fn a_schema_that_is_not_a_form_is_refused_every_time() {
        for _ in 0..2 {
            let error = schema_of(elicit::<NotAForm>("x?")).expect_err("not a form");
            assert!(error.contains("not a form-mode schema"), "{error}");
        }
    }
}
