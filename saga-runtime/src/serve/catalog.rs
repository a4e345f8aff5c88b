//! Prompts and resources backed by sagas: their listings, and `prompts/get` and
//! `resources/read` run through the same one-transition engine as tools. A prompt's or
//! resource's saga returns [`Prompt`] or [`Contents`], which travel as structured content
//! and are unpacked here into the method's own result.
//!
//! [`Prompt`]: crate::engine::Prompt
//! [`Contents`]: crate::engine::Contents

use futures::FutureExt as _;
use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, CallToolResponse, CallToolResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, JsonObject, ListPromptsRequestMethod, ListPromptsResult,
    ListResourceTemplatesRequestMethod, ListResourceTemplatesResult, ListResourcesRequestMethod,
    ListResourcesResult, Prompt, PromptArgument, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::tools::SagaTools;
use crate::engine::{Call, SagaContext};

/// A prompt's listing from its saga's description: the arguments are the input schema's
/// properties.
pub(crate) fn prompt_of(tool: &Tool) -> Prompt {
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let arguments: Vec<PromptArgument> = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, schema)| {
                    let mut argument = PromptArgument::new(name.clone());
                    argument.description = schema
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    argument.required = Some(required.contains(&name.as_str()));
                    argument
                })
                .collect()
        })
        .unwrap_or_default();
    let mut prompt = Prompt::new(
        tool.name.to_string(),
        tool.description.as_deref(),
        (!arguments.is_empty()).then_some(arguments),
    );
    prompt.title = tool.title.clone();
    prompt
}

pub(crate) fn resource_of(uri: String, tool: &Tool) -> Resource {
    let mut resource = Resource::new(uri, tool.name.to_string());
    resource.title = tool.title.clone();
    resource.description = tool.description.as_deref().map(str::to_owned);
    resource
}

pub(crate) fn template_of(uri_template: String, tool: &Tool) -> ResourceTemplate {
    let mut template = ResourceTemplate::new(uri_template, tool.name.to_string());
    template.title = tool.title.clone();
    template.description = tool.description.as_deref().map(str::to_owned);
    template
}

impl SagaTools {
    /// Whether any prompt is registered.
    pub fn has_prompts(&self) -> bool {
        !self.inner.prompts.is_empty()
    }

    /// Whether any resource or resource template is registered.
    pub fn has_resources(&self) -> bool {
        !self.inner.resources.is_empty() || !self.inner.templates.is_empty()
    }

    /// The answer to `prompts/list`: [`SagaTools::list_prompts`], or, as rmcp's own
    /// handlers answer since 3.10, method not found on a server that advertises no prompts.
    pub(crate) fn prompts_listed(&self) -> Result<ListPromptsResult, ErrorData> {
        if !self.has_prompts() {
            return Err(ErrorData::method_not_found::<ListPromptsRequestMethod>());
        }
        Ok(self.list_prompts())
    }

    /// The answer to `resources/list`, as [`SagaTools::prompts_listed`] answers its own.
    pub(crate) fn resources_listed(&self) -> Result<ListResourcesResult, ErrorData> {
        if !self.has_resources() {
            return Err(ErrorData::method_not_found::<ListResourcesRequestMethod>());
        }
        Ok(self.list_resources())
    }

    /// The answer to `resources/templates/list`, as [`SagaTools::prompts_listed`] answers
    /// its own.
    pub(crate) fn resource_templates_listed(
        &self,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        if !self.has_resources() {
            return Err(ErrorData::method_not_found::<
                ListResourceTemplatesRequestMethod,
            >());
        }
        Ok(self.list_resource_templates())
    }

    /// The `prompts/list` result.
    pub fn list_prompts(&self) -> ListPromptsResult {
        ListPromptsResult::with_all_items(
            self.inner
                .prompts
                .iter()
                .map(|(prompt, _)| prompt.clone())
                .collect(),
        )
        .with_ttl_ms(self.inner.list_ttl_ms)
        .with_cache_scope(CacheScope::Public)
    }

    /// The `resources/list` result.
    pub fn list_resources(&self) -> ListResourcesResult {
        ListResourcesResult::with_all_items(
            self.inner
                .resources
                .iter()
                .map(|(resource, _)| resource.clone())
                .collect(),
        )
        .with_ttl_ms(self.inner.list_ttl_ms)
        .with_cache_scope(CacheScope::Public)
    }

    /// The `resources/templates/list` result.
    pub fn list_resource_templates(&self) -> ListResourceTemplatesResult {
        ListResourceTemplatesResult::with_all_items(
            self.inner
                .templates
                .iter()
                .map(|(template, _)| template.clone())
                .collect(),
        )
        .with_ttl_ms(self.inner.list_ttl_ms)
        .with_cache_scope(CacheScope::Public)
    }

    /// Handles `prompts/get`: one transition of the prompt's saga.
    pub fn get_prompt<'a>(
        &'a self,
        params: GetPromptRequestParams,
        context: &'a RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + Send + 'a {
        // Boxed here, for the reason `SagaTools::call` is; saga's own server awaits
        // `get_prompt_unboxed`.
        self.get_prompt_unboxed(params, context).boxed()
    }

    /// [`get_prompt`](Self::get_prompt), unboxed: what saga's own server awaits.
    pub(super) async fn get_prompt_unboxed(
        &self,
        params: GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.get_prompt_in(params, &self.context(context)).await
    }

    /// `prompts/get` for the caller `cx`, whichever transport read it.
    pub(crate) async fn get_prompt_in(
        &self,
        params: GetPromptRequestParams,
        cx: &SagaContext,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some((_, saga)) = self
            .inner
            .prompts
            .iter()
            .find(|(prompt, _)| prompt.name == params.name)
        else {
            return Err(ErrorData::invalid_params(
                format!("unknown prompt: {}", params.name),
                None,
            ));
        };
        let saga = saga.clone();
        let call = Call {
            method: "prompts/get".into(),
            name: params.name,
            arguments: params.arguments,
            request_state: params.request_state,
            input_responses: params.input_responses,
            ..Call::default()
        };
        match super::route::dispatch_saga(self, &saga, call, cx).await? {
            CallToolResponse::Complete(result) => {
                Ok(GetPromptResponse::Complete(unpack::<GetPromptResult>(
                    result,
                )?))
            }
            CallToolResponse::InputRequired(required) => {
                Ok(GetPromptResponse::InputRequired(required))
            }
            _ => Err(ErrorData::internal_error("unexpected response kind", None)),
        }
    }

    /// Whether `uri` names a resource of the registry, or matches one of its templates.
    pub fn has_resource(&self, uri: &str) -> bool {
        self.inner
            .resources
            .iter()
            .any(|(resource, _)| resource.uri == uri)
            || self
                .inner
                .templates
                .iter()
                .any(|(template, _)| match_template(&template.uri_template, uri).is_some())
    }

    /// Handles `resources/read`: one transition of the saga of the resource, or of the
    /// first template that matches the URI (its variables become arguments).
    pub fn read_resource<'a>(
        &'a self,
        params: ReadResourceRequestParams,
        context: &'a RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + Send + 'a {
        // Boxed here, for the reason `SagaTools::call` is; saga's own server awaits
        // `read_resource_unboxed`.
        self.read_resource_unboxed(params, context).boxed()
    }

    /// [`read_resource`](Self::read_resource), unboxed: what saga's own server awaits.
    pub(super) async fn read_resource_unboxed(
        &self,
        params: ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.read_resource_in(params, &self.context(context)).await
    }

    /// `resources/read` for the caller `cx`, whichever transport read it.
    pub(crate) async fn read_resource_in(
        &self,
        params: ReadResourceRequestParams,
        cx: &SagaContext,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let mut arguments = JsonObject::new();
        arguments.insert("uri".into(), Value::String(params.uri.clone()));
        let saga = if let Some((_, saga)) = self
            .inner
            .resources
            .iter()
            .find(|(resource, _)| resource.uri == params.uri)
        {
            saga.clone()
        } else if let Some((variables, saga)) =
            self.inner.templates.iter().find_map(|(template, saga)| {
                match_template(&template.uri_template, &params.uri).map(|vars| (vars, saga))
            })
        {
            for (name, value) in variables {
                arguments.insert(name, Value::String(value));
            }
            saga.clone()
        } else {
            return Err(ErrorData::invalid_params(
                format!("unknown resource: {}", params.uri),
                Some(json!({"uri": params.uri})),
            ));
        };
        let call = Call {
            method: "resources/read".into(),
            name: params.uri,
            arguments: Some(arguments),
            request_state: params.request_state,
            input_responses: params.input_responses,
            ..Call::default()
        };
        match super::route::dispatch_saga(self, &saga, call, cx).await? {
            CallToolResponse::Complete(result) => {
                #[derive(serde::Deserialize)]
                struct Packed {
                    contents: Vec<ResourceContents>,
                }
                let packed: Packed = unpack(result)?;
                let result = ReadResourceResult::new(packed.contents);
                // The caching hints are 2026-07-28's; a 2025-11-25 result has none. A
                // caller with a principal of its own may have been answered for it alone:
                // no intermediary may serve its contents to another.
                let scope = if cx.principal() == crate::state::ANONYMOUS {
                    CacheScope::Public
                } else {
                    CacheScope::Private
                };
                Ok(ReadResourceResponse::Complete(
                    if cx.era() == Some(crate::engine::Era::Session) {
                        result
                    } else {
                        result
                            .with_ttl_ms(self.inner.list_ttl_ms)
                            .with_cache_scope(scope)
                    },
                ))
            }
            CallToolResponse::InputRequired(required) => {
                Ok(ReadResourceResponse::InputRequired(required))
            }
            _ => Err(ErrorData::internal_error("unexpected response kind", None)),
        }
    }
}

/// The method's result from a saga's packed output; a saga that failed is a JSON-RPC
/// error with its message (prompts and resources have no `isError`).
fn unpack<T: serde::de::DeserializeOwned>(result: CallToolResult) -> Result<T, ErrorData> {
    if result.is_error == Some(true) {
        let message = result
            .content
            .first()
            .and_then(|content| content.as_text())
            .map_or_else(|| "the saga failed".to_owned(), |text| text.text.clone());
        return Err(ErrorData::internal_error(message, None));
    }
    let value = result.structured_content.unwrap_or(Value::Null);
    serde_json::from_value(value).map_err(|error| {
        tracing::error!(%error, "a prompt or resource saga returned something else than Prompt or Contents");
        ErrorData::internal_error("the saga's result is not a prompt or resource result", None)
    })
}

/// Matches `uri` against a template of `{name}` variables (each one or more characters
/// other than `/`); returns the variables.
fn match_template(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
    let mut variables = Vec::new();
    let mut rest = uri;
    let mut pattern = template;
    while !pattern.is_empty() {
        match pattern.find('{') {
            Some(0) => {
                let close = pattern.find('}')?;
                let name = &pattern[1..close];
                pattern = &pattern[close + 1..];
                let next_literal = pattern.find('{').map_or(pattern, |at| &pattern[..at]);
                let end = if next_literal.is_empty() {
                    rest.find('/').unwrap_or(rest.len())
                } else {
                    rest.find(next_literal)?
                };
                let value = &rest[..end];
                if value.is_empty() || value.contains('/') {
                    return None;
                }
                variables.push((name.to_owned(), value.to_owned()));
                rest = &rest[end..];
            }
            found => {
                let literal = &pattern[..found.unwrap_or(pattern.len())];
                rest = rest.strip_prefix(literal)?;
                pattern = &pattern[literal.len()..];
            }
        }
    }
    rest.is_empty().then_some(variables)
}

#[cfg(test)]
mod tests {
    use super::match_template;

    #[test]
    fn templates_match_whole_segments() {
        assert_eq!(
            match_template("test://template/{id}/data", "test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(
            match_template("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(
            match_template("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            match_template("test://template/{id}/data", "test://template/1/datax"),
            None
        );
        assert_eq!(
            match_template("x://{a}-{b}", "x://left-right"),
            Some(vec![
                ("a".into(), "left".into()),
                ("b".into(), "right".into())
            ])
        );
    }
}
