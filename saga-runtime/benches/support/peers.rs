//! The two servers saga is measured against, shared by the `e2e` bench (in-process) and
//! the `http_load` bench (each in a process of its own): a hand-written rmcp MRTR server
//! running the same exchange, and the floor.

use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CreateMessageRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams, ErrorData,
    InputRequest, InputRequests, InputRequiredResult, ProtocolVersion, SamplingMessage,
    ServerCapabilities, ServerConfig,
};
use rmcp::model::{ElicitationSchema, MetaObject, RequestStateCodec, SealOptions};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use saga_runtime::serve::default_http_config;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::drive::{KEY, TOOL, TTL};

// ---------------------------------------------------------------------------------------
// The same exchange, written by hand on rmcp, state sealed with `RequestStateCodec`.
// ---------------------------------------------------------------------------------------

/// What the hand-written server keeps in its `requestState` (sealed as JSON).
#[derive(Serialize, Deserialize)]
#[serde(tag = "round")]
pub enum Round {
    /// `elicit-1` was asked.
    AskedTarget,
    /// `sample-2` was asked about `target`.
    AskedVerdict { target: String },
}

#[derive(Deserialize)]
pub struct DeployArguments {
    #[allow(dead_code)]
    initial_arg: String,
    #[allow(dead_code)]
    replicas: Option<u32>,
}

#[derive(Clone)]
pub struct HandServer {
    codec: Arc<RequestStateCodec>,
    target_schema: Arc<ElicitationSchema>,
    /// `_meta` of every result: MCP 2026-07-28 results SHOULD name the server (saga
    /// sends it too), built once.
    meta: Arc<MetaObject>,
}

impl HandServer {
    pub fn new() -> Self {
        let schema = serde_json::from_value(json!({
            "type": "object",
            "properties": {"target": {"type": "string"}},
            "required": ["target"]
        }))
        .unwrap();
        Self {
            codec: Arc::new(
                RequestStateCodec::new_with_keyring("k1", [("k1", KEY.to_vec())]).unwrap(),
            ),
            target_schema: Arc::new(schema),
            meta: Arc::new(MetaObject(
                json!({"io.modelcontextprotocol/serverInfo": {"name": "deploy-server", "version": "0.1.0"}})
                    .as_object()
                    .unwrap()
                    .clone(),
            )),
        }
    }

    fn ask_target(&self, context: &[u8]) -> Result<CallToolResponse, ErrorData> {
        let mut requests = InputRequests::new();
        requests.insert(
            "elicit-1".into(),
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "Please provide the deployment target:".into(),
                    requested_schema: (*self.target_schema).clone(),
                },
            )),
        );
        let state = self.seal(&Round::AskedTarget, context)?;
        let mut result = InputRequiredResult::new(Some(requests), Some(state));
        result.meta = Some((*self.meta).clone());
        Ok(result.into())
    }

    fn ask_verdict(&self, target: String, context: &[u8]) -> Result<CallToolResponse, ErrorData> {
        let mut requests = InputRequests::new();
        requests.insert(
            "sample-2".into(),
            InputRequest::CreateMessage(CreateMessageRequest::new(
                CreateMessageRequestParams::new(
                    vec![SamplingMessage::user_text(format!(
                        "Is deploying to '{target}' safe right now?"
                    ))],
                    100,
                ),
            )),
        );
        let state = self.seal(&Round::AskedVerdict { target }, context)?;
        let mut result = InputRequiredResult::new(Some(requests), Some(state));
        result.meta = Some((*self.meta).clone());
        Ok(result.into())
    }

    fn seal(&self, round: &Round, context: &[u8]) -> Result<String, ErrorData> {
        let options = SealOptions::new().associated_data(context).ttl(TTL);
        self.codec
            .seal_json_with(round, &options)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }
}

pub fn invalid_state() -> ErrorData {
    ErrorData::invalid_params("Invalid or expired requestState", None)
}

impl ServerHandler for HandServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2026_07_28;
        info
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let arguments = request.arguments.unwrap_or_default();
        // The token is bound to the tool, the method and the arguments (serde_json's map
        // is sorted, so this serialization is canonical).
        let canonical = serde_json::to_vec(&arguments).unwrap();
        let context: [u8; 32] = Sha256::new()
            .chain_update(TOOL)
            .chain_update([0])
            .chain_update("tools/call")
            .chain_update([0])
            .chain_update(&canonical)
            .finalize()
            .into();
        let _: DeployArguments =
            serde_json::from_value(Value::Object(arguments)).map_err(|error| {
                ErrorData::invalid_params(format!("invalid arguments: {error}"), None)
            })?;
        let Some(token) = request.request_state else {
            return self.ask_target(&context);
        };
        let round: Round = self
            .codec
            .open_json_with(&token, &context)
            .map_err(|_| invalid_state())?;
        let responses = request.input_responses.unwrap_or_default();
        match round {
            Round::AskedTarget => {
                let answer = responses.get("elicit-1");
                let target = answer
                    .filter(|answer| answer["action"] == "accept")
                    .and_then(|answer| answer["content"]["target"].as_str());
                match target {
                    Some(target) => self.ask_verdict(target.to_owned(), &context),
                    None => self.ask_target(&context),
                }
            }
            Round::AskedVerdict { target } => {
                let verdict = responses.get("sample-2").and_then(|answer| {
                    serde_json::from_value::<CreateMessageResult>(answer.clone()).ok()
                });
                let Some(verdict) = verdict else {
                    return self.ask_verdict(target, &context);
                };
                let text = verdict
                    .message
                    .content
                    .first()
                    .and_then(|content| content.as_text())
                    .map(|text| text.text.as_str())
                    .unwrap_or_default();
                let outcome = if text.starts_with("Yes") {
                    format!("Deployment to {target} initiated successfully based on confirmation.")
                } else {
                    "Deployment postponed.".into()
                };
                let mut result = CallToolResult::success(vec![ContentBlock::text(outcome)]);
                result.meta = Some((*self.meta).clone());
                Ok(result.into())
            }
        }
    }
}

pub fn hand_router() -> axum::Router {
    let server = HandServer::new();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        default_http_config(),
    );
    axum::Router::new().nest_service("/mcp", service)
}

// ---------------------------------------------------------------------------------------
// The floor: HTTP, a JSON parse of each body, canned answers.
// ---------------------------------------------------------------------------------------

/// The results saga gave for each round, as JSON text, answered by the floor.
pub struct Canned {
    pub rounds: [String; 3],
}

impl Canned {
    /// The response to the request `body`: its round's result, under its `id`.
    pub fn answer(&self, body: &[u8]) -> Vec<u8> {
        let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let params = &request["params"];
        let round = match (
            params.get("requestState"),
            params["inputResponses"].get("elicit-1"),
        ) {
            (None, _) => 0,
            (Some(_), Some(_)) => 1,
            (Some(_), None) => 2,
        };
        let id = serde_json::to_string(&request["id"]).unwrap_or_default();
        let result = &self.rounds[round];
        let mut response = Vec::with_capacity(40 + id.len() + result.len());
        response.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        response.extend_from_slice(id.as_bytes());
        response.extend_from_slice(br#","result":"#);
        response.extend_from_slice(result.as_bytes());
        response.push(b'}');
        response
    }
}

pub async fn serve_floor(listener: tokio::net::TcpListener, canned: Arc<Canned>) {
    use http_body_util::{BodyExt as _, Full};
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let canned = canned.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(
                move |request: hyper::Request<hyper::body::Incoming>| {
                    let canned = canned.clone();
                    async move {
                        let body = request.into_body().collect().await?.to_bytes();
                        let response = hyper::Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(hyper::body::Bytes::from(canned.answer(&body))))
                            .unwrap_or_default();
                        Ok::<_, hyper::Error>(response)
                    }
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}
