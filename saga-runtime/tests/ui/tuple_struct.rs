use saga_runtime::prelude::*;

#[derive(Elicit)]
struct Name(String);

fn main() {
    // No cascade here: the failed derive still implements Elicit.
    let _ = Name::requested_schema();
}
