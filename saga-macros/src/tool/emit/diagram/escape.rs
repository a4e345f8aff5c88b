//! Text from the code made safe for Mermaid, in a description, a label or a state's id.
//! Mermaid's entity codes (`#quot;`) are not decoded in state diagrams, so the few
//! characters its grammar or its HTML sanitiser would take as syntax are replaced by
//! look-alikes instead. Apart from the rest because it answers to Mermaid's parser, not
//! to Rust: whatever the code says, a line must stay one line of text.

/// A state id: the variant's name, which is an identifier; anything else replaced.
pub(super) fn state_id(name: &str) -> String {
    let id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() { "_".to_owned() } else { id }
}

/// `text` as the text of a description or a transition's label, where Mermaid reads a
/// line up to its end: on one line, and with what its grammar or its HTML sanitiser would
/// take as syntax replaced by a look-alike (Mermaid's `#quot;` codes are shown as they
/// are in state diagrams, so they cannot be used):
///
/// - `;` ends a statement: `⁏` (reversed semicolon);
/// - `::`, and a `:` at the end, are refused: `∶` (ratio);
/// - `<` before a letter opens an HTML tag, which is dropped: `‹` (and its `>`, `›`);
/// - `%%` opens a directive: `% %`;
/// - line breaks, tabs, control and bidirectional characters: a space.
pub fn escape(text: &str) -> String {
    let chars: Vec<char> = text
        .chars()
        .map(|c| {
            if c.is_control() || is_bidi_control(c) {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut angles = 0usize;
    let mut last_space = true;
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        let rest_blank = chars[i + 1..].iter().all(|c| c.is_whitespace());
        let replaced = match c {
            ';' => SEMICOLON,
            ':' if before == Some(':') || after == Some(':') || rest_blank => COLON,
            '<' if after
                .is_some_and(|next| !next.is_whitespace() && next != '=' && next != '<') =>
            {
                angles += 1;
                LEFT_ANGLE
            }
            '>' if angles > 0
                && before
                    .is_some_and(|prev| !prev.is_whitespace() && prev != '-' && prev != '=') =>
            {
                angles -= 1;
                RIGHT_ANGLE
            }
            '%' if before == Some('%') => {
                out.push(' ');
                '%'
            }
            c => c,
        };
        if replaced.is_whitespace() {
            if last_space {
                continue;
            }
            last_space = true;
            out.push(' ');
        } else {
            last_space = false;
            out.push(replaced);
        }
    }
    let trimmed = out.trim_end().to_owned();
    if trimmed.is_empty() {
        "…".to_owned()
    } else {
        trimmed
    }
}

/// What `;` is shown as: U+204F REVERSED SEMICOLON (not the Greek question mark, which
/// normalisation turns back into a `;`).
const SEMICOLON: char = '\u{204f}';
/// What a `:` Mermaid would refuse is shown as: U+2236 RATIO.
const COLON: char = '\u{2236}';
/// What the `<` and `>` of a generic are shown as: U+2039 and U+203A.
const LEFT_ANGLE: char = '\u{2039}';
const RIGHT_ANGLE: char = '\u{203a}';

/// The Unicode characters that reorder text when displayed.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_mermaid_would_read_as_syntax() {
        assert_eq!(escape("a; b"), "a\u{204f} b");
        assert_eq!(escape("elicit::<Target>(x)"), "elicit∶∶‹Target›(x)");
        assert_eq!(escape("Vec<Vec<u8>>"), "Vec‹Vec‹u8››");
        assert_eq!(escape("if a < b && c > d"), "if a < b && c > d");
        assert_eq!(escape("x <= y -> z => w"), "x <= y -> z => w");
        assert_eq!(escape("target:"), "target∶");
        assert_eq!(escape("a: b"), "a: b");
        assert_eq!(escape("\"quoted\" {x} [y] | z"), "\"quoted\" {x} [y] | z");
        assert_eq!(escape("%%{init: {}}%%"), "% %{init: {}}% %");
        assert_eq!(escape("two\nlines\t\u{1b}[2J\u{202e}x"), "two lines [2J x");
        assert_eq!(escape("  "), "…");
        assert_eq!(
            escape("<script>alert(1)</script>"),
            "‹script›alert(1)‹/script›"
        );
    }

    /// Whatever the text, the escaped line has none of what Mermaid reads as syntax in a
    /// description or a label: a `;`, a `::`, a trailing `:`, a line break, `%%`, or a `<`
    /// before a letter.
    #[test]
    fn escaped_text_is_one_safe_line() {
        let alphabet: Vec<char> = ";:<>%\"#&{}[]|`\\\n\r\t a1-=\u{202e}".chars().collect();
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let length = (seed % 12) as usize;
            let mut state = seed;
            for _ in 0..length {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                text.push(alphabet[(state >> 33) as usize % alphabet.len()]);
            }
            let line = escape(&text);
            assert!(!line.is_empty());
            assert!(
                !line.contains(';') && !line.contains("::") && !line.ends_with(':'),
                "{text:?} → {line:?}"
            );
            assert!(!line.contains('\n') && !line.contains('\r') && !line.contains("%%"));
            assert!(!line.contains('\u{202e}'));
            let chars: Vec<char> = line.chars().collect();
            for pair in chars.windows(2) {
                assert!(
                    !(pair[0] == '<' && pair[1].is_alphabetic()),
                    "{text:?} → {line:?}"
                );
                assert!(!(pair[0] == '<' && pair[1] == '/'), "{text:?} → {line:?}");
            }
        }
    }
}
