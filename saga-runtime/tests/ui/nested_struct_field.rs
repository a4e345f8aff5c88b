use saga_runtime::prelude::*;

struct Address {
    street: String,
}

#[derive(Elicit)]
struct Person {
    name: String,
    address: Address,
}

fn main() {}
