//! Export over OTLP (HTTP, protobuf): the tracer and meter providers, the `tracing` layer
//! that feeds them the application's spans, and the HTTP client they send through.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use hyper::body::Bytes;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// The variable that turns export on for [`Telemetry::from_env`], as the OpenTelemetry
/// specification names it; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` does too.
pub const OTEL_EXPORTER_OTLP_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";

/// How long one export may take, connecting included.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer a collector's reply is read to: it says only whether it took the
/// batch.
const MAX_REPLY_BYTES: usize = 64 * 1024;
/// The name saga's spans and metrics are recorded under.
const SCOPE: &str = "saga-runtime";

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The exporter could not be built (an endpoint that is not a URL, say).
    #[error("the OTLP exporter could not be built: {0}")]
    Exporter(String),
    /// The HTTP client or its runtime could not be made.
    #[error("the OTLP exporter's HTTP client could not be made: {0}")]
    Client(String),
    /// A global `tracing` subscriber is installed already: add [`Telemetry::layer`] to it
    /// instead of installing.
    #[error(
        "a tracing subscriber is installed already: build with Telemetry::builder().build() \
         and add its layer() to that subscriber"
    )]
    SubscriberSet,
    /// Spans or metrics could not be flushed at shutdown.
    #[error("telemetry could not be flushed: {0}")]
    Flush(String),
}

/// OpenTelemetry export for a saga server: a tracer and a meter provider sending over OTLP
/// (HTTP, protobuf), which saga's spans and metrics are recorded to once it is built, and
/// the `tracing` layer that exports the application's own spans.
///
/// ```no_run
/// # #[tokio::main] async fn main() -> anyhow::Result<()> {
/// // Exports when OTEL_EXPORTER_OTLP_ENDPOINT is set (http://localhost:4318, say),
/// // and logs to stderr as RUST_LOG says either way.
/// let telemetry = saga_runtime::otel::Telemetry::from_env()?;
/// // … serve …
/// if let Some(telemetry) = telemetry {
///     telemetry.shutdown()?; // sends what is left
/// }
/// # Ok(()) }
/// ```
///
/// With a subscriber of your own, build without installing and add the layer:
///
/// ```no_run
/// use tracing_subscriber::layer::SubscriberExt as _;
/// use tracing_subscriber::util::SubscriberInitExt as _;
/// # fn main() -> anyhow::Result<()> {
/// let telemetry = saga_runtime::otel::Telemetry::builder()
///     .endpoint("http://localhost:4318")
///     .build()?;
/// tracing_subscriber::registry()
///     .with(tracing_subscriber::fmt::layer())
///     .with(telemetry.layer())
///     .init();
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Telemetry {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    /// Targets besides saga's whose spans and events [`Telemetry::layer`] exports.
    targets: std::sync::Arc<[String]>,
}

/// Builds a [`Telemetry`]: where to send, the service's name, what else to export, and
/// whether a client's sampling decision is followed.
#[derive(Debug, Default)]
#[must_use]
pub struct TelemetryBuilder {
    endpoint: Option<String>,
    service_name: Option<String>,
    targets: Vec<String>,
    trust_client_sampled: Option<bool>,
}

/// What a client's sampled flag (`traceparent`'s `-01`) decides: see
/// [`TelemetryBuilder::client_sampling`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ClientSampling {
    /// Nothing: a call whose parent is a client's is sampled by the server's own ratio,
    /// so that clients cannot make a server export every call by asking. The default.
    #[default]
    Ignore,
    /// The `parentbased_*` samplers follow it, as the specification describes them: for
    /// clients you trust.
    Follow,
}

/// The variable naming, comma-separated, the `tracing` targets besides saga's whose spans
/// and events (`INFO` and above) are exported: the application's own crates
/// (`my_server,my_tools`). See [`TelemetryBuilder::export_target`].
pub const SAGA_OTEL_EXPORT_TARGETS: &str = "SAGA_OTEL_EXPORT_TARGETS";

/// The variable that, set to `true`, makes a client's sampled flag decide whether its
/// call is sampled, as the specification's parent-based samplers do. See
/// [`TelemetryBuilder::trust_client_sampled`].
pub const SAGA_OTEL_TRUST_CLIENT_SAMPLED: &str = "SAGA_OTEL_TRUST_CLIENT_SAMPLED";

impl Telemetry {
    /// A builder: the endpoint and service name come from the standard variables
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`)
    /// unless set on it.
    pub fn builder() -> TelemetryBuilder {
        TelemetryBuilder::default()
    }

    /// Installs export as [`TelemetryBuilder::install`] does when
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set;
    /// otherwise installs only a log subscriber (stderr, filtered by `RUST_LOG`, `info` by
    /// default) and answers `None`.
    pub fn from_env() -> Result<Option<Telemetry>, TelemetryError> {
        let set = |name| std::env::var_os(name).is_some_and(|value| !value.is_empty());
        if set(OTEL_EXPORTER_OTLP_ENDPOINT) || set(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
            return Telemetry::builder().install().map(Some);
        }
        tracing_subscriber::registry()
            .with(log_layer())
            .try_init()
            .map_err(|_| TelemetryError::SubscriberSet)?;
        Ok(None)
    }

    /// The layer that exports the application's own spans and events, for a subscriber of
    /// the application's own: those of the targets named with
    /// [`TelemetryBuilder::export_target`] (or [`SAGA_OTEL_EXPORT_TARGETS`]), at `INFO`
    /// and above, whatever the subscriber's log filter says. A span made in a tool is a
    /// child of the call's span. No other crate's spans or events are exported (rmcp's
    /// name what a client sent: a tool's name, its `initialize` parameters); a layer of
    /// the application's own over [`Telemetry::tracer_provider`] exports anything else it
    /// chooses.
    ///
    /// saga's own spans (the MCP server spans, their rounds, model calls, store writes,
    /// task steps) do not need this layer: they are recorded to the telemetry's tracer
    /// provider directly, once it is built, which costs a fraction of a `tracing` span's
    /// way through a layer (BENCHMARKS.md). Their `tracing` spans serve the logs only.
    ///
    /// saga decides whether a call is sampled before it makes the call's span, as the
    /// telemetry's sampler would: an unsampled call makes no span, and this layer takes
    /// nothing made while it runs (the application's spans in its tool), so that it costs
    /// about what an untraced call costs.
    pub fn layer<S>(&self) -> impl tracing_subscriber::Layer<S> + 'static
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        // What each span costs counted (BENCHMARKS.md): no thread, source location or
        // busy/idle attributes, and no OpenTelemetry context entered at every poll of an
        // application's span (saga's own attach theirs: `super::span`).
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer.tracer(SCOPE))
            .with_threads(false)
            .with_location(false)
            // No `target` (the Rust module path) on every span: not the conventions', and
            // saga's spans say what they are by their names and attributes.
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_context_activation(false)
            .with_filter({
                // An unsampled request's work is quiet (`super::sampling`): this filter
                // takes none of it.
                let targets = std::sync::Arc::clone(&self.targets);
                tracing_subscriber::filter::DynFilterFn::new(|_, _| !super::sampling::quiet())
                    .with_callsite_filter(move |meta| {
                        if exported(meta, &targets) {
                            tracing::subscriber::Interest::sometimes()
                        } else {
                            tracing::subscriber::Interest::never()
                        }
                    })
            })
    }

    /// The tracer provider saga's spans are recorded to, for a layer of the application's
    /// own making (other options of `tracing_opentelemetry::layer()`, another filter).
    /// Here, a layer that exports every span of the application's `my_server` crate at any
    /// level:
    ///
    /// ```
    /// use opentelemetry::trace::TracerProvider as _;
    /// use tracing_subscriber::Layer as _;
    /// use tracing_subscriber::layer::SubscriberExt as _;
    /// # fn main() -> anyhow::Result<()> {
    /// let telemetry = saga_runtime::otel::Telemetry::builder()
    ///     .endpoint("http://127.0.0.1:4318")
    ///     .build()?;
    /// let mine = tracing_opentelemetry::layer()
    ///     .with_tracer(telemetry.tracer_provider().tracer("my_server"))
    ///     .with_filter(tracing_subscriber::filter::filter_fn(|meta| {
    ///         meta.is_span() && meta.target().starts_with("my_server")
    ///     }));
    /// let subscriber = tracing_subscriber::registry().with(mine);
    /// # let _ = subscriber;
    /// # Ok(()) }
    /// ```
    pub fn tracer_provider(&self) -> &SdkTracerProvider {
        &self.tracer
    }

    /// Sends what is left and stops exporting.
    pub fn shutdown(self) -> Result<(), TelemetryError> {
        let traces = self.tracer.shutdown();
        let metrics = self.meter.shutdown();
        traces.map_err(|error| TelemetryError::Flush(error.to_string()))?;
        metrics.map_err(|error| TelemetryError::Flush(error.to_string()))
    }

    /// Sends what has been recorded so far.
    pub fn flush(&self) -> Result<(), TelemetryError> {
        let traces = self.tracer.force_flush();
        let metrics = self.meter.force_flush();
        traces.map_err(|error| TelemetryError::Flush(error.to_string()))?;
        metrics.map_err(|error| TelemetryError::Flush(error.to_string()))
    }
}

impl TelemetryBuilder {
    /// Sends to `endpoint` (`http://collector:4318`): spans to its `/v1/traces`, metrics
    /// to its `/v1/metrics`, as `OTEL_EXPORTER_OTLP_ENDPOINT` would.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Names the service (`service.name`) where `OTEL_SERVICE_NAME` does not.
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// Also exports the spans and events, at `INFO` and above, of `target` and the
    /// modules under it (a crate's name, `my_server`, covers `my_server::tools`): the
    /// application's own spans, which become children of the call they run in. Only
    /// saga's are exported otherwise: a dependency's spans and events can quote what a
    /// client sent (rmcp's log a tool's name, an `initialize`'s parameters).
    /// [`SAGA_OTEL_EXPORT_TARGETS`] adds targets the same way.
    pub fn export_target(mut self, target: impl Into<String>) -> Self {
        self.targets.push(target.into());
        self
    }

    /// Whether a client's sampled flag (`traceparent`'s `-01`) decides that its call is
    /// sampled, as the specification's `parentbased_*` samplers decide. `false` by
    /// default: a call whose parent is a client's is sampled as a trace of the server's
    /// own (`OTEL_TRACES_SAMPLER`'s ratio, `traceidratio` or `parentbased_traceidratio`,
    /// or every call), so that clients cannot make a server export every call it serves
    /// by asking; the call's spans still join the client's trace. `true` for clients you
    /// trust (an agent of your own), or [`SAGA_OTEL_TRUST_CLIENT_SAMPLED`]`=true`. Spans
    /// whose parent is the server's own (a round in a call, a task's step) follow it
    /// either way.
    pub fn trust_client_sampled(mut self, trust: bool) -> Self {
        self.trust_client_sampled = Some(trust);
        self
    }

    /// Whether a client's sampled flag decides its call's sampling, by name:
    /// [`ClientSampling::Ignore`] (the default: the server's ratio decides) or
    /// [`ClientSampling::Follow`] (the `parentbased_*` samplers follow it). The same
    /// setting as [`TelemetryBuilder::trust_client_sampled`].
    ///
    /// ```
    /// use saga_runtime::otel::{ClientSampling, Telemetry};
    /// # fn main() -> anyhow::Result<()> {
    /// let telemetry = Telemetry::builder()
    ///     .endpoint("http://127.0.0.1:4318")
    ///     .client_sampling(ClientSampling::Ignore)
    ///     .build()?;
    /// # let _ = telemetry;
    /// # Ok(()) }
    /// ```
    pub fn client_sampling(self, sampling: ClientSampling) -> Self {
        self.trust_client_sampled(sampling == ClientSampling::Follow)
    }

    /// The providers, exporting in the background; nothing is installed (see
    /// [`Telemetry::layer`]). May be called outside any Tokio runtime: the exporter sends
    /// from a thread of its own.
    pub fn build(self) -> Result<Telemetry, TelemetryError> {
        let client = ExportClient::new()?;
        let endpoint = |path: &str| {
            self.endpoint
                .as_ref()
                .map(|base| format!("{}{path}", base.trim_end_matches('/')))
        };
        // Spans through saga's own encoder (`super::otlp`: what the SDK's exporter costs
        // per span is about what the rest of a span costs); metrics through the SDK's.
        let spans = super::otlp::Spans::new(
            std::sync::Arc::new(client.clone()),
            self.endpoint.as_deref(),
        )
        .map_err(TelemetryError::Exporter)?;
        let mut metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_http_client(client);
        if let Some(endpoint) = endpoint("/v1/metrics") {
            metrics = metrics.with_endpoint(endpoint);
        }
        let metrics = metrics
            .build()
            .map_err(|error| TelemetryError::Exporter(error.to_string()))?;
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name(
                self.service_name
                    .unwrap_or_else(|| env!("CARGO_PKG_NAME").to_owned()),
            );
        }
        let resource = resource.build();
        let mut tracer = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone());
        let trust = self.trust_client_sampled.unwrap_or_else(|| {
            std::env::var(SAGA_OTEL_TRUST_CLIENT_SAMPLED).is_ok_and(|value| value == "true")
        });
        tracer = tracer.with_sampler(super::sampling::install(operator_sampler(trust)));
        let tracer = tracer.build();
        // The first telemetry built records saga's spans (`super::span`), and from then on
        // saga decides sampling before it makes them (`super::sampling`).
        super::span::record_to(&tracer, SCOPE);
        super::sampling::deciding();
        let meter = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics)
            .with_resource(resource)
            .build();
        let scoped = opentelemetry::metrics::MeterProvider::meter(&meter, SCOPE);
        let _ = super::spans::OPERATION_DURATION.set(super::spans::operation_duration(&scoped));
        super::metrics::init(&scoped);
        let mut targets = self.targets;
        if let Ok(listed) = std::env::var(SAGA_OTEL_EXPORT_TARGETS) {
            targets.extend(
                listed
                    .split(',')
                    .map(str::trim)
                    .filter(|target| !target.is_empty())
                    .map(str::to_owned),
            );
        }
        Ok(Telemetry {
            tracer,
            meter,
            targets: targets.into(),
        })
    }

    /// [`TelemetryBuilder::build`], then installs a global `tracing` subscriber (logs on
    /// stderr filtered by `RUST_LOG`, `info` by default, and the spans [`Telemetry::layer`]
    /// exports) and the meter provider as OpenTelemetry's global one.
    pub fn install(self) -> Result<Telemetry, TelemetryError> {
        let telemetry = self.build()?;
        tracing_subscriber::registry()
            .with(log_layer())
            .with(telemetry.layer())
            .try_init()
            .map_err(|_| TelemetryError::SubscriberSet)?;
        opentelemetry::global::set_meter_provider(telemetry.meter.clone());
        Ok(telemetry)
    }
}

/// Logs on stderr (stdout is a stdio server's channel), as `RUST_LOG` says.
fn log_layer<S>() -> impl tracing_subscriber::Layer<S> + Send + Sync + 'static
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(filter)
}

/// The operator's sampler. Not trusting clients (the default), a client's parent is
/// sampled as a root of the server's would be: its flag does not override the operator's
/// ratio. The ratio keys on the trace id, so a task's steps (parented on its creation's
/// context) decide as it did. Trusting them, as the SDK reads `OTEL_TRACES_SAMPLER`: the
/// `parentbased_*` samplers (and none set) follow the client's flag, the others do not.
fn operator_sampler(trust: bool) -> super::sampling::Sampler {
    use opentelemetry_sdk::trace::Sampler;
    if !trust {
        return Box::new(
            Sampler::parent_based(root_sampler())
                .with_remote_parent_sampled(root_sampler())
                .with_remote_parent_not_sampled(root_sampler()),
        );
    }
    match std::env::var("OTEL_TRACES_SAMPLER").as_deref() {
        Ok("always_on" | "always_off" | "traceidratio") => Box::new(root_sampler()),
        _ => Box::new(Sampler::ParentBased(Box::new(root_sampler()))),
    }
}

/// The sampler of a trace the server begins, as `OTEL_TRACES_SAMPLER` and
/// `OTEL_TRACES_SAMPLER_ARG` name it (the `parentbased_` forms by their root): every trace
/// unless a ratio (a number from 0 to 1; 1 where it is not one) or `always_off` says
/// otherwise.
fn root_sampler() -> opentelemetry_sdk::trace::Sampler {
    use opentelemetry_sdk::trace::Sampler;
    let ratio = || {
        std::env::var("OTEL_TRACES_SAMPLER_ARG")
            .ok()
            .and_then(|ratio| ratio.trim().parse::<f64>().ok())
            .filter(|ratio| (0.0..=1.0).contains(ratio))
            .unwrap_or(1.0)
    };
    match std::env::var("OTEL_TRACES_SAMPLER").as_deref() {
        Ok("always_off" | "parentbased_always_off") => Sampler::AlwaysOff,
        Ok("traceidratio" | "parentbased_traceidratio") => Sampler::TraceIdRatioBased(ratio()),
        _ => Sampler::AlwaysOn,
    }
}

/// What [`Telemetry::layer`] exports: of `targets` (the application's own), spans and
/// events at `INFO` and above. Nothing of saga's: its spans are recorded to the SDK
/// directly (`super::span`; its `tracing` spans serve the logs, and would be exported
/// twice), and its log events name what a client sent (a malformed answer's error, a
/// panic's message: they stay in the log). Nothing of any other crate: rmcp's spans and
/// events quote a client's requests.
fn exported(meta: &tracing::Metadata<'_>, targets: &[String]) -> bool {
    let under = |target: &str| {
        meta.target()
            .strip_prefix(target)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    };
    !under("saga_runtime")
        && *meta.level() <= tracing::Level::INFO
        && targets.iter().any(|target| under(target))
}

/// The exporter's HTTP client: saga's own (hyper over rustls with ring), driven by a
/// runtime on a thread of its own, as OpenTelemetry's batch processors export from
/// threads of their own, outside any runtime of the application's.
#[derive(Debug, Clone)]
pub(super) struct ExportClient {
    client: crate::net::Client,
    runtime: tokio::runtime::Handle,
}

impl ExportClient {
    pub(super) fn new() -> Result<Self, TelemetryError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| TelemetryError::Client(error.to_string()))?;
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("saga-otel-export".into())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .map_err(|error| TelemetryError::Client(error.to_string()))?;
        // Its connections are spawned where its requests run: on that runtime.
        let client = crate::net::client(EXPORT_TIMEOUT).map_err(TelemetryError::Client)?;
        Ok(Self {
            client,
            runtime: handle,
        })
    }
}

type Sent = Result<http::Response<Bytes>, opentelemetry_http::HttpError>;

impl opentelemetry_http::HttpClient for ExportClient {
    // `async_trait`'s signature, written out: the trait is declared with it.
    fn send_bytes<'life0, 'async_trait>(
        &'life0 self,
        request: http::Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Sent> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        let client = self.client.clone();
        let sent = self.runtime.spawn(async move {
            let request = request.map(http_body_util::Full::new);
            let exchange = async {
                let response = client.request(request).await?;
                let (parts, body) = response.into_parts();
                let limited = http_body_util::Limited::new(body, MAX_REPLY_BYTES);
                let body = http_body_util::BodyExt::collect(limited).await?.to_bytes();
                Ok::<_, opentelemetry_http::HttpError>(http::Response::from_parts(parts, body))
            };
            tokio::time::timeout(EXPORT_TIMEOUT, exchange)
                .await
                .unwrap_or_else(|_| Err("the collector did not answer in time".into()))
        });
        Box::pin(async move {
            sent.await
                .map_err(|error| -> opentelemetry_http::HttpError { Box::new(error) })?
        })
    }
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::layer::SubscriberExt as _;

    /// What the layer takes is made, and only that: none of saga's `tracing` spans (its
    /// spans are recorded directly; these serve the logs), a dependency's span, saga's log
    /// events, and nothing at all of a quiet (unsampled) request's work; an application's
    /// target's span is.
    #[test]
    fn the_layer_makes_only_what_it_exports() {
        let telemetry = super::Telemetry::builder()
            .endpoint("http://127.0.0.1:9")
            .export_target("my_server")
            .build()
            .expect("telemetry");
        let subscriber = tracing_subscriber::registry().with(telemetry.layer());
        tracing::subscriber::with_default(subscriber, || {
            let request =
                tracing::debug_span!(target: "saga_runtime::serve::http::guard", "saga.request");
            assert!(request.is_disabled(), "the HTTP request's span");
            let other = tracing::info_span!(target: "rmcp::service", "serve_inner");
            assert!(other.is_disabled(), "a dependency's span");
            let round = tracing::debug_span!(target: "saga_runtime", "saga.transition");
            assert!(round.is_disabled(), "saga's round, recorded directly");
            let mine = tracing::info_span!(target: "my_server::tools", "lookup");
            assert!(!mine.is_disabled(), "the application's span");
            let noisy = tracing::debug_span!(target: "my_server::tools", "lookup");
            assert!(noisy.is_disabled(), "below INFO");
            super::super::sampling::quietly(true, || {
                // Made in the registry (a per-layer filter cannot disable a span for every
                // layer), but not in this layer.
                let mine = tracing::info_span!(target: "my_server::tools", "lookup");
                let otel = tracing_opentelemetry::OpenTelemetrySpanExt::context(&mine);
                assert!(
                    !opentelemetry::trace::TraceContextExt::span(&otel)
                        .span_context()
                        .is_valid(),
                    "a quiet request's span is not this layer's"
                );
            });
        });
    }
}
