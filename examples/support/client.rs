//! A scripted MCP client on rmcp: it answers elicitations, sampling and roots requests
//! from a script instead of a person and an LLM, and connects over Streamable HTTP or to
//! a child process over stdio using MCP 2026-07-28 (`server/discover`, no `initialize`).

#![allow(deprecated)] // sampling and roots: deprecated in 2026-07-28, still served

use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, InputRequest,
    InputRequests, InputResponses, ListRootsResult, ProtocolVersion, Root, SamplingMessage,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData};
use serde_json::Value;

type ElicitFn = dyn Fn(&ElicitRequestParams) -> ElicitResult + Send + Sync;
type SampleFn = dyn Fn(&CreateMessageRequestParams) -> CreateMessageResult + Send + Sync;

/// A client whose answers come from closures.
#[derive(Clone)]
pub struct ScriptedClient {
    elicit: Arc<ElicitFn>,
    sample: Arc<SampleFn>,
    roots: Vec<Root>,
    capabilities: ClientCapabilities,
}

impl std::fmt::Debug for ScriptedClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedClient")
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl ScriptedClient {
    /// A client declaring elicitation, sampling and roots, answering with the closures.
    pub fn new(
        elicit: impl Fn(&ElicitRequestParams) -> ElicitResult + Send + Sync + 'static,
        sample: impl Fn(&CreateMessageRequestParams) -> CreateMessageResult + Send + Sync + 'static,
    ) -> Self {
        Self {
            elicit: Arc::new(elicit),
            sample: Arc::new(sample),
            roots: vec![Root::new("file:///workspace")],
            capabilities: ClientCapabilities::builder()
                .enable_elicitation()
                .enable_sampling()
                .enable_roots()
                .build(),
        }
    }

    /// The answers of the seed's deploy conversation: target `production`, and an LLM
    /// that says `Yes, all systems are green.`
    pub fn deploy() -> Self {
        Self::new(
            |_| accept(serde_json::json!({"target": "production"})),
            |_| llm_says("Yes, all systems are green."),
        )
    }

    /// Replaces the declared capabilities.
    pub fn with_capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Answers every request of a round, as an MRTR client does before retrying.
    pub fn fulfil(&self, requests: &InputRequests) -> InputResponses {
        requests
            .iter()
            .map(|(key, request)| (key.clone(), self.answer(request)))
            .collect()
    }

    fn answer(&self, request: &InputRequest) -> Value {
        let answer = match request {
            InputRequest::Elicitation(request) => {
                serde_json::to_value((self.elicit)(&request.params))
            }
            InputRequest::CreateMessage(request) => {
                serde_json::to_value((self.sample)(&request.params))
            }
            InputRequest::ListRoots(_) => {
                serde_json::to_value(ListRootsResult::new(self.roots.clone()))
            }
            _ => Ok(Value::Null),
        };
        answer.unwrap_or(Value::Null)
    }

    /// Connects to a Streamable HTTP endpoint with `server/discover`.
    pub async fn connect_http(self, url: &str) -> anyhow::Result<RunningService<RoleClient, Self>> {
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        Ok(self.serve_with_lifecycle(transport, discover()).await?)
    }

    /// Connects to a Streamable HTTP endpoint as a 2025-11-25 client: `initialize`, a
    /// session, and the server's requests answered by this client's handlers.
    pub async fn connect_http_session(
        self,
        url: &str,
    ) -> anyhow::Result<RunningService<RoleClient, Self>> {
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        Ok(self
            .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await?)
    }

    /// Starts `command` and talks to it over stdio as a 2025-11-25 client.
    pub async fn connect_stdio_session(
        self,
        command: tokio::process::Command,
    ) -> anyhow::Result<RunningService<RoleClient, Self>> {
        let transport = TokioChildProcess::new(command)?;
        Ok(self
            .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await?)
    }

    /// Starts `command` and talks to it over stdio with `server/discover`.
    pub async fn connect_stdio(
        self,
        command: tokio::process::Command,
    ) -> anyhow::Result<RunningService<RoleClient, Self>> {
        let transport = TokioChildProcess::new(command)?;
        Ok(self.serve_with_lifecycle(transport, discover()).await?)
    }
}

fn discover() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// An elicitation answer accepting `content`.
pub fn accept(content: Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(content)
}

/// A sampling answer with `text` from a scripted model.
pub fn llm_says(text: &str) -> CreateMessageResult {
    CreateMessageResult::new(
        SamplingMessage::assistant_text(text),
        "client-side-llm-v2".into(),
    )
    .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN)
}

impl ClientHandler for ScriptedClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.capabilities.clone(),
            Implementation::new("saga-scripted-client", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok((self.elicit)(&request))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Ok((self.sample)(&params))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(self.roots.clone()))
    }
}
