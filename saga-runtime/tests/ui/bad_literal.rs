use saga_runtime::prelude::*;

#[derive(Elicit)]
struct Limits {
    #[elicit(max = "ten")]
    retries: u8,
    #[elicit(default = 5)]
    name: String,
    #[elicit(min = 300)]
    small: u8,
}

fn main() {}
