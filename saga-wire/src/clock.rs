//! The clock tokens expire by.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the unix epoch; a clock before 1970 reads as 0.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}
