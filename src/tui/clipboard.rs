//! Copying to the clipboard with OSC 52: the terminal sets its clipboard
//! from an escape sequence, so copying works over ssh with no clipboard
//! tool on the machine kwire runs on.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// Bytes copied at most: many terminals ignore longer OSC 52 sequences.
pub const MAX_COPY: usize = 100_000;

/// The escape sequence that puts `text` on the clipboard (`c`). The payload is
/// base64, so nothing in `text` can act as a terminal control.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", STANDARD.encode(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_is_base64_and_inert() {
        assert_eq!(osc52("corr=3"), "\x1b]52;c;Y29ycj0z\x07");
        let s = osc52("a\x1b]0;x\x07b");
        assert_eq!(s.matches('\x1b').count(), 1);
        assert_eq!(s.matches('\x07').count(), 1);
    }
}
