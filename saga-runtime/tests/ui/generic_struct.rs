use saga_runtime::prelude::*;

#[derive(Elicit)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
