use saga_runtime::prelude::*;

#[derive(Elicit)]
struct Signup {
    #[elicit(placeholder = "you@example.com", title = "Email")]
    email: String,
}

fn main() {}
