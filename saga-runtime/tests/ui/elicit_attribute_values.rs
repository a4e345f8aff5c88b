use saga_runtime::prelude::*;

// `min` above `max`.
#[derive(Elicit)]
struct Range {
    #[elicit(min = 10, max = 1)]
    count: i64,
}

// Two fields with the same wire name.
#[derive(Elicit)]
struct Clash {
    name: String,
    #[serde(rename = "name")]
    other: String,
}

// Two options with the same wire value.
#[derive(Elicit)]
enum Color {
    #[serde(rename = "red")]
    Red,
    #[serde(rename = "red")]
    Crimson,
}

// `#[elicit(...)]` on the struct itself.
#[derive(Elicit)]
#[elicit(title = "Form")]
struct OnStruct {
    name: String,
}

// An unknown format, a float bound on an integer, a negative length, a non-string title,
// and a key given twice.
#[derive(Elicit)]
struct Literals {
    #[elicit(format = "phone")]
    phone: String,
    #[elicit(min = 1.5)]
    count: i64,
    #[elicit(min_length = -1)]
    code: String,
    #[elicit(title = 5)]
    label: String,
    #[elicit(title = "a", title = "b")]
    twice: String,
}

// A path where a key belongs, and a variant titled twice.
#[derive(Elicit)]
enum Size {
    #[elicit(title = "Small", title = "Tiny")]
    Small,
    Large,
}

#[derive(Elicit)]
struct PathKey {
    #[elicit(serde::title = "x")]
    name: String,
}

fn main() {}
