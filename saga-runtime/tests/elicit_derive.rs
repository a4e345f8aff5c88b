//! `#[derive(Elicit)]`: the schemas it generates, how answers are read, and agreement
//! with `check_content`, the runtime's validator.

use saga_runtime::__support::check_content;
use saga_runtime::engine::ElicitEnum;
use saga_runtime::prelude::*;
use serde_json::{Map, Value, json};

/// The deployment environment.
#[derive(Debug, PartialEq, Eq, Elicit, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Environment {
    Production,
    StagingArea,
    #[serde(rename = "dev")]
    Development,
}

#[derive(Debug, PartialEq, Eq, Elicit, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
enum Feature {
    /// Logging
    LogShipping,
    /// Metrics
    #[elicit(title = "Metrics export")]
    Metrics,
    Tracing,
}

/// Everything a form field can be.
#[derive(Debug, PartialEq, Elicit, Serialize, Deserialize)]
struct Deploy {
    /// The service to deploy.
    #[elicit(title = "Service", min_length = 2, max_length = 40, default = "api")]
    service: String,
    /// Who to notify.
    ///
    /// One address.
    #[elicit(format = "email")]
    #[serde(rename = "notifyEmail")]
    notify: String,
    #[elicit(format = "date")]
    on: Option<String>,
    #[elicit(default = true)]
    dry_run: bool,
    #[elicit(min = 1, max = 20, default = 3)]
    replicas: u8,
    offset: i64,
    #[elicit(min = -1.5, max = 100)]
    ratio: f64,
    small: Option<f32>,
    #[elicit(default = "staging_area")]
    environment: Environment,
    #[elicit(min_items = 1, max_items = 2, default = ["METRICS"])]
    features: Vec<Feature>,
    maybe_env: Option<Environment>,
    #[elicit(description = "Overrides the doc comment.")]
    /// Not sent.
    r#type: Option<u64>,
}

fn map(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

fn valid() -> Value {
    json!({
        "service": "api",
        "notifyEmail": "ops@example.com",
        "dry_run": false,
        "replicas": 3,
        "offset": -7,
        "ratio": 0.5,
        "environment": "dev",
        "features": ["LOG-SHIPPING", "METRICS"],
    })
}

#[test]
fn struct_schema_is_exact() {
    let expected = json!({
        "type": "object",
        "properties": {
            "service": {
                "type": "string", "title": "Service", "description": "The service to deploy.",
                "minLength": 2, "maxLength": 40, "default": "api"
            },
            "notifyEmail": {
                "type": "string", "description": "Who to notify.\n\nOne address.", "format": "email"
            },
            "on": {"type": "string", "format": "date"},
            "dry_run": {"type": "boolean", "default": true},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 20, "default": 3},
            "offset": {"type": "integer"},
            "ratio": {"type": "number", "minimum": -1.5, "maximum": 100},
            // An `f32`: its range, so that an answer beyond it is asked again.
            "small": {"type": "number", "minimum": -3.4028235e38, "maximum": 3.4028235e38},
            "environment": {
                "type": "string", "enum": ["production", "staging_area", "dev"],
                "default": "staging_area"
            },
            "features": {
                "type": "array",
                "items": {"anyOf": [
                    {"const": "LOG-SHIPPING", "title": "Logging"},
                    {"const": "METRICS", "title": "Metrics export"},
                    {"const": "TRACING", "title": "TRACING"},
                ]},
                "minItems": 1, "maxItems": 2, "default": ["METRICS"]
            },
            "maybe_env": {"type": "string", "enum": ["production", "staging_area", "dev"]},
            "type": {"type": "integer", "minimum": 0, "description": "Overrides the doc comment."},
        },
        "required": [
            "service", "notifyEmail", "dry_run", "replicas", "offset", "ratio",
            "environment", "features"
        ],
    });
    assert_eq!(Value::Object(Deploy::requested_schema()), expected);
}

#[test]
fn integer_types_carry_their_range() {
    #[derive(Elicit)]
    #[allow(dead_code)]
    struct Ints {
        a: i8,
        b: u16,
        c: i32,
        d: usize,
        e: isize,
    }
    let schema = Value::Object(Ints::requested_schema());
    assert_eq!(
        schema["properties"]["a"],
        json!({"type": "integer", "minimum": -128, "maximum": 127})
    );
    assert_eq!(
        schema["properties"]["b"],
        json!({"type": "integer", "minimum": 0, "maximum": 65535})
    );
    assert_eq!(
        schema["properties"]["d"],
        json!({"type": "integer", "minimum": 0})
    );
    assert_eq!(schema["properties"]["e"], json!({"type": "integer"}));
    assert!(
        check_content(
            &Ints::requested_schema(),
            &json!({"a": 1, "b": 2, "c": 3, "d": 4, "e": -5})
        )
        .is_ok()
    );
    assert!(
        check_content(
            &Ints::requested_schema(),
            &json!({"a": 128, "b": 2, "c": 3, "d": 4, "e": 5})
        )
        .is_err()
    );
    assert!(
        check_content(
            &Ints::requested_schema(),
            &json!({"a": 1, "b": -2, "c": 3, "d": 4, "e": 5})
        )
        .is_err()
    );
}

#[test]
fn from_content_round_trips() {
    let deploy = Deploy::from_content(&map(valid())).unwrap();
    assert_eq!(
        deploy,
        Deploy {
            service: "api".into(),
            notify: "ops@example.com".into(),
            on: None,
            dry_run: false,
            replicas: 3,
            offset: -7,
            ratio: 0.5,
            small: None,
            environment: Environment::Development,
            features: vec![Feature::LogShipping, Feature::Metrics],
            maybe_env: None,
            r#type: None,
        }
    );

    let mut full = valid();
    full["on"] = json!("2026-07-28");
    full["small"] = json!(2.5);
    full["maybe_env"] = json!("production");
    full["type"] = json!(12);
    full["replicas"] = json!(4.0);
    let deploy = Deploy::from_content(&map(full)).unwrap();
    assert_eq!(deploy.on.as_deref(), Some("2026-07-28"));
    assert_eq!(deploy.small, Some(2.5));
    assert_eq!(deploy.maybe_env, Some(Environment::Production));
    assert_eq!(deploy.r#type, Some(12));
    assert_eq!(deploy.replicas, 4);

    // null is "not given" for an Option field.
    let mut nulls = valid();
    nulls["on"] = Value::Null;
    assert_eq!(Deploy::from_content(&map(nulls)).unwrap().on, None);
}

#[test]
fn from_content_errors_name_the_field() {
    let error = |edit: &dyn Fn(&mut Value)| {
        let mut content = valid();
        edit(&mut content);
        let error = Deploy::from_content(&map(content)).unwrap_err();
        // The typed error names the field apart from the reason; its text is both.
        let field = error
            .field()
            .expect("a derived form's error names its field");
        assert_eq!(error.to_string(), format!("`{field}` {}", error.reason()));
        error.to_string()
    };
    assert_eq!(
        error(&|c| c["service"] = json!(5)),
        "`service` is not a string"
    );
    assert_eq!(
        error(&|c| {
            c.as_object_mut().unwrap().remove("notifyEmail");
        }),
        "`notifyEmail` is missing"
    );
    assert_eq!(
        error(&|c| c["dry_run"] = json!("no")),
        "`dry_run` is not a boolean"
    );
    assert_eq!(
        error(&|c| c["replicas"] = json!(300)),
        "`replicas` is out of range: 300"
    );
    assert_eq!(
        error(&|c| c["offset"] = json!(1.5)),
        "`offset` is not an integer"
    );
    assert_eq!(
        error(&|c| c["ratio"] = json!("x")),
        "`ratio` is not a number"
    );
    assert_eq!(
        error(&|c| c["environment"] = json!("staging")),
        "`environment` is not one of [\"production\", \"staging_area\", \"dev\"]"
    );
    assert_eq!(
        error(&|c| c["features"] = json!(["Metrics"])),
        "`features` has an item not in [\"LOG-SHIPPING\", \"METRICS\", \"TRACING\"]"
    );
    assert_eq!(
        error(&|c| c["features"] = json!("METRICS")),
        "`features` is not an array"
    );
    assert_eq!(
        error(&|c| c["maybe_env"] = json!(3)),
        "`maybe_env` is not a string"
    );
}

#[test]
fn enum_wire_values_honour_serde() {
    assert_eq!(
        Environment::WIRE_NAMES,
        ["production", "staging_area", "dev"]
    );
    assert!(Environment::TITLES.is_empty());
    assert_eq!(Feature::TITLES, ["Logging", "Metrics export", "TRACING"]);
    assert_eq!(Environment::StagingArea.to_wire(), "staging_area");
    assert_eq!(
        Environment::from_wire("dev"),
        Some(Environment::Development)
    );
    assert_eq!(Environment::from_wire("Development"), None);
    // The same wire values serde uses.
    for variant in [
        Environment::Production,
        Environment::StagingArea,
        Environment::Development,
    ] {
        assert_eq!(
            serde_json::to_value(&variant).unwrap(),
            json!(variant.to_wire())
        );
    }
    for variant in [Feature::LogShipping, Feature::Metrics, Feature::Tracing] {
        assert_eq!(
            serde_json::to_value(&variant).unwrap(),
            json!(variant.to_wire())
        );
    }
}

#[test]
fn an_enum_is_a_one_field_form() {
    assert_eq!(
        Value::Object(Environment::requested_schema()),
        json!({
            "type": "object",
            "properties": {"value": {"type": "string", "enum": ["production", "staging_area", "dev"]}},
            "required": ["value"],
        })
    );
    assert_eq!(
        Value::Object(Feature::requested_schema())["properties"]["value"],
        json!({"type": "string", "oneOf": [
            {"const": "LOG-SHIPPING", "title": "Logging"},
            {"const": "METRICS", "title": "Metrics export"},
            {"const": "TRACING", "title": "TRACING"},
        ]})
    );
    assert_eq!(
        Environment::from_content(&map(json!({"value": "staging_area"}))).unwrap(),
        Environment::StagingArea
    );
    assert_eq!(
        Environment::from_content(&map(json!({})))
            .unwrap_err()
            .to_string(),
        "`value` is missing"
    );
    let schema = Feature::requested_schema();
    assert!(check_content(&schema, &json!({"value": "METRICS"})).is_ok());
    assert!(check_content(&schema, &json!({"value": "Metrics"})).is_err());
}

#[test]
fn check_content_agrees_with_the_schema() {
    let schema = Deploy::requested_schema();
    assert!(check_content(&schema, &valid()).is_ok());
    let mut full = valid();
    full["on"] = json!("2026-07-28");
    full["maybe_env"] = json!("dev");
    full["type"] = json!(0);
    assert!(check_content(&schema, &full).is_ok());

    let invalid: [(&str, Value); 14] = [
        ("service", json!("a")),
        ("service", json!("x".repeat(41))),
        ("notifyEmail", json!("not an email")),
        ("on", json!("28/07/2026")),
        ("dry_run", json!("yes")),
        ("replicas", json!(0)),
        ("replicas", json!(21)),
        ("offset", json!(0.5)),
        ("ratio", json!(-2)),
        ("environment", json!("Production")),
        ("features", json!([])),
        ("features", json!(["METRICS", "TRACING", "LOG-SHIPPING"])),
        ("features", json!(["metrics"])),
        ("type", json!(-1)),
    ];
    for (field, value) in invalid {
        let mut content = valid();
        content[field] = value.clone();
        assert!(
            check_content(&schema, &content).is_err(),
            "{field} = {value} passed check_content"
        );
    }
    let mut missing = valid();
    missing.as_object_mut().unwrap().remove("environment");
    assert!(check_content(&schema, &missing).is_err());
    // Everything check_content accepts, from_content reads.
    assert!(Deploy::from_content(&map(full)).is_ok());
}

#[test]
fn an_empty_struct_is_an_empty_form() {
    #[derive(Elicit)]
    struct Nothing {}
    assert_eq!(
        Value::Object(Nothing::requested_schema()),
        json!({"type": "object", "properties": {}})
    );
    assert!(Nothing::from_content(&Map::new()).is_ok());
}

/// A hand-written `Elicit` impl builds its reasons as it likes: a `String` reason passes
/// through `?`, a field is named with `in_field`, and the text is the one a derived form
/// would give.
#[test]
fn a_hand_written_form_returns_typed_errors() {
    struct Minutes(u32);

    fn reason_of(value: &Value) -> Result<u32, String> {
        let minutes = value.as_u64().ok_or("is not a whole number")?;
        u32::try_from(minutes).map_err(|_| format!("is above {}", u32::MAX))
    }

    impl Elicit for Minutes {
        fn requested_schema() -> serde_json::Map<String, Value> {
            map(json!({"type": "object", "properties": {"m": {"type": "integer"}}}))
        }
        fn from_content(content: &serde_json::Map<String, Value>) -> Result<Self, FormError> {
            let value = content.get("m").ok_or("has no `m`")?;
            let minutes = reason_of(value).map_err(|why| FormError::new(why).in_field("m"))?;
            // A `String` reason, as the docs say: through `?`, or with `.into()`.
            weekday_minutes(minutes)?;
            if minutes == 0 {
                return Err(format!("asks for {minutes} minutes").into());
            }
            Ok(Minutes(minutes))
        }
    }

    fn weekday_minutes(minutes: u32) -> Result<(), String> {
        if minutes > 24 * 60 {
            return Err(format!("{minutes} minutes is more than a day"));
        }
        Ok(())
    }

    assert_eq!(Minutes::from_content(&map(json!({"m": 7}))).unwrap().0, 7);
    let missing = Minutes::from_content(&map(json!({}))).err().unwrap();
    assert_eq!((missing.field(), missing.reason()), (None, "has no `m`"));
    let wrong = Minutes::from_content(&map(json!({"m": "x"})))
        .err()
        .unwrap();
    assert_eq!(wrong.to_string(), "`m` is not a whole number");
    assert_eq!(wrong.field(), Some("m"));
    let long = Minutes::from_content(&map(json!({"m": 2000})))
        .err()
        .unwrap();
    assert_eq!(
        (long.field(), long.to_string().as_str()),
        (None, "2000 minutes is more than a day")
    );
    let zero = Minutes::from_content(&map(json!({"m": 0}))).err().unwrap();
    assert_eq!(zero.reason(), "asks for 0 minutes");
}
