//! A point's layout as a person reads it in the layout file and in `saga inspect`.
//!
//! The traced layout names what the macro keeps for itself: `__m0: "PhantomData"` (which
//! request a suspension waits on; nothing is saved), `__callee` (a `#[saga_fn]` helper's
//! own state), `__rest1` (where a `for` loop is), `__label_2` (the second `label` of a
//! body that shadows it). Those names are part of the point's identity, which the file
//! keeps in its own column; the text shown drops the first, and says the others as the
//! user wrote them or as what they are. Display only: nothing compares or hashes it.

/// `layout` (as traced) with the macro's own names said as what they are.
pub(super) fn shown(layout: &str) -> String {
    let mut out = String::with_capacity(layout.len());
    let mut rest = layout;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            let end = quoted_end(rest);
            let quoted = &rest[..end];
            rest = &rest[end..];
            // The macro's state enum, as a helper's state shows it: `enum { … }` says it.
            if quoted == "\"__State\"" {
                rest = rest.strip_prefix(' ').unwrap_or(rest);
                continue;
            }
            out.push_str(quoted);
            continue;
        }
        if let Some(after) = rest.strip_prefix(" where __callee = [") {
            out.push_str(" calling a #[saga_fn] suspended at [");
            rest = after;
            continue;
        }
        if rest.starts_with(" where ")
            && let Some((variant, after)) = nested_callee(&rest[" where ".len()..])
        {
            out.push_str(" where ");
            out.push_str(variant);
            out.push_str(" calls a #[saga_fn] suspended at [");
            rest = after;
            continue;
        }
        if rest.starts_with("__") && (out.ends_with("{ ") || out.ends_with(", ")) {
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (name, after) = rest.split_at(name_len);
            if let Some(after) = after.strip_prefix(": ") {
                match field(name) {
                    Field::Hidden(value) if after.starts_with(value) => {
                        rest = drop_field(&mut out, &after[value.len()..]);
                        continue;
                    }
                    Field::Hidden(_) => {}
                    Field::Named(shown) => {
                        out.push_str(&shown);
                        out.push_str(": ");
                        rest = after;
                        continue;
                    }
                }
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// What a field the macro named shows as.
enum Field {
    /// Not shown, when its value is this.
    Hidden(&'static str),
    /// Shown under this name.
    Named(String),
}

fn field(name: &str) -> Field {
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if numbered("__m") {
        return Field::Hidden("\"PhantomData\"");
    }
    if name == "__callee" {
        // Its layout is said after the point's (` where __callee = [..]`).
        return Field::Hidden("[u8]");
    }
    if numbered("__rest") || numbered("__pos") {
        return Field::Named("(for loop)".to_owned());
    }
    if numbered("__item") {
        return Field::Named("(for loop's item)".to_owned());
    }
    if numbered("__h") {
        return Field::Named("(temporary)".to_owned());
    }
    // A shadowed binding, `__label_2`: the user's `label`.
    let inner = name.trim_start_matches('_');
    if let Some((user, n)) = inner.rsplit_once('_')
        && !user.is_empty()
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        return Field::Named(user.to_owned());
    }
    Field::Named(inner.to_owned())
}

/// Drops a field whose name `out` is about to show and whose value ends where `after`
/// begins, with the separator it leaves: `{ a: str, __m0: "PhantomData" }` is
/// `{ a: str }`, and `{ __m0: "PhantomData" }` is `{}`.
fn drop_field<'a>(out: &mut String, after: &'a str) -> &'a str {
    if let Some(next) = after.strip_prefix(", ") {
        // Not the last: the next field takes its place.
        return next;
    }
    if out.ends_with(", ") {
        out.truncate(out.len() - 2);
        return after;
    }
    // The only field: `{ ` and ` }` meet.
    if out.ends_with("{ ")
        && let Some(next) = after.strip_prefix(' ')
    {
        out.pop();
        return next;
    }
    after
}

/// The end (exclusive) of the quoted string `text` starts with, its escapes skipped.
fn quoted_end(text: &str) -> usize {
    let mut escaped = false;
    for (at, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return at + 1,
            _ => {}
        }
    }
    text.len()
}

/// `AfterX.__callee = [` at the start of `text`: the variant, and what follows the `[`.
fn nested_callee(text: &str) -> Option<(&str, &str)> {
    let (variant, after) = text.split_once(".__callee = [")?;
    variant
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then_some((variant, after))
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn the_macros_names_are_said_as_what_they_are() {
        assert_eq!(shown("{ __m0: \"PhantomData\" }"), "{}");
        assert_eq!(
            shown("{ filename: str, __m0: \"PhantomData\" }"),
            "{ filename: str }"
        );
        assert_eq!(
            shown("{ __m0: \"PhantomData\", __m1: \"PhantomData\" }"),
            "{}"
        );
        assert_eq!(
            shown("{ location: str, __m0: \"PhantomData\", __m1: \"PhantomData\" }"),
            "{ location: str }"
        );
        assert_eq!(
            shown(
                "{ tables: u32, __label_2: str, migrated: [u32], __rest1: \"RangeRest\" { next: u32 } } @ one of 2 sites named AfterCheckpoint, code c920ce7d"
            ),
            "{ tables: u32, label: str, migrated: [u32], (for loop): \"RangeRest\" { next: u32 } } @ one of 2 sites named AfterCheckpoint, code c920ce7d"
        );
        assert_eq!(
            shown(
                "{ path: str, __m0: \"PhantomData\", __callee: [u8] } where __callee = [\"__State\" enum { AfterElicitOk { asked: str, __m0: \"PhantomData\" } }]"
            ),
            "{ path: str } calling a #[saga_fn] suspended at [enum { AfterElicitOk { asked: str } }]"
        );
        assert_eq!(
            shown(
                "\"__State\" enum { AfterAsk { __callee: [u8] } } where AfterAsk.__callee = [no suspension]"
            ),
            "enum { AfterAsk {} } where AfterAsk calls a #[saga_fn] suspended at [no suspension]"
        );
    }

    #[test]
    fn the_users_own_names_and_quoted_text_are_kept() {
        // A serde name in quotes is the user's, whatever it holds.
        let layout = "{ review: \"__m0, { __x_2: \\\"\" { amount: u64 }, n: u8 }";
        assert_eq!(shown(layout), layout);
        assert_eq!(shown(""), "");
        assert_eq!(shown("u32"), "u32");
        // Not a field: a name that is not followed by its value.
        assert_eq!(shown("{ __m0 }"), "{ __m0 }");
    }
}
