//! A tool and its retired builds, behind one name: what a server resumes a token with.
//!
//! Every build of a tool served here (the current one, and the `.retired(..)` copies kept
//! to finish their in-flight calls) has its suspension points, traced when the server is
//! built. A token goes to the first build that has the point it names, with the same
//! identity: the current build first, so that a point that did not change resumes on the
//! newest code. A token no build knows is refused, with the current build's reason.
//!
//! # The layers a tool is served through, and why each exists
//!
//! - [`SagaTool`], the user's tool as `#[saga_tool]` compiles it: typed state and step.
//! - [`Typed`](crate::engine::contract::typed::Typed), the same behind an object with the
//!   state's type erased, so that everything else a transition does is compiled once for
//!   every tool rather than once per tool (`engine::contract::typed`).
//! - [`Compiled<T>`], one build of a tool with its suspension points, traced once when the
//!   server is built, so that no request traces a layout.
//! - [`DynTool`], what a server resumes a token with; [`Family`] implements it for a tool
//!   and its retired builds, so that a token goes to the build that has its point.
//! - [`Saga`], the shared handle (`Arc<dyn DynTool>`) the serving layer holds.
//! - `serve::tools::ServedTool`, the registry's entry: the handle with the tool's listing
//!   and how it is reached (listed, direct path), which no transition reads.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::CallToolResponse;

use crate::engine::caller::context::SagaContext;
use crate::engine::caller::error::{InspectError, invalid_state};
use crate::engine::contract::tool::SagaTool;
use crate::engine::contract::tool::TaskSupport;
use crate::engine::identity::layout::shape::LayoutError;
use crate::engine::identity::points::Points;
use crate::engine::runner::per_call::PerCall;
use crate::engine::runner::transition::{Call, typed_transition};
use crate::state::{Binding, PointKey, StateCodec, TokenHeader};

use futures::future::BoxFuture;

/// A tool as a server holds it: its builds behind one name, their state types erased.
pub(crate) type Saga = Arc<dyn DynTool>;

/// One build of a tool, its state type erased, with its points.
pub(crate) trait DynTool: Send + Sync {
    /// One transition of `call`: its inputs (answers, failures, the model's answers) are
    /// taken out of it; the rest is read, so that the drive goes on with the same call
    /// without copying it.
    fn run<'a>(
        &'a self,
        codec: &'a StateCodec,
        call: &'a mut Call,
        cx: &'a SagaContext,
        per_call: &'a PerCall,
    ) -> BoxFuture<'a, Result<CallToolResponse, ErrorData>>;

    fn inspect(
        &self,
        codec: &StateCodec,
        token: &str,
        binding: &Binding,
    ) -> Result<serde_json::Value, InspectError>;

    fn task_support(&self) -> TaskSupport;

    /// The build's points; for a family, the current build's.
    fn points(&self) -> &Points;

    /// The point `header` names, in whichever build has it.
    fn point_key(&self, header: &[u8; 8]) -> Option<PointKey>;

    /// Every build's points, the current build's first.
    fn every_points(&self) -> Vec<&Points> {
        vec![self.points()]
    }
}

/// A tool with the points traced from its state.
pub(crate) struct Compiled<T> {
    tool: T,
    points: Points,
}

impl<T: SagaTool> Compiled<T> {
    pub(crate) fn new(tool: T, name: &str) -> Result<Self, LayoutError> {
        let points = Points::named(&tool, name)?;
        Ok(Self { tool, points })
    }
}

impl<T: SagaTool> DynTool for Compiled<T> {
    fn run<'a>(
        &'a self,
        codec: &'a StateCodec,
        call: &'a mut Call,
        cx: &'a SagaContext,
        per_call: &'a PerCall,
    ) -> BoxFuture<'a, Result<CallToolResponse, ErrorData>> {
        // Converted to `ErrorData` inside `typed_transition`, which is compiled once: a
        // `map` here would be compiled again for every tool (+1,100 LLVM lines each).
        Box::pin(typed_transition(
            &self.tool,
            &self.points,
            codec,
            call,
            cx,
            per_call,
        ))
    }

    fn inspect(
        &self,
        codec: &StateCodec,
        token: &str,
        binding: &Binding,
    ) -> Result<serde_json::Value, InspectError> {
        crate::engine::runner::inspect::inspect_state(
            &self.tool,
            &self.points,
            codec,
            token,
            binding,
        )
    }

    fn task_support(&self) -> TaskSupport {
        SagaTool::task_support(&self.tool)
    }

    fn points(&self) -> &Points {
        &self.points
    }

    fn point_key(&self, header: &[u8; 8]) -> Option<PointKey> {
        self.points.find(header).map(|point| point.key)
    }
}

/// The builds of one tool: the current one (absent when the tool was removed and only
/// its retired builds finish their calls), then the retired ones in registration order.
pub(crate) struct Family {
    current: Option<Arc<dyn DynTool>>,
    retired: Vec<Arc<dyn DynTool>>,
}

impl Family {
    pub(crate) fn new(current: Option<Arc<dyn DynTool>>, retired: Vec<Arc<dyn DynTool>>) -> Self {
        Self { current, retired }
    }

    fn builds(&self) -> impl Iterator<Item = &Arc<dyn DynTool>> {
        self.current.iter().chain(&self.retired)
    }

    /// The build that resumes `token`; the current one (which refuses it) when none has
    /// its point.
    fn for_token(&self, token: &str) -> &Arc<dyn DynTool> {
        if let Ok(header) = TokenHeader::peek_point(token)
            && let Some(build) = self
                .builds()
                .find(|build| build.points().find(&header).is_some())
        {
            return build;
        }
        self.default_build()
    }

    fn default_build(&self) -> &Arc<dyn DynTool> {
        match &self.current {
            Some(current) => current,
            // `SagaTools::new` builds a family only with at least one build.
            None => &self.retired[0],
        }
    }
}

impl DynTool for Family {
    fn run<'a>(
        &'a self,
        codec: &'a StateCodec,
        call: &'a mut Call,
        cx: &'a SagaContext,
        per_call: &'a PerCall,
    ) -> BoxFuture<'a, Result<CallToolResponse, ErrorData>> {
        let build = match &call.request_state {
            Some(token) => self.for_token(token),
            None => match &self.current {
                Some(current) => current,
                None => {
                    let name = call.name.clone();
                    return Box::pin(async move {
                        tracing::info!(tool = %crate::log::Escaped(&name), "a call of a retired tool");
                        Err(ErrorData::invalid_params(
                            format!("unknown tool: {name}"),
                            None,
                        ))
                    });
                }
            },
        };
        build.run(codec, call, cx, per_call)
    }

    fn inspect(
        &self,
        codec: &StateCodec,
        token: &str,
        binding: &Binding,
    ) -> Result<serde_json::Value, InspectError> {
        self.for_token(token).inspect(codec, token, binding)
    }

    fn task_support(&self) -> TaskSupport {
        self.default_build().task_support()
    }

    fn points(&self) -> &Points {
        self.default_build().points()
    }

    fn point_key(&self, header: &[u8; 8]) -> Option<PointKey> {
        self.builds().find_map(|build| build.point_key(header))
    }

    fn every_points(&self) -> Vec<&Points> {
        self.builds().map(|build| build.points()).collect()
    }
}

/// The point a token this server just sealed names, to seal it again elsewhere.
pub(crate) fn point_key(saga: &Saga, name: &str, token: &str) -> Result<PointKey, ErrorData> {
    let header = TokenHeader::peek_point(token)
        .map_err(|error| invalid_state(name, &crate::state::OpenError::from(error)))?;
    saga.point_key(&header)
        .ok_or_else(|| invalid_state(name, &saga.points().refusal(&header)).into())
}
