use saga_runtime::prelude::*;

#[derive(Elicit)]
struct Tags {
    name: String,
    tags: Vec<String>,
}

fn main() {
    let _ = Tags::requested_schema();
}
