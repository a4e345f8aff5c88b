//! The deploy saga with metrics for operators: Prometheus text on `/metrics`, beside the
//! MCP endpoint on `/mcp`. saga reports through the `metrics` facade
//! (`saga_runtime::metrics` lists every name and label); this example installs
//! `metrics-exporter-prometheus` as the recorder.
//!
//! ```text
//! cargo run -p saga-workspace --example metrics                 # MCP on 127.0.0.1:8080/mcp, metrics on /metrics
//! curl http://127.0.0.1:8080/metrics
//! ```
//!
//! `/metrics` answers the hosts `/mcp` answers (a page that rebinds its name to this
//! address is refused) and holds one of a bounded number of places, as every route given
//! to `.routes(..)` does. It is not authenticated: it tells request counts, refusals and
//! timings, so in production serve it where only operators reach (a listener on a private
//! interface, or behind the same authentication as your other operator pages).

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use saga_examples::deploy;
use saga_runtime::prelude::*;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    // Histograms as histograms (buckets add up across replicas; the exporter's default
    // summaries do not), with saga's bucket bounds.
    let mut prometheus = PrometheusBuilder::new();
    for (name, bounds) in saga_runtime::metrics::BUCKETS {
        prometheus =
            prometheus.set_buckets_for_metric(Matcher::Full((*name).to_owned()), bounds)?;
    }
    let prometheus = prometheus.install_recorder()?;
    let metrics = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let prometheus = prometheus.clone();
            async move { prometheus.render() }
        }),
    );
    let addr = std::env::args()
        .skip_while(|arg| arg != "--http")
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    SagaServer::builder()
        .info("deploy-server", env!("CARGO_PKG_VERSION"))
        .keys(saga_examples::cli::keys()?)
        .tool(deploy::complex_tool)
        .routes(metrics)
        .build()?
        .serve_http(addr)
        .await?;
    Ok(())
}
