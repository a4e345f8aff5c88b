use saga_runtime::prelude::*;

#[derive(Elicit)]
struct Nothing;

#[derive(Elicit)]
union Bits {
    int: u32,
    float: f32,
}

#[derive(Elicit)]
enum Empty {}

fn main() {}
