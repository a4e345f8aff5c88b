//! Text from a server, made safe to print: a server's strings are untrusted, and a
//! terminal obeys the control sequences in what it prints (clipboard writes, screen
//! clears, links, titles). Every control character, C1 included, and every
//! bidirectional override is shown escaped instead.

/// `text` with every control character and bidirectional control escaped as `\u{…}`
/// (`\n` and `\t` as themselves only where `keep_lines` says).
pub fn clean(text: &str) -> String {
    clean_with(text, false)
}

/// A field printed on one line of its own (a name, a key, a status, a progress message):
/// [`clean`], which escapes its line breaks too, so that a server cannot forge the lines
/// around it.
pub fn one_line(text: &str) -> String {
    clean(text)
}

/// [`clean`], keeping line breaks and tabs (for multi-line results).
pub fn clean_lines(text: &str) -> String {
    clean_with(text, true)
}

fn clean_with(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let layout = keep_lines && (c == '\n' || c == '\t');
        if !layout && (c.is_control() || is_bidi_control(c)) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` with its second and later lines indented by two spaces, as the first is where
/// it is printed (a message that spans lines stays under its heading).
pub fn indent(text: &str) -> String {
    text.replace('\n', "\n  ")
}

/// A URL a server asks the user to open, in a form the user can check: control and
/// bidirectional characters, and any other character outside ASCII (which can make one
/// host look like another), escaped; then the host it leads to, alone.
pub fn url(url: &str) -> String {
    let mut shown = String::with_capacity(url.len());
    for c in url.chars() {
        if c.is_ascii() && !c.is_ascii_control() {
            shown.push(c);
        } else {
            shown.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    // The host a browser goes to, as the WHATWG URL standard parses the URL (the `url`
    // crate): a browser reads `https://evil.example\@good.example/` as evil.example, where
    // cutting the text at `@` finds good.example. An internationalized host is shown as
    // its ASCII (punycode) form.
    let host = match url::Url::parse(url) {
        Ok(parsed) => match parsed.host_str() {
            Some(host) => clean(host),
            None => "none".to_owned(),
        },
        Err(_) => "none: not a URL".to_owned(),
    };
    format!("{shown}  (host: {host})")
}

/// The Unicode characters that reorder text when displayed (Trojan Source).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_control_sequences() {
        assert_eq!(clean("a\u{1b}]52;c;x\u{7}b"), "a\\u{1b}]52;c;x\\u{7}b");
        assert_eq!(clean("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(clean("abc\u{202e}def"), "abc\\u{202e}def");
        assert_eq!(clean("x\ny"), "x\\u{a}y");
        assert_eq!(clean_lines("x\ny\tz"), "x\ny\tz");
        assert_eq!(clean_lines("a\rb"), "a\\u{d}b");
    }

    #[test]
    fn indents_every_line_after_the_first() {
        assert_eq!(indent("a\n\nb"), "a\n  \n  b");
        assert_eq!(indent("one line"), "one line");
    }

    #[test]
    fn shows_a_url_and_its_host() {
        assert_eq!(
            url("https://user@example.com/pay?x=1"),
            "https://user@example.com/pay?x=1  (host: example.com)"
        );
        assert_eq!(
            url("https://exаmple.com/\u{1b}]8;;x"),
            "https://ex\\u{430}mple.com/\\u{1b}]8;;x  (host: xn--exmple-4nf.com)"
        );
    }

    #[test]
    fn a_url_names_the_host_a_browser_goes_to() {
        assert!(
            url("https://evil.example\\@good.example/login").ends_with("(host: evil.example)"),
            "{}",
            url("https://evil.example\\@good.example/login")
        );
        assert!(url("https://a:b@good.example:8443/x").ends_with("(host: good.example)"));
        assert!(url("not a url").ends_with("(host: none: not a URL)"));
    }

    #[test]
    fn one_line_fields_escape_their_line_breaks() {
        assert_eq!(one_line("a\nb\r\nc"), "a\\u{a}b\\u{d}\\u{a}c");
    }
}
