//! `book_meeting`: one bounded form, declared in the order a person fills it in, and a
//! decline that is an answer rather than an error. Served by `examples/meeting.rs`.
//!
//! - The form's fields go out in the order `Meeting` declares them (title, duration,
//!   room, notes), and clients show them in that order.
//! - A duration outside 15–240 minutes is asked again, and the question asked again says
//!   why: "Your last answer was not accepted: `duration` is above the maximum 240."
//! - Declining the form or the confirmation ends the call with a plain answer, not an
//!   error: `.outcome()` gives `Elicited::{Accepted, Declined, Cancelled}`.

use saga_runtime::prelude::*;

/// A meeting to book.
#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Meeting {
    /// What the meeting is about.
    pub title: String,
    /// How long it lasts, in minutes.
    #[elicit(min = 15, max = 240)]
    pub duration: u32,
    /// Where it takes place.
    pub room: Room,
    /// Anything the attendees should know.
    pub notes: Option<String>,
}

/// The rooms that can be booked.
#[derive(Debug, Clone, Copy, Elicit, Serialize, Deserialize)]
pub enum Room {
    Aurora,
    Borealis,
    Cosmos,
}

/// Books a meeting for `organiser`, asking what, how long and where.
#[saga_tool(title = "Book a meeting", idempotent)]
pub async fn book_meeting(
    #[arg(description = "Who organises the meeting.")] organiser: String,
) -> Result<String, SagaError> {
    let meeting = match elicit::<Meeting>(format!("Book a meeting for {organiser}"))
        .key("meeting")
        .outcome()
        .await?
    {
        Elicited::Accepted(meeting) => meeting,
        Elicited::Declined => return Ok("No meeting booked.".to_owned()),
        Elicited::Cancelled => return Ok("Booking cancelled.".to_owned()),
    };
    let summary = format!(
        "{} ({} min) in {:?} for {organiser}",
        meeting.title, meeting.duration, meeting.room
    );
    let confirmed = elicit::<bool>(format!("Book {summary}?"))
        .key("confirm")
        .outcome()
        .await?;
    Ok(match confirmed {
        Elicited::Accepted(true) => match meeting.notes {
            Some(notes) => format!("Booked {summary}. Notes: {notes}"),
            None => format!("Booked {summary}."),
        },
        Elicited::Accepted(false) | Elicited::Declined | Elicited::Cancelled => {
            "No meeting booked.".to_owned()
        }
    })
}

/// The server of this example, with the given keys.
pub fn server(keys: KeyRing) -> anyhow::Result<SagaServer> {
    Ok(SagaServer::builder()
        .info("meeting-server", env!("CARGO_PKG_VERSION"))
        .keys(keys)
        .tool(book_meeting)
        .build()?)
}
