use saga_runtime::prelude::*;

// Alternatives under a guard, binding a borrow kept across a suspension: the guard may
// have chosen a later alternative, which matching the pattern again after the suspension
// would not, so the binding must be owned.
#[saga_tool]
async fn pick(pair: (Option<i64>, Option<i64>)) -> Result<String, SagaError> {
    match &pair {
        (Some(x), _) | (_, Some(x)) if *x > 5 => {
            let ok: bool = elicit("Take it?").await?;
            Ok(format!("{x}: {ok}"))
        }
        _ => Ok("none".to_owned()),
    }
}

fn main() {}
