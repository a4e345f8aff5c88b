//! The JSON Schema of a type's arguments, as a `#[saga_tool]`'s input schema and a
//! sampling tool's ([`SamplingTool::of`](crate::engine::SamplingTool::of)) are made.

use rmcp::model::JsonObject;

/// The input schema of a `#[saga_tool]`'s generated argument struct: JSON Schema
/// 2020-12, as rmcp's `schema_for_type` makes it (without its cache), its integer formats
/// the ones validators know (`integer_formats`). A tool's
/// description is made when the server is built, and the cache's lookup was compiled
/// once per tool. Only the schema's generation is `A`'s.
#[doc(hidden)]
pub fn args_schema<A: schemars::JsonSchema>() -> std::sync::Arc<JsonObject> {
    schema_object(
        schemars::generate::SchemaSettings::draft2020_12()
            .with_transform(super::integer_formats::IntegerFormats)
            .into_generator()
            .into_root_schema_for::<A>(),
    )
}

/// A root schema as a JSON object; a boolean schema (never a struct's) as the object
/// that means the same, `true` as `{}` and `false` as `{"not": {}}`.
fn schema_object(schema: schemars::Schema) -> std::sync::Arc<JsonObject> {
    // Serialized, as rmcp does, not converted: `Schema`'s `Serialize` puts `$schema`,
    // `title` and `description` first, and the order is kept (`preserve_order`).
    let object = match serde_json::to_value(schema).unwrap_or_default() {
        serde_json::Value::Object(object) => object,
        serde_json::Value::Bool(false) => {
            JsonObject::from_iter([("not".to_owned(), serde_json::json!({}))])
        }
        _ => JsonObject::new(),
    };
    std::sync::Arc::new(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Argument structs as `#[saga_tool]` generates them, of every kind of field.
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Plain {
        #[schemars(description = "Where to stop")]
        n: u32,
        name: String,
        note: Option<String>,
        tags: Vec<String>,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Mode {
        Fast,
        Slow { delay: u64 },
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        mode: Mode,
        modes: Vec<Mode>,
        extra: serde_json::Value,
        when: Option<Plain>,
    }

    #[derive(schemars::JsonSchema)]
    struct Empty {}

    /// The schema is rmcp's `schema_for_type`'s, byte for byte, for every kind of
    /// argument struct (definitions and references included), but for its integer
    /// formats.
    #[test]
    fn args_schema_is_rmcps_schema_for_type() {
        fn same<A: schemars::JsonSchema + 'static>() {
            let ours = serde_json::to_string(&*args_schema::<A>()).expect("writes");
            let mut rmcps = (*rmcp::handler::server::common::schema_for_type::<A>()).clone();
            super::super::integer_formats::rewrite(&mut rmcps);
            let rmcps = serde_json::to_string(&rmcps).expect("writes");
            assert_eq!(ours, rmcps);
        }
        same::<Plain>();
        same::<Nested>();
        same::<Empty>();
        same::<Mode>();
    }

    #[test]
    fn a_boolean_schema_is_the_object_that_means_the_same() {
        assert!(schema_object(schemars::Schema::from(true)).is_empty());
        assert_eq!(
            serde_json::Value::Object((*schema_object(schemars::Schema::from(false))).clone()),
            serde_json::json!({"not": {}})
        );
    }
}
