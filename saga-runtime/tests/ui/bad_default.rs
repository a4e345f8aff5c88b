use saga_runtime::prelude::*;

#[derive(Elicit)]
enum Color {
    Red,
    Green,
}

#[derive(Elicit)]
struct Paint {
    #[elicit(default = "Blue")]
    color: Color,
}

fn main() {}
