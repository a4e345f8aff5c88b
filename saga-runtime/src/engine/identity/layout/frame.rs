//! The frame a macro saga's step records its state types into while its layout is traced
//! (see `expand_support::macro_layout`), one per thread, and the helpers' frames nested in
//! it.

use std::cell::RefCell;
use std::fmt::Write as _;

use super::profile::EMPTY_ROOT;
use super::shape::{LayoutError, Traced};

/// What a trace of a `#[saga_tool]` or `#[saga_fn]` state collects: the state enum, and
/// per call site of a helper, the helper's own traced state.
#[derive(Debug, Default)]
pub(crate) struct Frame {
    pub(crate) state: Option<Result<Traced, LayoutError>>,
    /// Per variant of the state: what tells it apart from variants sharing its name.
    pub(crate) site_tags: Vec<&'static str>,
    /// The helper's code tag (for a helper's frame).
    pub(crate) build_tag: u16,
    pub(crate) callees: Vec<(String, Frame)>,
    /// Call sites of ordinary futures: their variants are never sealed.
    pub(crate) unreachable: Vec<String>,
}

impl Frame {
    /// The whole state as text: its enum, and each helper's state after it.
    pub(crate) fn render(&self) -> Result<String, LayoutError> {
        let traced = match &self.state {
            Some(Ok(traced)) => traced,
            // A helper that never suspends saves nothing of its own.
            Some(Err(error)) if error.0 == EMPTY_ROOT => return Ok("no suspension".to_owned()),
            Some(Err(error)) => return Err(error.clone()),
            None => return Err(LayoutError("the state was not traced".into())),
        };
        let mut out = traced.render();
        let names = traced.root_variants().unwrap_or_default();
        for ((variant, _), tag) in names.iter().zip(&self.site_tags) {
            if !tag.is_empty() {
                let _ = write!(out, " where {variant} is {tag}");
            }
        }
        for (variant, callee) in &self.callees {
            let _ = write!(out, " where {variant}.__callee = [{}]", callee.render()?);
        }
        for variant in &self.unreachable {
            let _ = write!(out, " where {variant} is never sealed");
        }
        Ok(out)
    }
}

thread_local! {
    /// The frames being filled, innermost last; empty when no trace runs.
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Whether a layout trace runs on this thread.
pub(crate) fn tracing() -> bool {
    FRAMES.with(|frames| !frames.borrow().is_empty())
}

/// Runs `run` with a new frame on this thread's stack, and gives that frame back.
pub(crate) fn in_frame(run: impl FnOnce()) -> Frame {
    push_frame();
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            // A panicking `run` leaves its frame; it is dropped with the stack's top.
            let _ = FRAMES.try_with(|frames| frames.borrow_mut().pop());
        }
    }
    let pop = Pop;
    run();
    std::mem::forget(pop);
    pop_frame()
}

// The frames are touched by these functions only, never from generic code: each `with`
// in a generic function would be compiled again for every state type.

fn push_frame() {
    FRAMES.with(|frames| frames.borrow_mut().push(Frame::default()));
}

fn pop_frame() -> Frame {
    FRAMES
        .with(|frames| frames.borrow_mut().pop())
        .unwrap_or_default()
}

/// Records the traced state enum of the step being traced in the innermost frame, with
/// its variants' site tags.
pub(crate) fn record_traced(traced: Result<Traced, LayoutError>, site_tags: &[&'static str]) {
    FRAMES.with(|frames| {
        if let Some(frame) = frames.borrow_mut().last_mut() {
            frame.state = Some(traced);
            frame.site_tags = site_tags.to_vec();
        }
    });
}

impl Frame {
    /// The code tags of every helper this frame calls, nested ones included.
    pub(crate) fn callee_tags(&self, tags: &mut Vec<u16>) {
        for (_, callee) in &self.callees {
            tags.push(callee.build_tag);
            callee.callee_tags(tags);
        }
    }
}

/// Marks the variant `variant` of the innermost frame as never sealed.
pub(crate) fn record_unreachable(variant: &'static str) {
    FRAMES.with(|frames| {
        if let Some(frame) = frames.borrow_mut().last_mut() {
            frame.unreachable.push(variant.to_owned());
        }
    });
}

/// Records a helper's frame under the call-site variant `variant` of the innermost frame.
pub(crate) fn record_callee(variant: &'static str, callee: Frame) {
    FRAMES.with(|frames| {
        if let Some(frame) = frames.borrow_mut().last_mut() {
            frame.callees.push((variant.to_owned(), callee));
        }
    });
}
