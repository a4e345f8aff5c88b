//! Build 1's code of the tools whose layout build 2 changed, kept only to finish the calls
//! and tasks build 1 started: registered with `.retired(..)`, never listed, never starting
//! a call. Copied unchanged from build 1 (`upgrade_v1/tools.rs`), in a module of its own so
//! that every name stays as it was: the tools', the helpers' and the saved types', which
//! the suspension points and their layouts are named by. Remove it once build 1's tokens
//! have expired (the server's `ttl`) and its tasks have ended.

use saga_runtime::prelude::*;

/// Build 1's `Transfer`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Transfer {
    pub from: String,
    pub to: String,
}

/// Build 1's `transfer_kept`.
#[saga_tool]
pub async fn transfer_kept(from: String, to: String) -> Result<String, SagaError> {
    let order = Transfer { from, to };
    let ok: bool = elicit("Move 500?").key("ok").await?;
    Ok(if ok {
        format!("500 from {} to {}", order.from, order.to)
    } else {
        "cancelled".to_owned()
    })
}

/// Build 1's `count_kept`.
#[saga_tool]
pub async fn count_kept(start: u32) -> Result<String, SagaError> {
    let counted: u32 = start + 1;
    let more: bool = elicit("Count on?").key("more").await?;
    Ok(format!("counted {counted}, more: {more}"))
}

/// Build 1's helper.
#[saga_fn]
async fn confirm(what: String) -> Result<bool, SagaError> {
    let asked = what.clone();
    let ok: bool = elicit("Confirm?").key("confirm").await?;
    Ok(ok && !asked.is_empty())
}

/// Build 1's `cleanup_kept`.
#[saga_tool]
pub async fn cleanup_kept(path: String) -> Result<String, SagaError> {
    let ok = confirm(path.clone()).await?;
    Ok(format!("{path}: {}", if ok { "removed" } else { "kept" }))
}

/// Build 1's `Plan`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub enum Plan {
    Basic,
    Pro,
}

/// Build 1's `subscribe_kept`.
#[saga_tool]
pub async fn subscribe_kept(pro: bool) -> Result<String, SagaError> {
    let plan = if pro { Plan::Pro } else { Plan::Basic };
    let ok: bool = elicit("Subscribe?").key("ok").await?;
    Ok(format!("{plan:?}: {ok}"))
}
