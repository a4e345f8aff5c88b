//! A check before deploying: the layout file.
//!
//! A token, or a task record, is resumable by any build that has its suspension point
//! with the same saved layout (see the crate's "Deploying changes"). A change that
//! removes a point, or changes what a point saves, strands the calls in flight at that
//! point. The layout file, committed in your crate, records every point your server can
//! resume; one line in a test checks the build against it:
//!
//! ```no_run
//! use saga_runtime::prelude::*;
//!
//! #[saga_tool]
//! async fn greet() -> Result<String, SagaError> {
//!     let name: String = elicit("Your name?").await?;
//!     Ok(format!("Hello, {name}!"))
//! }
//!
//! fn my_server() -> SagaTools {
//!     SagaTools::builder()
//!         .keys(KeyRing::ephemeral())
//!         .tool(greet)
//!         .build()
//!         .expect("the tools build")
//! }
//!
//! #[test]
//! fn deploys_keep_in_flight_sagas() {
//!     saga_runtime::deploy::assert_layout(&my_server(), "saga.layout");
//! }
//! ```
//!
//! The test fails, naming the tool, the point and what changed in its layout, when a
//! point of the file is no longer resumable and the tool's `version` was not bumped. Fix
//! it by keeping the previous code as a `.retired(..)` copy, or by bumping
//! `#[saga_tool(version = N)]` to say those calls may be refused. It also fails, more
//! mildly, when the file is out of date (new points, or a bumped version). Rewrite the
//! file with:
//!
//! ```text
//! SAGA_LAYOUT=overwrite cargo test
//! ```
//!
//! The file is text, one point per line, so a review shows what a change does to the
//! points: `tool`, `version`, `point`, the point's 16 hex digits as a token's header
//! shows them and its tagged twin's (`saga inspect` reads the file to name a token's
//! point), its `identity` (what a token must match), and its layout: the locals it saves,
//! named as the code names them.

use std::fmt::Write as _;
use std::path::Path;

pub use saga_wire::{Comparison, Dropped, Entry, LayoutFile, Resumable, ResumablePoint};

use crate::serve::SagaTools;

/// The environment variable that makes [`assert_layout`] rewrite the file.
pub const OVERWRITE_VAR: &str = "SAGA_LAYOUT";

impl Resumable for SagaTools {
    fn each_point(&self, each: &mut dyn FnMut(ResumablePoint<'_>)) {
        for points in self.points() {
            for point in points.iter() {
                each(ResumablePoint {
                    tool: points.tool(),
                    version: points.version(),
                    point: &point.name,
                    traced: &point.layout,
                    twin: points.has_twins(),
                });
            }
        }
    }
}

/// Checks the build's points against the layout file at `path`, for a test: panics,
/// naming each tool and point whose in-flight calls the build would refuse and what
/// changed, or when the file is out of date. With `SAGA_LAYOUT=overwrite` it writes the
/// file instead (and still reports stranded points on stderr).
///
/// A relative `path` is read from the current directory, which `cargo test` sets to the
/// package's root.
#[track_caller]
pub fn assert_layout(tools: &SagaTools, path: impl AsRef<Path>) {
    if let Err(message) = check_layout(tools, path.as_ref()) {
        panic!("{message}");
    }
}

/// [`assert_layout`] without the panic: the failure's text.
pub fn check_layout(tools: &SagaTools, path: &Path) -> Result<(), String> {
    let built = LayoutFile::of(tools);
    let overwrite = std::env::var(OVERWRITE_VAR).is_ok_and(|value| value == "overwrite");
    let recorded = match std::fs::read_to_string(path) {
        Ok(text) => Some(LayoutFile::parse(&text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
    };
    let comparison = recorded.as_ref().map(|recorded| built.compare(recorded));
    if overwrite {
        if let Some(comparison) = &comparison {
            for dropped in &comparison.stranded {
                eprintln!("saga layout: in-flight calls will be refused at {dropped}");
            }
        }
        return std::fs::write(path, built.render())
            .map_err(|error| format!("cannot write {}: {error}", path.display()));
    }
    let Some(comparison) = comparison else {
        return Err(format!(
            "no layout file at {}: write it with `{OVERWRITE_VAR}=overwrite cargo test`, and commit it",
            path.display()
        ));
    };
    if !comparison.stranded.is_empty() {
        let mut message = format!(
            "this build would refuse calls in flight at {} suspension point(s) of {}:\n",
            comparison.stranded.len(),
            path.display()
        );
        for dropped in &comparison.stranded {
            let _ = writeln!(message, "  - {dropped}");
        }
        message.push_str(&retired_copy_advice(&comparison.stranded));
        return Err(message);
    }
    if !comparison.up_to_date() {
        let mut message = format!("the layout file {} is out of date:\n", path.display());
        for added in &comparison.added {
            let _ = writeln!(message, "  + {added}");
        }
        for dropped in &comparison.acknowledged {
            let _ = writeln!(message, "  - {dropped} (acknowledged by the version bump)");
        }
        message.push_str("Rewrite it with `SAGA_LAYOUT=overwrite cargo test`, and commit it.");
        return Err(message);
    }
    Ok(())
}

/// What to write to keep the calls of `stranded`'s tools: for each tool, the module that
/// holds its previous code unchanged (every name as it was: a renamed copy of a saved type
/// is another layout) and the line that registers it; or the version bump.
fn retired_copy_advice(stranded: &[Dropped]) -> String {
    let mut tools: Vec<(&str, u16)> = stranded
        .iter()
        .map(|dropped| (dropped.tool.as_str(), dropped.version))
        .collect();
    tools.dedup();
    let mut advice = String::from(
        "To finish those calls, keep the previous code as a retired copy: copy the old tool, \
         the types it saves and its #[saga_fn] helpers, unchanged, into a module of their own \
         (every name stays as it was; a saved type renamed is another layout), and register \
         it with `.retired(..)`:\n",
    );
    for (tool, version) in tools {
        let function = rust_ident(tool);
        let module = format!("{function}_v{version}");
        let _ = write!(
            advice,
            "\n    mod {module} {{\n        use saga_runtime::prelude::*;\n"
        );
        let _ = writeln!(
            advice,
            "        // the previous build's `{tool}` (its #[saga_tool] fn, made `pub`) and \
             the types it saves, unchanged\n    }}\n"
        );
        let _ = write!(advice, "    .retired({module}::{function})");
        if function != tool {
            let _ = write!(advice, "   // its fn's name, if not `{function}`");
        }
        advice.push('\n');
    }
    advice.push_str(
        "\nOr bump `#[saga_tool(version = N)]` to say those calls may be refused. Then rewrite \
         the file: `SAGA_LAYOUT=overwrite cargo test`.",
    );
    advice
}

/// `name` as a Rust identifier: a tool's name, which may hold `-` or `.`, as the fn of
/// its code is likely named.
fn rust_ident(name: &str) -> String {
    let mut ident = crate::engine::identifier_chars(name);
    if ident.is_empty() || ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert(0, '_');
    }
    ident
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advice_names_a_module_and_the_line_for_each_tool() {
        let dropped = |tool: &str| Dropped {
            tool: tool.into(),
            point: "AfterAsk".into(),
            version: 1,
            change: "x".into(),
        };
        let advice = retired_copy_advice(&[dropped("review_expense"), dropped("review_expense")]);
        assert_eq!(
            advice.matches("mod review_expense_v1 {").count(),
            1,
            "{advice}"
        );
        assert!(
            advice.contains(".retired(review_expense_v1::review_expense)"),
            "{advice}"
        );
        let advice = retired_copy_advice(&[dropped("book-trip")]);
        assert!(
            advice.contains(".retired(book_trip_v1::book_trip)"),
            "{advice}"
        );
        assert!(advice.contains("if not `book_trip`"), "{advice}");
    }
}
