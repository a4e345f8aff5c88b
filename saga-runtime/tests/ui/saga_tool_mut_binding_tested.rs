use saga_runtime::prelude::*;

#[derive(Serialize, Deserialize)]
struct Node {
    leaf: bool,
    size: i64,
}

// A mutable borrow bound by a pattern that tests what the binding then changes: matched
// again after the suspension, the pattern would no longer match, so the binding is saved,
// and a `&mut` must be borrowed again where it is used.
#[saga_tool]
async fn grow(sizes: Vec<i64>) -> Result<String, SagaError> {
    let mut nodes: Vec<Node> = sizes.into_iter().map(|size| Node { leaf: true, size }).collect();
    if let Some(node @ Node { leaf: true, .. }) = nodes.get_mut(0) {
        node.leaf = false;
        let more: i64 = elicit("How much more?").await?;
        node.size += more;
    }
    Ok(format!("{}", nodes.len()))
}

fn main() {}
