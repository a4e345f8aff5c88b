//! A `loop` with a counter, a form re-asked until it fits, a sample to word the invite.
use saga_runtime::prelude::*;

#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Slot {
    /// Day (YYYY-MM-DD)
    pub day: String,
    /// Hour, 0-23
    pub hour: u8,
    /// Minutes long
    pub minutes: u16,
}

/// Finds a slot for a meeting and drafts its invitation.
#[saga_tool]
pub async fn schedule_meeting(topic: String, attendees: Vec<String>) -> Result<String, SagaError> {
    let mut tries = 0;
    let slot = loop {
        tries += 1;
        let slot: Slot = elicit(format!("When should '{topic}' be? (try {tries})")).await?;
        if slot.hour < 24 && slot.minutes > 0 && slot.minutes <= 240 {
            break slot;
        }
        if tries == 3 {
            return Err(SagaError::Tool("no valid slot after three tries".into()));
        }
    };
    let invite = sample(format!(
        "Invite {} to '{topic}' on {} at {}:00 for {} minutes.",
        attendees.join(", "),
        slot.day,
        slot.hour,
        slot.minutes
    ))
    .await?;
    Ok(invite.text().to_owned())
}
