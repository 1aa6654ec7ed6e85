//! Temporary stub; replaced by the full table.
pub fn error_name(code: i16) -> Option<&'static str> {
    Some(match code {
        0 => "NONE",
        15 => "COORDINATOR_NOT_AVAILABLE",
        16 => "NOT_COORDINATOR",
        _ => return None,
    })
}
