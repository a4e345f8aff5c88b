//! Forms with declines handled, a sample, a confirmation.
use saga_runtime::prelude::*;

#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Newcomer {
    /// Full name
    pub name: String,
    /// Team to join
    pub team: String,
    /// Start date (YYYY-MM-DD)
    pub start: String,
    /// Needs a laptop
    pub laptop: bool,
}

/// Onboards a newcomer: their details, a welcome note drafted by the model, a confirmation.
#[saga_tool]
pub async fn onboarding(manager: String) -> Result<String, SagaError> {
    let who = match elicit::<Newcomer>(format!("Who joins {manager}'s team?"))
        .outcome()
        .await?
    {
        Elicited::Accepted(who) => who,
        Elicited::Declined | Elicited::Cancelled => return Ok("No one to onboard.".into()),
    };
    let note = sample(format!(
        "Write a two-line welcome for {} joining {} on {}.",
        who.name, who.team, who.start
    ))
    .max_tokens(120)
    .await?;
    let send: bool = elicit(format!("Send this to {}?\n{}", who.name, note.text())).await?;
    if !send {
        return Ok(format!("{} onboarded, no note sent.", who.name));
    }
    let laptop = if who.laptop {
        " and a laptop ordered"
    } else {
        ""
    };
    Ok(format!("{} onboarded{laptop}; note sent.", who.name))
}
