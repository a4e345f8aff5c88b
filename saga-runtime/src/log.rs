//! Client strings in the server log: escaped, so that a tool name or an answer holding
//! newlines or terminal escapes cannot forge log lines or repaint an operator's terminal,
//! and cut, so that one request cannot flood the log.

use std::fmt;

/// The most characters of one client string written to the log.
const MAX_LOGGED_CHARS: usize = 200;

/// Displays a client-supplied string with control characters escaped (`\n`, `\u{1b}`, …)
/// and at most [`MAX_LOGGED_CHARS`] characters.
pub(crate) struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Most strings need nothing escaped and are short: written whole, not a character
        // at a time (a tool's name on every span).
        if self.0.len() <= MAX_LOGGED_CHARS
            && self
                .0
                .bytes()
                .all(|b| (b' '..=b'~').contains(&b) && b != b'\\')
        {
            return f.write_str(self.0);
        }
        let mut chars = self.0.chars();
        for c in chars.by_ref().take(MAX_LOGGED_CHARS) {
            if c.is_control() || is_invisible_format(c) {
                write!(f, "{}", c.escape_unicode())?;
            } else if c == '\\' {
                f.write_str("\\\\")?;
            } else {
                fmt::Write::write_char(f, c)?;
            }
        }
        if chars.next().is_some() {
            write!(f, "…({} bytes)", self.0.len())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// Characters that reorder or hide text on a terminal (bidirectional overrides and the
/// like): escaped too.
pub(crate) fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// A client-supplied message made safe to show inside a result: control characters
/// escaped and its length bounded, as for the log.
pub(crate) fn sanitized(text: &str) -> String {
    Escaped(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_terminal_escapes_are_escaped() {
        let shown = Escaped("evil\n2026-01-01 INFO forged\u{1b}[31mred\u{202e}").to_string();
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert!(
            shown.contains("\\u{a}") && shown.contains("\\u{1b}") && shown.contains("\\u{202e}")
        );
        assert!(shown.starts_with("evil"));
    }

    #[test]
    fn long_strings_are_cut_with_their_length() {
        let long = "x".repeat(10_000);
        let shown = Escaped(&long).to_string();
        assert!(shown.len() < 300, "{}", shown.len());
        assert!(shown.ends_with("(10000 bytes)"));
    }

    /// A short plain string is written whole (the fast path), a character longer or one
    /// byte to escape goes the way every other does.
    #[test]
    fn the_bound_and_the_escapes_hold_at_the_edge_of_the_whole_write() {
        let edge = "x".repeat(MAX_LOGGED_CHARS);
        assert_eq!(Escaped(&edge).to_string(), edge);
        let over = "x".repeat(MAX_LOGGED_CHARS + 1);
        assert_eq!(
            Escaped(&over).to_string(),
            format!("{edge}…({} bytes)", MAX_LOGGED_CHARS + 1)
        );
        assert_eq!(
            Escaped("tools/call deploy").to_string(),
            "tools/call deploy"
        );
        assert_eq!(Escaped("a\\b").to_string(), "a\\\\b");
        assert_eq!(Escaped("a\u{7f}").to_string(), "a\\u{7f}");
        assert_eq!(Escaped("é").to_string(), "é");
    }

    #[test]
    fn backslashes_cannot_fake_an_escape() {
        assert_eq!(Escaped("a\\u{a}b").to_string(), "a\\\\u{a}b");
    }
}
