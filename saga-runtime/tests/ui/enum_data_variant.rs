use saga_runtime::prelude::*;

#[derive(Elicit)]
enum Size {
    Small,
    Custom { width: u32 },
    Other(String),
}

#[derive(Elicit)]
struct Order {
    // No cascade here: the failed derive still implements the traits.
    size: Size,
}

fn main() {}
