//! An OTLP/HTTP receiver: `POST /v1/traces` and `/v1/metrics` with protobuf bodies,
//! decoded with OpenTelemetry's own protobuf definitions (`opentelemetry-proto`), kept for
//! the test to read.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message as _;

/// A span as it arrived.
#[derive(Debug, Clone)]
pub struct Span {
    pub service: String,
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    pub name: String,
    /// OTLP's `SpanKind`: 1 internal, 2 server, 3 client.
    pub kind: i32,
    pub start: u64,
    pub attributes: BTreeMap<String, String>,
    /// Each attribute's OTLP type: `string`, `int`, `double`, `bool` or `array`.
    pub types: BTreeMap<String, &'static str>,
    /// `(trace id, span id)` of each link.
    pub links: Vec<(String, String)>,
    /// OTLP's status code: 0 unset, 1 ok, 2 error.
    pub status: i32,
    /// Its events: each one's name and attributes.
    pub events: Vec<(String, BTreeMap<String, String>)>,
}

impl Span {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }

    /// The OTLP type of attribute `key`, if it has it.
    pub fn type_of(&self, key: &str) -> Option<&'static str> {
        self.types.get(key).copied()
    }

    /// Whether any of its attributes or events (their names and attributes) holds `text`.
    pub fn carries(&self, text: &str) -> bool {
        self.attributes.values().any(|value| value.contains(text))
            || self.events.iter().any(|(name, attributes)| {
                name.contains(text) || attributes.values().any(|value| value.contains(text))
            })
    }
}

#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    /// Each trace export's `x-tenant` header, as it arrived (`None` without one).
    tenants: Vec<Option<String>>,
    metrics: Vec<String>,
    points: Vec<Metric>,
}

/// The receiver, listening on a loopback port until dropped.
pub struct Receiver {
    pub addr: SocketAddr,
    received: Arc<Mutex<Received>>,
    _server: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub async fn start() -> Self {
        let received = Arc::new(Mutex::new(Received::default()));
        let app = axum::Router::new()
            .route("/v1/traces", axum::routing::post(traces))
            .route("/v1/metrics", axum::routing::post(metrics))
            .with_state(received.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let addr = listener.local_addr().expect("an address");
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            addr,
            received,
            _server: server,
        }
    }

    /// What `OTEL_EXPORTER_OTLP_ENDPOINT` names.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The `x-tenant` header of each trace export received (the exporter's configured
    /// headers arrive).
    pub fn tenants(&self) -> Vec<Option<String>> {
        self.received.lock().expect("lock").tenants.clone()
    }

    pub fn spans(&self) -> Vec<Span> {
        self.received.lock().expect("lock").spans.clone()
    }

    /// Every metric received so far, each export's apart.
    pub fn metrics(&self) -> Vec<Metric> {
        self.received.lock().expect("lock").points.clone()
    }

    pub fn metric_names(&self) -> Vec<String> {
        self.received.lock().expect("lock").metrics.clone()
    }

    /// Waits (30 s at most) until a metric named `name` has been received.
    ///
    /// # Panics
    ///
    /// When it is not in time.
    pub async fn wait_for_metric(&self, name: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.metric_names().iter().any(|metric| metric == name) {
            assert!(
                Instant::now() < deadline,
                "{name}: not received in 30 s; received {:?}",
                self.metric_names()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The metrics received, once `done` holds for them (within 30 s).
    ///
    /// # Panics
    ///
    /// When it does not hold in time: the message lists what arrived.
    pub async fn wait_for_metrics(
        &self,
        what: &str,
        done: impl Fn(&[Metric]) -> bool,
    ) -> Vec<Metric> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let metrics = self.metrics();
            if done(&metrics) {
                return metrics;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not received in 30 s; received {:?}",
                self.metric_names()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The spans of `trace_id`, once `done` holds for them (within 30 s).
    ///
    /// # Panics
    ///
    /// When it does not hold in time: the message lists what arrived.
    pub async fn wait_for(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not in 30 s (the examples must be built with the feature: cargo build \
                 -p saga-workspace --features otel --examples); received {:#?}",
                spans
                    .iter()
                    .map(|s| (&s.name, &s.trace_id, &s.span_id, &s.parent_span_id))
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn traces(
    State(received): State<Arc<Mutex<Received>>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> StatusCode {
    if headers
        .get(axum::http::header::CONTENT_TYPE)
        .is_none_or(|kind| kind != "application/x-protobuf")
    {
        return StatusCode::UNSUPPORTED_MEDIA_TYPE;
    }
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return StatusCode::BAD_REQUEST;
    };
    let tenant = headers
        .get("x-tenant")
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let mut spans = Vec::new();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|resource| &resource.attributes)
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| kv.value.as_ref())
            .map(|value| text(value.value.as_ref()))
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                spans.push(Span {
                    service: service.clone(),
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    name: span.name,
                    kind: span.kind,
                    start: span.start_time_unix_nano,
                    types: span
                        .attributes
                        .iter()
                        .map(|kv| {
                            let value = kv.value.as_ref().and_then(|v| v.value.as_ref());
                            (kv.key.clone(), type_of(value))
                        })
                        .collect(),
                    attributes: span
                        .attributes
                        .into_iter()
                        .map(|kv| (kv.key, text(kv.value.and_then(|v| v.value).as_ref())))
                        .collect(),
                    links: span
                        .links
                        .into_iter()
                        .map(|link| (hex(&link.trace_id), hex(&link.span_id)))
                        .collect(),
                    status: span.status.map_or(0, |status| status.code),
                    events: span
                        .events
                        .into_iter()
                        .map(|event| {
                            let attributes = event
                                .attributes
                                .into_iter()
                                .map(|kv| (kv.key, text(kv.value.and_then(|v| v.value).as_ref())))
                                .collect();
                            (event.name, attributes)
                        })
                        .collect(),
                });
            }
        }
    }
    let mut received = received.lock().expect("lock");
    received.spans.extend(spans);
    received.tenants.push(tenant);
    StatusCode::OK
}

async fn metrics(State(received): State<Arc<Mutex<Received>>>, body: Bytes) -> StatusCode {
    let Ok(request) = ExportMetricsServiceRequest::decode(body) else {
        return StatusCode::BAD_REQUEST;
    };
    let metrics: Vec<Metric> = request
        .resource_metrics
        .into_iter()
        .flat_map(|resource| resource.scope_metrics)
        .flat_map(|scope| scope.metrics)
        .map(Metric::of)
        .collect();
    let mut received = received.lock().expect("lock");
    received
        .metrics
        .extend(metrics.iter().map(|metric| metric.name.clone()));
    received.points.extend(metrics);
    StatusCode::OK
}

/// A metric as received: its kind, unit, and its data points' attributes with their
/// types (the values of number attributes as text).
#[derive(Debug, Clone)]
pub struct Metric {
    pub name: String,
    /// `histogram`, `sum` (a counter), `gauge`, or `other`.
    pub kind: &'static str,
    pub unit: String,
    /// Each data point's attributes: key, its value as text, its type.
    pub points: Vec<Vec<(String, String, &'static str)>>,
}

impl Metric {
    fn of(metric: opentelemetry_proto::tonic::metrics::v1::Metric) -> Self {
        use opentelemetry_proto::tonic::metrics::v1::metric::Data;
        let attributes = |attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
            attributes
                .iter()
                .map(|kv| {
                    let value = kv.value.as_ref().and_then(|value| value.value.as_ref());
                    (kv.key.clone(), text(value), type_of(value))
                })
                .collect::<Vec<_>>()
        };
        let (kind, points) = match &metric.data {
            Some(Data::Histogram(h)) => (
                "histogram",
                h.data_points
                    .iter()
                    .map(|p| attributes(&p.attributes))
                    .collect(),
            ),
            Some(Data::Sum(sum)) => (
                "sum",
                sum.data_points
                    .iter()
                    .map(|p| attributes(&p.attributes))
                    .collect(),
            ),
            Some(Data::Gauge(gauge)) => (
                "gauge",
                gauge
                    .data_points
                    .iter()
                    .map(|p| attributes(&p.attributes))
                    .collect(),
            ),
            _ => ("other", Vec::new()),
        };
        Self {
            name: metric.name,
            kind,
            unit: metric.unit,
            points,
        }
    }
}

fn type_of(value: Option<&Any>) -> &'static str {
    match value {
        Some(Any::StringValue(_)) => "string",
        Some(Any::IntValue(_)) => "int",
        Some(Any::DoubleValue(_)) => "double",
        Some(Any::BoolValue(_)) => "bool",
        Some(Any::ArrayValue(_)) => "array",
        _ => "other",
    }
}

fn text(value: Option<&Any>) -> String {
    match value {
        Some(Any::StringValue(text)) => text.clone(),
        Some(Any::IntValue(n)) => n.to_string(),
        Some(Any::DoubleValue(n)) => n.to_string(),
        Some(Any::BoolValue(b)) => b.to_string(),
        Some(Any::ArrayValue(array)) => array
            .values
            .iter()
            .map(|value| text(value.value.as_ref()))
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
