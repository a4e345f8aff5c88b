use saga_runtime::prelude::*;

#[derive(Elicit)]
struct Settings {
    #[elicit(min_length = 1)]
    enabled: bool,
    #[elicit(format = "email")]
    count: u32,
}

fn main() {}
