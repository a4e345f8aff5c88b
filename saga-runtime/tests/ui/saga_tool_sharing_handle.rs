use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use saga_runtime::prelude::*;

/// Handles whose sharing would not survive the saved state, used after a suspension.
#[saga_tool]
async fn shared() -> Result<String, SagaError> {
    let count = Rc::new(1_i64);
    let other = Rc::clone(&count);
    let total: Arc<i64> = Arc::new(2);
    let seen = Cell::new(0_u32);
    let log = RefCell::new(Vec::<String>::new());
    let copy = log.clone();
    checkpoint().await;
    seen.set(seen.get() + 1);
    log.borrow_mut().push("x".into());
    Ok(format!("{count} {other} {total} {} {:?}", seen.get(), copy.borrow()))
}

fn main() {}
