//! Procedural macros for saga. Users depend on `saga-runtime`, which re-exports these.

mod elicit;
mod errors;
mod shared;
mod tool;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `saga_runtime::engine::Elicit` (a form-mode elicitation) for a struct of
/// primitive fields, and a single/multi select for a unit-only enum.
///
/// See the `saga-runtime` documentation of `Elicit` for the attributes.
#[proc_macro_derive(Elicit, attributes(elicit, serde))]
pub fn derive_elicit(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    elicit::derive(&input).into()
}

/// Compiles an `async fn` that awaits `elicit`, `elicit_url`, `sample`, `list_roots`,
/// `checkpoint`, `join!` or `join_all` into a `SagaTool` state machine.
///
/// # A complete tool
///
/// ```ignore
/// use saga_runtime::prelude::*;
///
/// #[derive(Elicit, Serialize, Deserialize)]
/// struct Meeting {
///     /// What it is about.
///     title: String,
///     /// Minutes.
///     #[elicit(min = 15, max = 240)]
///     duration: u32,
/// }
///
/// /// Books a meeting.                                  // the tool's description
/// #[saga_tool(title = "Book a meeting", idempotent)]
/// async fn book(
///     #[arg(description = "Who organises it.")] organiser: String,
///     #[arg(rename = "roomHint")] room: Option<String>,   // Option: not required
///     cx: &SagaContext,                                  // never saved, never in the schema
/// ) -> Result<Json<Booking>, SagaError> {
///     cx.progress(0.0, Some(2.0), Some("asking".to_owned())).await;
///     let meeting = match elicit::<Meeting>(format!("Book for {organiser}"))
///         .key("meeting")
///         .outcome()                                     // a decline is an answer
///         .await?
///     {
///         Elicited::Accepted(meeting) => meeting,
///         Elicited::Declined | Elicited::Cancelled => return Err(SagaError::msg("not booked")),
///     };
///     Ok(Json(Booking { title: meeting.title, minutes: meeting.duration, room }))
/// }
///
/// #[derive(Serialize, Deserialize, schemars::JsonSchema)]
/// struct Booking { title: String, minutes: u32, room: Option<String> }
///
/// // Registered with `.tool(book)`; tested with `saga_runtime::testing::TestClient`.
/// ```
///
/// (This crate cannot compile examples that use `saga_runtime`; the same shapes compile in
/// `saga_runtime`'s doctests, its `testing` module and `tests/tools/first_hour.rs`.)
///
/// # Attribute arguments
///
/// - `name = "…"`, `title = "…"`, `description = "…"` (the doc comment by default).
/// - The MCP tool annotations, hints shown in `tools/list`: `read_only`, `destructive`,
///   `idempotent`, `open_world`, each a flag or `= true` / `= false`.
/// - `icons = ["https://…/icon.svg", …]` and `meta = r#"{"team": "payments"}"#` (the
///   tool's `_meta`, a JSON object, checked when the tool compiles).
/// - `task` / `task = "required"`: run as a durable task (below); `version = N`: a change
///   of meaning that keeps what the tool saves (see `saga_runtime::deploy`).
/// - `deny_unknown_arguments`: an argument the tool does not declare (a misspelled
///   `cuont`) is refused, `-32602` `invalid arguments: unknown field `cuont`, expected
///   `count``, and the input schema says `"additionalProperties": false`. Without it an
///   unknown argument is ignored, as serde ignores an unknown field.
///
/// An argument that does not fit names where it is: `invalid arguments: count: invalid
/// type: string "seventy", expected u32`.
///
/// # The signature
///
/// - Each argument is a field of the input schema, deserialized from the call's
///   `arguments`; an `Option<_>` one is not required. `#[arg(description = "…")]`
///   documents it and `#[arg(rename = "…")]` gives it another name on the wire.
///   Arguments are owned values (`String`, not `&str`).
/// - A `&SagaContext` parameter (any name) gives the request's principal, the client's
///   capabilities (`cx.can_elicit()`, …) and progress:
///   `cx.progress(progress: f64, total: Option<f64>, message: Option<String>).await`, sent
///   when the client asked for progress. It is never saved nor part of the schema.
/// - The output is `String`, `&'static str`, `Vec<Content>`, `CallToolResult`, `Json<U>`
///   (structured content, and `U`'s `outputSchema`; `U: Serialize + schemars::JsonSchema`),
///   or a `Result` of one of these whose error is `Display` (`SagaError`, `anyhow::Error`,
///   …): an `Err` becomes a tool error result (`isError: true`).
/// - A question's answer: `elicit::<T>(..).await` gives `Result<T, SagaError>`, a decline
///   or a cancel being an `Err`; `elicit::<T>(..).outcome().await` gives
///   `Result<Elicited<T>, SagaError>`, to handle them. Pin `.key("…")` on requests that
///   clients or tests refer to: generated keys count the saga's requests in the order
///   asked, so they depend on the branch taken.
///
/// # What it generates
///
/// A unit struct **with the function's own name** that implements `SagaTool`: for
/// `async fn complex_tool(..)`, register it with `.tool(complex_tool)`. Its state enum has
/// one variant per suspension (`AfterElicitTarget`, …), named after what is awaited and
/// holding exactly the locals still needed after it, and one `step` runs from one
/// suspension to the next. Lints are silenced inside the generated `step`, but for the
/// function's own `#[allow(..)]`, `#[warn(..)]` and `#[deny(..)]`, which govern its body
/// there as they would in the function (`#[expect(..)]` and `#[forbid(..)]` apply to the
/// struct only).
///
/// - Run with `SAGA_MACROS_DEBUG=1` to print the expansion. The files
///   `saga-macros/tests/expand/*.expanded.rs` of the repository are examples, and
///   `examples/support/deploy_by_hand.rs` is the deploy tool written by hand.
/// - The struct's rustdoc has the tool's diagram (its suspension points and the conditions
///   between them, in Mermaid); `SagaTool::diagram()` gives its text, `tools/list` carries
///   it in the tool's `_meta` (`"saga/diagram"`) when the server lists diagrams
///   (`.diagrams_in_tool_list(true)`, off by default), and `saga graph` prints it.
///
/// # What you can write
///
/// A suspension may stand anywhere Rust evaluates an expression, and runs in Rust's
/// evaluation order. The suspensions are `elicit::<T>(message).await` (form mode),
/// `elicit_url(url, message).await`, `sample(prompt).await`, `list_roots().await`,
/// `checkpoint().await` (a round that asks nothing; the client retries at once),
/// `join!(a, b, …)` (several requests in one round, a tuple of their answers),
/// `join_all(iter).await` (any number of requests of one kind in one round, a `Vec` of
/// their answers) and the call of a `#[saga_fn]` helper. `effect(name, |key| async { … })
/// .await` runs a side effect within the round, then passes a checkpoint with its result
/// saved (it is written `{ let r = effect(..).await; checkpoint().await; r }`): a round
/// run again reads the result instead of running the effect, and `key`, the same on every
/// run of the round, is the outside service's idempotency key. A suspension may stand in:
///
/// - operands of unary, binary and compound-assignment operators (`base + n.await?`,
///   `total += n.await?`, `v[i] *= n.await?`), call and method-call arguments
///   (`v.push(x.await?)`, `f(a, x.await?, b)`), struct, tuple and array literals, indexes,
///   casts, ranges;
/// - `if`, `while` and `while let` conditions, `match` scrutinees and arms, `let` chains,
///   `break value`, `return value`, block tails;
/// - the right of `&&` and `||`: asked exactly when Rust evaluates it;
/// - the `else` of a `let … else`;
/// - the arguments of the standard macros `format!`, `write!`, `writeln!`, `print!`,
///   `println!`, `eprint!`, `eprintln!`, `format_args!`, `panic!`, `vec!` (inline
///   captures such as `{name}` and `{x:width$}` included), and the compared values of
///   `assert!`, `assert_eq!` and `assert_ne!`;
/// - loops of every kind, with labelled `break`/`continue`: a `for` over a range
///   (`0..n`, `1..=n`, `1..`) saves the range still to visit; a `for` over a chain of
///   adapters on borrowed data is recomputed (see *Borrows recomputed*); a `for` over
///   another owned iterator collects its items first (its adapters run before the loop,
///   and it must end) and saves those still to visit; a `for` over `&v`, `v.iter()`,
///   `v.iter_mut()`, `v.iter().enumerate()`, `m.iter()`, `m.keys()`, `m.values()`,
///   `m.values_mut()`, `s.chars()`, `s.chars().rev().skip(1)`, … of a `Vec`, slice, array,
///   `VecDeque`, `BTreeMap`, `BTreeSet` or `String` saves its position and borrows the item
///   again after the suspension (`tests/corpus/expressions.rs`, `borrowed_loops`, runs each
///   against the plain function); a `for` over `&map`,
///   `&mut map`, `map.iter()`, `map.iter_mut()`, `map.keys()` or `&set` of a `HashMap` or
///   `HashSet` saves the keys it has still to visit (cloned when the loop begins, in the
///   order the loop as written visits them), since two maps with the same entries may
///   iterate in different orders. Such a positioned loop may also `.zip(..)` with
///   another of these collections or with a range (`names.iter().zip(&prices)`,
///   `v.iter().zip(w.iter_mut()).enumerate()`, `items.iter().zip(1..)`, `(1..).zip(&items)`,
///   `std::iter::zip(&a, &b)`): what it zips with is borrowed for the whole loop and its
///   item found again at the same position. A `for` over `x.tool_uses()` (a sample's
///   `Turn`, or a getter of your own type so named that gives a borrow of `x`: `&[T]`,
///   `&Vec<T>`, …) resumes as an accessor's borrow does: what it gives is borrowed once,
///   and after a suspension the method is called again on `x` read back; a method that
///   computes its items (`-> Vec<T>`) is refused at the call, with the fix
///   (`x.tool_uses().to_owned()`, whose items the loop then saves). A `for` over a local
///   that is itself such a borrow (the item of an outer loop, a binding of a pattern over
///   one) is a borrowed collection too, so nested loops over a borrowed item's parts
///   resume at both positions. A `for` over a constant or a static by value (`for (label,
///   question) in STEPS`, `for word in WORDS`, `for step in tables::STEPS`: a path whose
///   last name is in upper case, as Rust names them) saves its position only: the
///   constant is named again for each item and after a suspension, and the item's
///   bindings are bound again from it, so its items need not be saved (`&'static str`
///   cannot be read back from a token). Its items read after a suspension must be `Copy`
///   (the same value when made again) and `Serialize` (the loop keeps the current item's
///   fingerprint, and its rebinding checks it); others are refused at the constant, with
///   the fix that saves them (`for kind in Vec::from(KINDS)`). A build whose constant
///   differs at the saga's position (an item inserted, removed or edited before it) ends
///   that call with an error rather than read another item or walk on through another
///   sequence, whether the item is read after the suspension or not (a `Serialize` item
///   is told apart by its fingerprint; others cannot be); one that added items after it
///   goes on, through its own constant. A binding declared `mut` (`for mut step in
///   STEPS`) may change: that loop saves its items instead.
///
/// # Values made again, not saved
///
/// A plain `let` (not `mut`) of the tools a sample offers, made from their types with
/// literal texts, is not saved: after a suspension the continuation runs the `let` again,
/// so an agent loop's token does not carry each offered tool's schema (hundreds of bytes)
/// every round. A build whose descriptions or types changed offers its own to a call in
/// flight, as a new call would. A request that reads such a value is still stated again
/// from the state (its token keeps no copy of it).
///
/// | made again | example |
/// |---|---|
/// | `SamplingTool::of::<T>(literal, literal)`, alone or in an array or `vec!` of them | `let tools = [SamplingTool::of::<Search>("search", "Search the notes"), SamplingTool::of::<AskUser>("ask_user", "Ask the person")];` |
/// | a `ToolChoice` variant | `let choice = ToolChoice::Required;` |
///
/// Anything else (a tool built with `SamplingTool::new` and a schema of its own, texts
/// from variables, a `mut` binding) is saved as any value is.
///
/// # Borrows kept across a suspension
///
/// A borrow of a place of the function's locals may be kept across a suspension: the
/// state saves the place's owner once, and after the suspension the borrow is made
/// again, from the owner read back, along the same path. Nothing is copied, and the
/// borrow sees what was changed through it before the suspension (`&mut` included).
///
/// | kept across a suspension | example |
/// |---|---|
/// | a borrow of a local, a field, a tuple or array element, an element at an index, a deref | `let first = &names[0];`, `let db = &settings.db;`, `let n = &mut counts[i];`, `let inner = &*boxed;` |
/// | the result of an accessor of a standard collection, `Option` or `str` on such a place | `names.first()`, `.last()`, `.get(i)`, `.get(&key)`, `.get_mut(0)`, `.as_ref()`, `.as_deref()`, `.as_slice()`, `.as_str()`, `.unwrap()` of those |
/// | a binding of a `match`, `if let`, `while let` or `let … else` pattern over such a borrow, or over a tuple or array of them | `match (&old, &new) { (List(a), List(b)) => … }`, `if let Some(owner) = &incident.owner`, `let Some(last) = v.last() else { … };` |
/// | the item of a `for` over a borrowed collection, and anything reached from it as above | `for src in &sources { match src { Source::Pg { dsn, .. } => … } }` |
/// | a tuple `let` of plain bindings from a tuple that mixes such borrows with values (each bound as its own `let`, in order) | `let (score, top) = (order[0].0, &entries[best]);` |
/// | a `&'static str` chosen among string literals (and constants beside at least one literal, which says the type), through `if`, `match` and blocks | `let side = if white { "White" } else { "Black" };` (saved as its text, taken back as the same literal) |
/// | a reference chosen among constants, its type written as a shared reference, through `if`, `match` and blocks; the values `Copy` and `Serialize` (`Copy` rules out interior mutability), a slice or `str` of such; not across a `#[saga_fn]` call | `let bank: &[&str] = if hard { HARD } else { EASY };`, `let limits: &Limits = match plan { Plan::Pro => &PRO, _ => &FREE };` (saved as the fingerprint of its value's postcard bytes, taken back as the constant with that value; a build whose chosen constant changed refuses the token; the value's `Serialize` tells the constants apart, so two that differ only in skipped fields are taken for each other) |
///
/// What makes the borrow the same after the suspension:
///
/// - **The path is found again from values that do not change.** An index or key that is
///   a literal or a local not declared `mut` is read again; any other (`v[i]` with `mut
///   i`, `v[i + 1]`, `m.get(&key)` with `mut key`) is evaluated once, when the borrow is
///   made, into a saved temporary, so that `i += 1` after the borrow does not move it.
/// - **The owner does not change before the suspension.** The borrow is used at the
///   suspension, so rustc refuses a change to its owner between the two (`names.push(..)`
///   while `first = &names[0]` is kept: "cannot borrow … as mutable because it is also
///   borrowed as immutable", the suspension being the later use), exactly as it refuses
///   it in the function as written. A `for` over a borrowed collection borrows it for
///   the whole loop, as the loop as written does.
/// - **The binding does not change.** A binding declared `mut` (`let mut cur = &mut a;`)
///   may point elsewhere by then, and a binding moved out by a `&` pattern is a copy:
///   those are saved as values, and a borrow among them is refused (below).
/// - **An accessor gives a borrow.** What an accessor gave is checked to be a borrow
///   where it is called again: a method of your own with such a name that computes a
///   value (`counter.get("n")` returning an `i64`) is an error at the call, whose fix,
///   `.to_owned()`, saves the value. `get()` without a key is a value's getter
///   (`Cell::get`, `NonZeroU32::get`) and is saved as any value. (One of your own that
///   returns a `&'static` borrow of something other than its receiver, such as an enum's
///   `as_str()` returning a literal, is not told apart from a borrow of it: if its owner
///   changes before the suspension, own the text, `.to_owned()`.)
/// - **A key or index read again is one that does not change.** One that is itself a
///   borrow (`steps.get(current.as_str())`) is used at the suspension too, so that rustc
///   refuses a change to what it borrows (`current = …`) before it.
/// - **Alternatives under a guard are not matched again** (`(Some(x), _) | (_, Some(x))
///   if …`): the guard may have chosen a later one, so their bindings are saved, and a
///   borrow among them must be owned.
/// - **The path is part of the point's identity.** A build that would borrow elsewhere
///   (another index, field or pattern) refuses the tokens of the older one, never reads
///   them along the new path.
///
/// # Borrows recomputed
///
/// **The rule.** A value that holds a borrow cannot be saved, so it is computed again:
///
/// - a `let` that is not `mut` whose value holds a borrow: its written type holds a
///   shared reference (`Vec<&Shard>`, `Option<&str>`, `(&Flight, &str)`), or every value
///   it can take is a borrow (a tuple of borrows and literals, `match &d { A { f } => (f,
///   "a"), … }`, or what the standard library's methods give: an iterator's item found,
///   `items.iter().max_by_key(..)`, `text.lines().next().unwrap_or("")`; a `str`'s part,
///   `name.trim()`; a map's value through `Option`'s methods,
///   `settings.get("tier").map(String::as_str)`), also when a `let … else` binds it;
/// - the iterator of a `for` loop over borrowed data (`tables.iter().filter(|t| t.dirty)`,
///   `bank.iter()`, `HARD.iter().enumerate()`, any chain of adapters);
/// - a `let mut` whose borrows the statements after it build before the next suspension
///   and that is only read afterwards (`let mut picked = Vec::new(); for s in
///   shards.iter() { if s.stale { picked.push(s); } } picked.sort_by_key(|s| s.id);`,
///   `best = Some(item)` in a loop): the `let` and those statements run again as one;
/// - a `Vec` of borrows pushed in a loop that suspends (`picked.push(t.name.as_str())`
///   after each question), and only read otherwise: the loop's position at each push is
///   saved, and each value is made again from the item at that position by the push's
///   own expression;
/// - a closure bound by a `let` that is not `mut`: its `let` runs again, capturing the
///   restored locals (a `move` closure may capture no local declared `mut`).
///
/// Each saves nothing but a fingerprint (the value's, a loop's position and its current
/// item's, each pushed value's). After a restore the expression that made it runs
/// again over the restored places, and must give a value that fingerprints alike; a
/// loop's new iterator is advanced to the saved position. Within a round everything
/// runs once, as written.
///
/// **What may be recomputed.** The expression reads no local declared `mut` (but the
/// collection a loop's first method borrows, `v.iter()`, which rustc keeps unchanged for
/// the whole loop), holds no suspension, no `&mut` and no method that takes or copies
/// its receiver (`into_…`, `drain`, `collect`, `clone`, `to_vec`, `to_owned`: such a
/// loop walks a copy, and keeps its items as before). Anything else is saved, or refused
/// with its fix, as below.
///
/// **Why it is exact, and what is refused.** While a shared borrow lives rustc forbids
/// changing what it points into, so the same expression over the same restored places
/// gives the same value. The expression runs again after every restore, so it should be
/// free of effects. What is not deterministic (a `HashMap`'s or `HashSet`'s order once
/// read back, a counter or a clock in a closure) gives another value: that round is
/// refused as a `requestState` this build reads otherwise (`-32602`; the log names the
/// local or the loop), never read as another value. A value (or a loop's item) whose
/// type is not `Serialize` cannot be fingerprinted, so it is refused where it is made,
/// with the fix: derive `Serialize`, or keep an owned value.
///
/// ```ignore
/// #[saga_tool]
/// async fn reshard(shards: Vec<Shard>) -> Result<String, SagaError> {
///     let picked: Vec<&Shard> = shards.iter().filter(|s| s.stale).collect();
///     for s in shards.iter().filter(|s| !s.stale) {
///         elicit::<bool>(format!("keep {}?", s.id)).await?;
///     }
///     let go = elicit::<bool>(format!("move {} shards?", picked.len())).await?;
///     Ok(format!("{go}: {}", picked.len()))
/// }
/// ```
///
/// # Borrows kept where they point
///
/// A value holding borrows of the tool's other kept locals that the statements before a
/// suspension built while they asked questions (`best = Some(f)` in a loop that asks,
/// `picked.push(m)` in nested loops, a `Vec<(&Draft, u32)>`, a `let x: &T` chosen by a
/// `match` whose arm asks) is saved as where each borrow points: the kept local it
/// points into (a root) and the path to the part there (a field, a `Vec`'s element, a
/// `BTreeMap`'s entry; a `HashMap`'s is refused when saved, its order changing once read
/// back), found by walking the root through its own `Serialize`. The roots are
/// the locals it is made from that are not `mut` and are declared before it (any such
/// local kept with it, when what makes it is out of sight: pushed by a macro of your
/// own); they are kept with it, read after the suspension or not, at the tool's own
/// suspensions and across a `#[saga_fn]` call that asks alike. After a restore each
/// borrow is made again at that path in the restored root, and must find a part of the
/// same type that serializes alike, or the round is refused (`-32602`, naming the local).
/// Nothing runs again: effects in the loop that built it happen once.
///
/// Kept so, by type: `&T` and `&[T]` of an owned `T`, a `&str` in a kept `String` (the
/// whole text or a part of it, found at the same bytes), and `Option`s, `Vec`s, pairs and
/// triples of them (with numbers, `bool`, `char`, `String` beside them). A `&str` is also
/// `Deserialize`, so rustc cannot tell by its type alone whether it is to be saved as it
/// is: a local holding one is kept where it points when its type is written (`let mut
/// best: Option<&str> = None;`, `let mut picked: Vec<&str> = Vec::new();`) or when what is
/// given to it plainly is a text (`Some(f.street.as_str())`, `.trim()`, a literal,
/// `&name[1..]`); otherwise the error at the local says to write the type. A text that is a
/// string literal of the tool's code is kept as the literal of the same text. A borrow
/// found in no root (a function's result, a constant's text, a `Box`'s or a `RefCell`'s
/// content, a local used by value somewhere) fails the suspension with an error naming
/// the local.
///
/// A borrow that is none of these (of a temporary, `&names.join(", ")`; returned by a
/// function, `longest(&names)`; by a method of your own, `roster.captain()`) must be
/// owned before the suspension, as the errors below say.
///
/// A request is recognised by its name as the prelude brings it (`elicit(..)`,
/// `checkpoint()`, `join!`), or by a path through `saga_runtime`; a function of your own
/// module with such a name (`db::sample(..)`) and other crates' (`futures::future::join_all`,
/// `tokio::join!`) are ordinary functions and macros.
///
/// Operands evaluated before a suspension are kept in temporaries; places (the receiver
/// of `v.push(..)`, `a[i]`) stay places. Items declared in the body (`fn`, `const`,
/// `static`, `use`, `struct`, `enum`, `impl`, `macro_rules!`) are visible everywhere in
/// it, and shadowing works as in Rust (a local may even share the tool's name). A local
/// the code after a suspension overwrites before reading it (`let x: i64;` assigned
/// later, or a value moved out and assigned again) is not saved, as in the function.
///
/// # Saved locals and their types
///
/// A local used after a suspension is saved in the state, so its type must be
/// `Serialize + DeserializeOwned`. Any such type can be saved: arguments, locals, fields
/// of your structs, `Vec`s, `Option`s and maps, in tools, `#[saga_fn]` helpers and tasks.
/// JSON-shaped data is kept as it is: a free-form `serde_json::Value` argument, a `json!`
/// local, an API response with the usual serde attributes (`skip_serializing_if`,
/// `flatten`, `default`, untagged, internally and adjacently tagged enums), rmcp's model
/// types (`Content`, `CallToolResult`), and types from crates such as chrono, uuid and
/// url.
///
/// Each saved local is encoded as postcard where postcard reads it back, and as
/// MessagePack (fields by name) where it cannot: the runtime decides once per type, when
/// the server is built, and the layout names such a local `msgpack "Type"`. Tools whose
/// locals postcard reads keep their tokens byte for byte. A type whose serde does not
/// read back what it writes (a field skipped without a default) is reported in debug
/// builds when the tool suspends, and the call then ends with a tool error.
///
/// The same tool runs, with its test, as a doctest of the guide (*Writing tools*):
///
/// ```ignore
/// use saga_runtime::prelude::*;
/// use serde_json::{Value, json};
///
/// /// Applies a free-form JSON patch once the user confirms it.
/// #[saga_tool]
/// async fn apply_patch(patch: Value) -> Result<String, SagaError> {
///     let ok: bool = elicit(format!("Apply {patch}?")).await?;
///     if !ok {
///         return Ok("nothing applied".into());
///     }
///     let fields = patch.as_object().map_or(0, |object| object.len());
///     Ok(json!({"applied": patch, "fields": fields}).to_string())
/// }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use saga_runtime::testing::{Answer, TestClient};
///
/// let patch = json!({"title": "Deploy", "labels": [{"name": "ops", "color": null}]});
/// let run = TestClient::new(apply_patch)
///     .call("apply_patch", json!({"patch": patch}))
///     .then(Answer::accept(json!({"value": true})))
///     .run()
///     .await
///     .unwrap();
/// assert_eq!(run.text(), json!({"applied": patch, "fields": 2}).to_string());
/// # }
/// ```
///
/// No type annotations are needed where rustc can infer the type: the state enum's field
/// types are inferred by rustc. Where it cannot (`let t = elicit("…").await?;` with `t`
/// used only through a method call), rustc asks for an annotation at the binding: write
/// `let t: Target = …` or `elicit::<Target>(…)`.
///
/// # Compile errors
///
/// Each refusal is an error at your code, with a fix that keeps the program's behaviour.
///
/// | you write | the error | the fix |
/// |---|---|---|
/// | a local of a type without `Serialize`/`Deserialize` used after a suspension | `` `File` is kept across a suspension point, so it must be saved in the saga's state `` at the local | derive serde for it, or stop using it before the suspension (reopen it after) |
/// | `let everyone = &names.join(", ");` (a borrow of a temporary, not of a place) used after a suspension | `` `everyone` is a borrow used after a suspension, but only owned values can be saved in the saga's state, and it does not borrow a place of the function's locals… `` | `let everyone = names.join(", ");` |
/// | `let mut count = &mut yes;` (a `mut` binding of a `&mut`, which may point elsewhere by then) used after a suspension | `` `count` is a mutable borrow used after a suspension… `` | borrow the place again after the suspension, where it is changed: `let count = if first { &mut yes } else { &mut no };` there |
/// | a borrow whose owner is changed before the suspension (`let first = &names[0]; names.push(..);`) | rustc: `` cannot borrow … as mutable because it is also borrowed as immutable ``, the suspension as the later use | as in any Rust: change the owner after the last use of the borrow, or own the value (`names[0].clone()`) |
/// | a borrowing operand before a suspension in one expression that saga cannot make again (`greeting(short(&name), ….await?)`), a `&str` from a method saga does not know (`name.split_at(1).1`), a `&'static str` returned by a function (`mode_of(fast)`), or an `Option` or `Vec` of them, kept across a suspension | `` `&str` is a borrow kept across a suspension point, but only owned values can be saved `` at the local | own it first: `let short_name = short(&name).to_owned();` / `String::from(mode_of(fast))`; or, for a `let`, write its type (`let rest: &str = name.split_at(1).1;`) |
/// | a value from a method of your own named like an accessor (`let before = counter.get("n");` returning an `i64`), kept across a suspension | `` `i64` is not a borrow, so saga cannot make this call again after the suspension `` at the call | own it where it is made: `let before = counter.get("n").to_owned();` |
/// | a borrow returned by a function (`let chosen = longest(&names);`) used after a suspension | `` `&String` is kept across a suspension point, so it must be saved in the saga's state `` at the local | `let chosen = longest(&names).clone();` |
/// | an `Rc`, `Arc`, `Cell`, `RefCell` or `Weak` local used after a suspension (its sharing would not survive the saved state) | `` `count` holds an `Rc`, a handle for sharing a value… `` at the local | hold the value itself in a `mut` local, or finish with the shared value before the suspension |
/// | a `for` over a borrowed `HashMap`'s `values()`, or over a hash map's iterator with an adapter (`map.iter().enumerate()`), with a suspension inside (it resumes by key, which these cannot be searched by) | `` a `for` loop over `Values<…>` cannot resume after a suspension `` | `for (_, value) in &map { … }`; for a count, a `let mut i = 0;` incremented in the body |
/// | a `for` that zips with a borrowed `HashMap` or `HashSet` (`names.iter().zip(&map)`) with a suspension inside (the loop resumes by position, and a hash map's order is not kept once read back) | `` a `for` loop that zips with a borrowed `HashMap<…>` cannot resume after a suspension `` | zip with a saved list: `let pairs: Vec<_> = map.iter().map(\|(k, v)\| (k.clone(), v.clone())).collect();` before the loop, then `.zip(&pairs)` |
/// | a `for` over `x.tool_uses()` where your method computes its items (`-> Vec<T>`), with a suspension inside (saga calls it again after the suspension, which keeps the behaviour only for a getter of a borrow) | `` `Vec<String>` is not a borrow, so saga cannot call this method again after the suspension `` | `for item in x.tool_uses().to_owned() { … }` |
/// | a `for` over a borrowed collection of another type (`&my_list`) with a suspension inside | `` a `for` loop over a borrowed `MyList` cannot resume after a suspension `` | iterate a saved key list (`let keys: Vec<_> = …collect(); for key in keys { … }`), or an owned copy (`for item in my_list.clone()`) |
/// | a `for` over a constant by value (`for kind in KINDS`) whose items are not `Copy` or not `Serialize`, its item read after a suspension (saga binds the item again from the constant and checks its fingerprint, which is exact only for such an item) | `` a `for` over a constant by value resumes by naming the constant again, so its items read after a suspension must be `Copy` and `Serialize`, but `Kind` is not both `` | save the items instead: `for kind in Vec::from(KINDS) { … }` (they must then be serializable) |
/// | a `for` over other borrowed items, which saga cannot borrow again by position (`names.iter().filter(..)`) | `` the items of this `for` loop are kept across a suspension, so they must be saved in the saga's state, but `&String` cannot be `` | loop by position and borrow inside (`for i in 0..v.len() { let item = &v[i]; … }`), or over owned items (`….cloned().collect::<Vec<_>>()`) |
/// | a suspension inside a macro other than the standard ones (`my_macro!(….await)`) | `` a suspension cannot be inside the arguments of `my_macro!` `` | if the macro evaluates it once, first: `let answer = ….await?;` before it; otherwise write out what the macro does |
/// | a suspension inside a closure or an `async` block | `a suspension cannot be inside a closure: the closure may run later or never…` | await in the function body, e.g. in a `for` loop |
/// | a suspension in a match guard | `a suspension cannot be in a match guard…` | `pattern => if ….await? { … } else { … }`, the `else` doing what the later arms would |
/// | a suspension in an assertion's message (`assert!(ok, "{}", ….await?)`) or anywhere in `debug_assert!` | `` a suspension cannot be in the message of `assert!`: the message is evaluated only when the assertion fails… `` | `if !ok { panic!("{}", ….await?) }`; `if cfg!(debug_assertions) { … }` |
/// | `let r = elicit::<String>("x"); r.await` | `` `elicit(..)` is not awaited where it is made `` | `elicit::<String>("x").await` (or `join!` / `join_all` for several) |
/// | `ask(..).await?` where `fn ask(..) -> ElicitForm<bool>` is a plain function | `` … is a request returned by a function, and a saga cannot suspend at it `` at the call | make `ask` a `#[saga_fn]` that awaits the request, or make the request in the tool |
/// | `join_all(..)` inside `join!` | `` `join_all(..)` is a round of its own and cannot be in `join!` `` | await it before or after the `join!` (two rounds) |
/// | `join_all(..).await?` (a `Vec` of answers) or `join!(..)?` (a tuple) | one error at the `?` | `join_all(..).await.into_iter().collect::<Result<Vec<_>, _>>()?`; `?` each answer of a `join!` |
/// | `elicit(..).await` inside a plain `async fn` | rustc: `` `ElicitForm<bool>` is not a future `` at the `.await` | mark that function `#[saga_fn]` |
/// | a `#[saga_fn]` that calls itself, directly or through another | `` `walk` calls itself, but a #[saga_fn] cannot be recursive… `` at the call (indirect cycles are rustc's E0733, "recursion in an async fn requires boxing") | loop instead: keep a `Vec` of work to do in a local |
/// | a `#[saga_fn]` that uses a `&mut` parameter, or one whose type holds a borrow other than a plain `&T` (`Option<&str>`), after its first suspension | `` `what` is a mutable borrow (`&mut Vec<String>`) used after a suspension… `` at the parameter | take it by value and return it (`&mut`), or take it owned (`Option<String>`) |
/// | `Self::ask(..)` inside an associated `#[saga_fn]` | `` `Self` cannot be used in a #[saga_fn]… `` | name the type: `Wizard::ask(..)` |
/// | a non-`async`, generic, `self`-taking or destructuring function | ``#[saga_tool] needs an `async fn` `` / `#[saga_tool] functions cannot be generic…` / ``#[saga_tool] goes on a function without `self`…`` / `a tool argument is a plain name…` / `tool arguments are owned…` | a free `async fn` of named, owned arguments |
/// | `#[saga_tool(nam = "x")]` | `unknown #[saga_tool] argument…` (lists them) | `name`, `title`, `description`, `read_only`, `destructive`, `idempotent`, `open_world`, `icons`, `meta`, `task`, `version`, `deny_unknown_arguments` |
/// | a field of an unsupported type in `#[derive(Elicit)]` | `` `Vec<String>` cannot be a field of an elicitation form `` with the allowed types | a primitive, a unit enum, `Vec` of a unit enum, or `Option` of these |
/// | `anyhow::bail!`, `ensure!` or any macro that expands to `return Err(..)` / `?` | no error: it works when the output is written `Result<..>` (`anyhow::Result<T>` included) or `Option<..>`, and the saga ends with that error (below) | — (an output named by an alias that does not end in `Result` is not covered) |
///
/// A `return` or `?` that the macro cannot see, inside another crate's macro
/// (`anyhow::bail!(..)`, `anyhow::ensure!(..)`) or a `macro_rules!` of yours, ends the
/// saga with its error, before or after a suspension and in loops, as it leaves the
/// function; for that the output is written `Result<..>` (any path ending in `Result`,
/// `anyhow::Result<T>` included) or `Option<..>`. Such a hidden `return` may only give an
/// error (`Err(..)`, `None`): one that gives a value (`return Ok(..)`) is a type error.
///
/// A local partly moved before a suspension (`let a = pair.0;`) and partly used after it
/// is saved whole, which rustc refuses as a use of a partially moved value: move the
/// other part out before the suspension too (`let b = pair.1;`).
///
/// # What the token carries
///
/// At a suspension the token holds the saved locals and, for each request of the round,
/// its kind and key. When the client sends the round back with an answer missing, or with
/// a form answer that does not fit, the round is asked again (a form whose answer did not
/// fit ends its message with the reason: "Your last answer was not accepted: `duration`
/// is above the maximum 240."); the tool builds its requests again from the saved locals instead of the token keeping them, when
///
/// - each request expression is pure: literals, locals, field reads, borrows, operators,
///   casts, `format!`/`concat!`/`vec!`, the request functions and their builder calls
///   (`.key(..)`, `.max_tokens(..)`, `.system(..)`, …), and the read-only conversions
///   `clone`, `to_string`, `to_owned`, `as_str`, `into`, `trim`, `to_uppercase`,
///   `to_lowercase`; and
/// - every local it reads is saved at that suspension anyway (used after it).
///
/// ```ignore
/// let target: Target = elicit("Where to?").await?;                   // built again
/// let ok = sample(format!("Is {} safe?", target.name)).await?;       // built again
/// let x: String = elicit(prompt_for(&target)).await?;               // kept: your function
/// ```
///
/// Nothing else of the tool runs when it builds them again. A request made by a function
/// of yours, a URL elicitation (its id is drawn when it is sent), or one that reads a local
/// not used after the suspension is kept in the token as JSON, as a hand-written tool's
/// requests are, and so is one formatted with `{:?}` (a `HashMap` read back from the
/// state prints in another order). The `Display` of what a `format!` reads must give the
/// same text each time, as it does for strings, numbers and fields.
///
/// `#[saga_tool(task)]` lets the tool run as a durable task (MCP tasks extension) for a
/// client that declares it, on a server with a `TaskStore`; the task begins at the
/// function's first `checkpoint()`, and what it asks before that is asked over MRTR.
/// `#[saga_tool(task = "required")]` runs it only as a task: a client without the
/// extension gets `-32021`.
///
/// A helper that suspends is a `#[saga_fn]`, awaited like any `async fn`:
/// `confirm(&path).await?`. See [`macro@saga_fn`].
#[proc_macro_attribute]
pub fn saga_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand(args.into(), input.into()).into()
}

/// Makes an `async fn` a helper that suspends: it may await everything a `#[saga_tool]`
/// may (`elicit`, `sample`, `list_roots`, `checkpoint`, `join!`, `join_all`, other
/// helpers, ordinary futures), and a tool or another helper calls it with `.await`
/// wherever a suspension may stand (loops, `?`, nested calls, any number of call sites).
///
/// ```ignore
/// #[saga_fn]
/// async fn confirm(what: &str) -> Result<bool, SagaError> {
///     elicit::<bool>(format!("Confirm {what}?")).await
/// }
///
/// #[saga_tool]
/// async fn cleanup(paths: Vec<String>) -> Result<String, SagaError> {
///     let mut removed = Vec::new();
///     for p in &paths {
///         if confirm(p).await? {
///             removed.push(p.clone());
///         }
///     }
///     Ok(format!("removed {}", removed.join(", ")))
/// }
/// ```
///
/// # How it works
///
/// The helper compiles, like a tool, to a state machine; the function keeps its name and
/// parameters and returns a `SagaCall` of its arguments. The saga that awaits it runs the
/// helper's first transition at once; when the helper suspends, the caller saves the
/// helper's state inside its own and asks the helper's requests in its round. The helper's
/// saved locals therefore nest inside the caller's state, and each call site has its own.
///
/// A call `f(..).await` in a saga may be a helper or an ordinary `async fn`; the types
/// decide. An ordinary future is awaited in place and never suspends the saga. (Calls of
/// functions of `std`, `tokio`, `futures`, `reqwest` and a few other crates that cannot
/// define helpers are awaited as written.)
///
/// # Rules
///
/// - What a helper may contain is what a `#[saga_tool]` may: see its documentation
///   ("What you can write"). Its locals used after a suspension are saved, so their types
///   must be `Serialize + DeserializeOwned`.
/// - Its parameters may borrow (`&str`, `&[T]`, `&T`, `&mut Vec<T>`). A shared `&T` used
///   after the helper's first suspension is kept as an owned copy, taken when the helper
///   starts (`T::to_owned()`: a `String` for `&str`, a `Vec` for `&[T]`, a clone for
///   `&T`), saved with its state, and the parameter is borrowed again from it after a
///   restore: the caller lends it for the whole call, so the copy reads the same. The
///   owned form must be `Serialize + DeserializeOwned` (an error at the parameter says
///   so). The helper reads and writes that copy: a change it makes through interior
///   mutability (an atomic or a `Mutex` in the value; `Cell` and `RefCell` cannot be
///   lent across a suspension, not being `Sync`) is not seen by the caller. To hand such
///   a change back, take the value by value and return it. A `&mut` used after the first suspension is an error at the parameter (a copy
///   would lose the caller's changes): take it by value and return it. A
///   `&SagaContext` parameter is the caller's context, usable throughout.
/// - It may be a free function or an associated one, without `self`, and not generic.
///   Inside an associated helper, name the type (`Wizard::ask(..)`), not `Self`: the
///   body is compiled into a state machine of its own, where `Self` would name that.
/// - It may return `Result`, `Option` (`?` works on either, as in the function), `()` or
///   any other type.
/// - A `&mut` parameter changed after the first suspension is refused (the change could
///   not reach the caller): take the value and return it.
/// - It cannot call itself: that is an error at the call, since its state would contain
///   itself. Indirect recursion (`a` awaits `b`, which awaits `a`), and an associated
///   helper calling itself through its type's path (`Tree::walk` in `walk`), are
///   refused by rustc as a recursive `async fn` ("recursion in an async fn requires
///   boxing", whose `Box::pin` advice does not apply): write it as a loop.
/// - Only a `#[saga_tool]` or a `#[saga_fn]` can await a helper or a request. Awaiting
///   one in a plain `async fn`, a closure or an `async` block is an error at the `.await`
///   (rustc's "`SagaCall<..>` is not a future", "`ElicitForm<..>` is not a future"): add
///   `#[saga_fn]` to that function, or await outside the closure or block. rustc also
///   suggests removing the `.await`, which would ask nothing: that error is in a function
///   saga does not compile, so saga cannot reword it.
#[proc_macro_attribute]
pub fn saga_fn(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand_helper(args.into(), input.into()).into()
}

/// `#[saga_tool]` for a prompt: the function returns `Result<Prompt, E>` and is
/// registered with `SagaServer::builder().prompt(..)`; its arguments (strings) are the
/// prompt's arguments. Another return type is a compile error on it, and so is
/// registering a `#[saga_tool]` as a prompt (the struct implements `SagaPrompt`, which
/// `.prompt(..)` requires).
#[proc_macro_attribute]
pub fn saga_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand_as(tool::ServedAs::Prompt, args.into(), input.into()).into()
}

/// `#[saga_tool]` for a resource: the function takes `uri: String` (and, for a template,
/// one `String` per template variable), returns `Result<Contents, E>`, and is registered
/// with `SagaServer::builder().resource(uri, ..)` or `.resource_template(template, ..)`.
/// Another return type is a compile error on it; the struct implements `SagaResource`,
/// which those registrations require.
#[proc_macro_attribute]
pub fn saga_resource(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand_as(tool::ServedAs::Resource, args.into(), input.into()).into()
}
