//! Two helpers, one calling the other; declines handled; a nested loop of comments.
use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ticket {
    pub id: u32,
    pub title: String,
    pub comments: Vec<String>,
}

#[saga_fn]
async fn ask_reply(ticket: Ticket) -> Result<Option<String>, SagaError> {
    let draft = sample(format!(
        "Draft a reply to '{}' given: {}",
        ticket.title,
        ticket.comments.join(" / ")
    ))
    .await?;
    match elicit::<String>(format!("Send on #{}?\n{}", ticket.id, draft.text()))
        .outcome()
        .await?
    {
        Elicited::Accepted(edited) => Ok(Some(edited)),
        Elicited::Declined | Elicited::Cancelled => Ok(None),
    }
}

#[saga_fn]
async fn follow_up(ticket: Ticket) -> Result<String, SagaError> {
    for comment in &ticket.comments {
        if comment.contains("urgent") {
            return match ask_reply(ticket.clone()).await? {
                Some(reply) => Ok(format!("#{} replied: {reply}", ticket.id)),
                None => Ok(format!("#{} left", ticket.id)),
            };
        }
    }
    Ok(format!("#{} not urgent", ticket.id))
}

/// Follows up on urgent tickets.
#[saga_tool]
pub async fn ticket_followup(tickets: Vec<Ticket>) -> Result<String, SagaError> {
    let mut out = Vec::new();
    for ticket in &tickets {
        out.push(follow_up(ticket.clone()).await?);
    }
    Ok(out.join("\n"))
}
