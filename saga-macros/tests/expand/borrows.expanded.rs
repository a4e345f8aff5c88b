/// Asks about each database source, keeping borrows of the loop's item across the
/// suspension: the state saves `sources` and the loop's position, and the continuation
/// borrows `src`, `name` and `tables` again.
#[saga_tool]
/**

# Diagram

Where this saga suspends and how it gets there, as `#[saga_tool]` compiled it (Mermaid; `SagaTool::diagram()` gives the text):

<pre class="mermaid saga-diagram">
stateDiagram-v2
    Start : borrows(sources, fast)
    state Loop1 &lt;&lt;choice&gt;&gt;
    AfterElicitPick : elicit String
    AfterElicitPick : format!("Tables of {name} ({mode})?")
    Done : result
    Done : Ok(format!("{} ({mode})", done.join(", ")))
    Failed : error from ?
    [*] --&gt; Start
    Start --&gt; Loop1
    Loop1 --&gt; AfterElicitPick : for src in &amp;sources, if let Source∶∶Db { name, tables } = src
    AfterElicitPick --&gt; Failed : ?
    AfterElicitPick --&gt; Loop1 : next
    Loop1 --&gt; Loop1 : for src in &amp;sources, if !(let Source∶∶Db { name, tables } = src), next
    Loop1 --&gt; Done : done
    Done --&gt; [*]
    Failed --&gt; [*]
</pre>

<script type="module">
const dark = ["dark", "ayu"].includes(document.documentElement.dataset.theme);
const { default: mermaid } = await import("https://cdn.jsdelivr.net/npm/mermaid@12.3.0/dist/mermaid.esm.min.mjs");
mermaid.initialize({ startOnLoad: false, theme: dark ? "dark" : "default" });
await mermaid.run({ querySelector: "pre.saga-diagram" });
</script>
*/
#[allow(non_camel_case_types)]
#[derive(
    ::core::clone::Clone,
    ::core::marker::Copy,
    ::core::fmt::Debug,
    ::core::default::Default
)]
struct borrows;
#[doc(hidden)]
#[allow(non_camel_case_types)]
#[derive(
    ::saga_runtime::__private::serde::Deserialize,
    ::saga_runtime::__private::schemars::JsonSchema
)]
#[serde(crate = "::saga_runtime::__private::serde")]
#[schemars(crate = "::saga_runtime::__private::schemars")]
struct __saga_args_borrows {
    pub sources: Vec<Source>,
    pub fast: bool,
}
const _: () = {
    #[allow(dead_code)]
    #[inline(always)]
    fn saga_calls_this_again<__T>(__saga_value: __T) -> __T
    where
        ::saga_runtime::__private::Gives: ::saga_runtime::__private::Borrowed<__T>,
    {
        ::saga_runtime::__private::borrowed(__saga_value)
    }
    #[allow(dead_code)]
    #[inline]
    fn saga_calls_this_getter_again<
        '__a,
        __G: ::saga_runtime::__private::BorrowedItems<'__a>,
    >(
        __saga_got: __G,
    ) -> &'__a <__G as ::saga_runtime::__private::BorrowedItems<'__a>>::Collection {
        ::saga_runtime::__private::borrowed_items(__saga_got)
    }
    #[allow(dead_code)]
    #[inline]
    fn saga_saves_this_local<
        __K: ::saga_runtime::__private::CallSaves,
        __T: ::saga_runtime::__private::SavedLocal<
                <__K as ::saga_runtime::__private::CallSaves>::Across,
                __M,
            >,
        __M,
    >(
        __saga_site: &__K,
        __saga_local: __T,
    ) -> <__T as ::saga_runtime::__private::SavedLocal<
        <__K as ::saga_runtime::__private::CallSaves>::Across,
        __M,
    >>::Kept {
        ::saga_runtime::__private::keep(__saga_site, __saga_local)
    }
    /// Per suspension: whether the step states its requests again when asked, so
    /// that the token keeps none of them.
    #[allow(dead_code)]
    const __SAGA_RESTATED: &[bool] = &[false];
    #[allow(non_camel_case_types, clippy::enum_variant_names)]
    enum __State<T0, T1, T2, T3, T4, R5> {
        /// Suspended at `let pick: String = elicit(format!("Tables of {name} ({mode})?")).await?;`
        AfterElicitPick {
            __item1: T0,
            sources: T1,
            mode: T2,
            done: T3,
            __pos1: T4,
            __m0: ::saga_runtime::__private::Marker<R5>,
        },
    }
    #[allow(unreachable_code, unused_variables, clippy::match_single_binding)]
    impl<T0, T1, T2, T3, T4, R5> ::saga_runtime::__private::StateEnum
    for __State<T0, T1, T2, T3, T4, R5>
    where
        T0: ::saga_runtime::__private::SlotField,
        T1: ::saga_runtime::__private::SlotField,
        T2: ::saga_runtime::__private::SlotField,
        T3: ::saga_runtime::__private::SlotField,
        T4: ::saga_runtime::__private::SlotField,
    {
        const SHAPE: ::saga_runtime::__private::StateShape = ::saga_runtime::__private::StateShape {
            name: "__State",
            variants: &["AfterElicitPick"],
            fields: &[&["__item1", "sources", "mode", "done", "__pos1", "__m0"]],
        };
        fn tagged() -> &'static ::core::sync::atomic::AtomicBool {
            static TAGGED: ::core::sync::atomic::AtomicBool = ::core::sync::atomic::AtomicBool::new(
                false,
            );
            &TAGGED
        }
        fn write(&self, __writer: &mut ::saga_runtime::__private::StateWriter) {
            match *self {
                __State::AfterElicitPick {
                    __item1: ref __v0,
                    sources: ref __v1,
                    mode: ref __v2,
                    done: ref __v3,
                    __pos1: ref __v4,
                    ..
                } => {
                    __writer.variant(0u32);
                    __writer.field(__v0);
                    __writer.field(__v1);
                    __writer.field(__v2);
                    __writer.field(__v3);
                    __writer.field(__v4);
                }
            }
        }
        fn read(
            __reader: &mut ::saga_runtime::__private::StateReader<'_>,
        ) -> ::core::result::Result<Self, ::saga_runtime::__private::StateError> {
            ::core::result::Result::Ok(
                match __reader.variant()? {
                    0u32 => {
                        let ::core::option::Option::Some(__v0) = __reader.field() else {
                            return ::core::result::Result::Err(__reader.failed());
                        };
                        let ::core::option::Option::Some(__v1) = __reader.field() else {
                            return ::core::result::Result::Err(__reader.failed());
                        };
                        let ::core::option::Option::Some(__v2) = __reader.field() else {
                            return ::core::result::Result::Err(__reader.failed());
                        };
                        let ::core::option::Option::Some(__v3) = __reader.field() else {
                            return ::core::result::Result::Err(__reader.failed());
                        };
                        let ::core::option::Option::Some(__v4) = __reader.field() else {
                            return ::core::result::Result::Err(__reader.failed());
                        };
                        __State::AfterElicitPick {
                            __item1: __v0,
                            sources: __v1,
                            mode: __v2,
                            done: __v3,
                            __pos1: __v4,
                            __m0: ::core::marker::PhantomData,
                        }
                    }
                    _ => return ::core::result::Result::Err(__reader.unknown_variant()),
                },
            )
        }
        fn render(&self, __render: &mut ::saga_runtime::__private::StateRender) {
            match *self {
                __State::AfterElicitPick {
                    __item1: ref __v0,
                    sources: ref __v1,
                    mode: ref __v2,
                    done: ref __v3,
                    __pos1: ref __v4,
                    ..
                } => {
                    __render.variant("AfterElicitPick");
                    __render
                        .field(
                            "__item1",
                            ::saga_runtime::__private::SlotField::shown(__v0),
                        );
                    __render
                        .field(
                            "sources",
                            ::saga_runtime::__private::SlotField::shown(__v1),
                        );
                    __render
                        .field(
                            "mode",
                            ::saga_runtime::__private::SlotField::shown(__v2),
                        );
                    __render
                        .field(
                            "done",
                            ::saga_runtime::__private::SlotField::shown(__v3),
                        );
                    __render
                        .field(
                            "__pos1",
                            ::saga_runtime::__private::SlotField::shown(__v4),
                        );
                }
            }
        }
        fn trace_field(
            __variant: u32,
            __field: usize,
            __tracer: ::saga_runtime::__private::FieldTracer<'_, '_>,
        ) -> ::core::result::Result<(), ::saga_runtime::__private::LayoutError> {
            match (__variant, __field) {
                (0u32, 0usize) => {
                    ::saga_runtime::__private::trace_slot::<
                        <T0 as ::saga_runtime::__private::SlotField>::Shown,
                    >(__tracer)
                }
                (0u32, 1usize) => {
                    ::saga_runtime::__private::trace_slot::<
                        <T1 as ::saga_runtime::__private::SlotField>::Shown,
                    >(__tracer)
                }
                (0u32, 2usize) => {
                    ::saga_runtime::__private::trace_slot::<
                        <T2 as ::saga_runtime::__private::SlotField>::Shown,
                    >(__tracer)
                }
                (0u32, 3usize) => {
                    ::saga_runtime::__private::trace_slot::<
                        <T3 as ::saga_runtime::__private::SlotField>::Shown,
                    >(__tracer)
                }
                (0u32, 4usize) => {
                    ::saga_runtime::__private::trace_slot::<
                        <T4 as ::saga_runtime::__private::SlotField>::Shown,
                    >(__tracer)
                }
                (0u32, 5usize) => {
                    __tracer
                        .marker(
                            ::core::any::type_name::<
                                ::core::marker::PhantomData<
                                    ::saga_runtime::__private::Marker<R5>,
                                >,
                            >(),
                        )
                }
                _ => __tracer.missing(),
            }
        }
    }
    impl borrows {
        #[doc(hidden)]
        fn __finish(
            output: Result<String, SagaError>,
        ) -> ::saga_runtime::__private::Step<
            ::saga_runtime::__private::MacroState<__saga_args_borrows>,
        > {
            ::saga_runtime::__private::done(output)
        }
    }
    impl ::saga_runtime::__private::SagaTool for borrows {
        type State = ::saga_runtime::__private::MacroState<__saga_args_borrows>;
        fn tool(&self) -> ::saga_runtime::__private::Tool {
            let mut tool = ::saga_runtime::__private::described(
                "borrows",
                ::saga_runtime::__private::args_schema::<__saga_args_borrows>(),
            );
            tool.description = ::core::option::Option::Some(
                "Asks about each database source, keeping borrows of the loop's item across the\nsuspension: the state saves `sources` and the loop's position, and the continuation\nborrows `src`, `name` and `tables` again."
                    .into(),
            );
            tool.meta = ::saga_runtime::__private::with_diagram(
                tool.meta.take(),
                "stateDiagram-v2\n    Start : borrows(sources, fast)\n    state Loop1 <<choice>>\n    AfterElicitPick : elicit String\n    AfterElicitPick : format!(\"Tables of {name} ({mode})?\")\n    Done : result\n    Done : Ok(format!(\"{} ({mode})\", done.join(\", \")))\n    Failed : error from ?\n    [*] --> Start\n    Start --> Loop1\n    Loop1 --> AfterElicitPick : for src in &sources, if let Source∶∶Db { name, tables } = src\n    AfterElicitPick --> Failed : ?\n    AfterElicitPick --> Loop1 : next\n    Loop1 --> Loop1 : for src in &sources, if !(let Source∶∶Db { name, tables } = src), next\n    Loop1 --> Done : done\n    Done --> [*]\n    Failed --> [*]\n",
            );
            tool.output_schema = <Result<
                String,
                SagaError,
            > as ::saga_runtime::__private::ToolOutput>::output_schema();
            tool
        }
        fn build_tag(&self) -> u16 {
            39699u16
        }
        fn layout(
            &self,
        ) -> ::core::result::Result<
            ::saga_runtime::__private::StateLayout,
            ::saga_runtime::__private::LayoutError,
        > {
            ::saga_runtime::__private::macro_layout(self)
        }
        fn state_names(&self) -> &'static [&'static str] {
            &["AfterElicitPick"]
        }
        fn diagram(&self) -> ::std::string::String {
            ::std::string::String::from(
                "stateDiagram-v2\n    Start : borrows(sources, fast)\n    state Loop1 <<choice>>\n    AfterElicitPick : elicit String\n    AfterElicitPick : format!(\"Tables of {name} ({mode})?\")\n    Done : result\n    Done : Ok(format!(\"{} ({mode})\", done.join(\", \")))\n    Failed : error from ?\n    [*] --> Start\n    Start --> Loop1\n    Loop1 --> AfterElicitPick : for src in &sources, if let Source∶∶Db { name, tables } = src\n    AfterElicitPick --> Failed : ?\n    AfterElicitPick --> Loop1 : next\n    Loop1 --> Loop1 : for src in &sources, if !(let Source∶∶Db { name, tables } = src), next\n    Loop1 --> Done : done\n    Done --> [*]\n    Failed --> [*]\n",
            )
        }
        fn state_json(
            &self,
            __state: Self::State,
        ) -> ::core::result::Result<
            ::saga_runtime::__private::serde_json::Value,
            ::std::string::String,
        > {
            ::saga_runtime::__private::macro_state_json(self, __state)
        }
        fn start(
            &self,
            __arguments: ::saga_runtime::__private::JsonObject,
        ) -> ::core::result::Result<Self::State, ::saga_runtime::__private::ErrorData> {
            ::saga_runtime::__private::start(__arguments)
        }
        #[allow(
            unreachable_code,
            unused_variables,
            unused_mut,
            unused_labels,
            unused_assignments,
            non_shorthand_field_patterns,
            clippy::all
        )]
        async fn step(
            &self,
            __state: Self::State,
            mut __answers: ::saga_runtime::__private::Answers,
            __cx: &::saga_runtime::__private::SagaContext,
        ) -> ::saga_runtime::__private::Step<Self::State> {
            let _ = __cx;
            let __exit = ::saga_runtime::__private::opaque(async move {
                    let __slot: ::saga_runtime::__private::StateSlot<
                        __State<_, _, _, _, _, _>,
                    > = ::core::marker::PhantomData;
                    match __state {
                        ::saga_runtime::__private::MacroState::Start(
                            __saga_args_borrows { sources, fast },
                        ) => {
                            let __step = {
                                let mode = if fast { "fast" } else { "slow" };
                                let mut done = Vec::new();
                                let __walk1 = ::saga_runtime::__private::ordered(&sources);
                                let mut __pos1 = ::saga_runtime::__private::cursor(
                                    &*__walk1,
                                );
                                loop {
                                    let __item1 = ::saga_runtime::__private::advance(
                                        &mut __pos1,
                                    );
                                    let ::core::option::Option::Some(src) = ::saga_runtime::__private::item_at(
                                        &__item1,
                                        __walk1,
                                    ) else {
                                        break;
                                    };
                                    {
                                        if let Source::Db { name: name, tables: tables } = src {
                                            let __a0 = {
                                                let __request0 = elicit(
                                                    format!("Tables of {name} ({mode})?"),
                                                );
                                                let __mark0 = ::saga_runtime::__private::marker(
                                                    &__request0,
                                                );
                                                ::saga_runtime::__private::keep_alive(&name);
                                                ::saga_runtime::__private::keep_alive(&tables);
                                                ::saga_runtime::__private::keep_alive(&__walk1);
                                                ::core::mem::drop(__walk1);
                                                return ::core::result::Result::Ok(
                                                    ::saga_runtime::__private::suspend(
                                                        &__slot,
                                                        __State::AfterElicitPick {
                                                            __item1: saga_saves_this_local(
                                                                &::saga_runtime::__private::ASuspension,
                                                                __item1,
                                                            ),
                                                            sources: saga_saves_this_local(
                                                                &::saga_runtime::__private::ASuspension,
                                                                sources,
                                                            ),
                                                            mode: saga_saves_this_local(
                                                                &::saga_runtime::__private::ASuspension,
                                                                ::saga_runtime::__private::Literal::of(mode),
                                                            ),
                                                            done: saga_saves_this_local(
                                                                &::saga_runtime::__private::ASuspension,
                                                                done,
                                                            ),
                                                            __pos1: saga_saves_this_local(
                                                                &::saga_runtime::__private::ASuspension,
                                                                __pos1,
                                                            ),
                                                            __m0: __mark0,
                                                        },
                                                        {
                                                            let mut __round = ::std::vec::Vec::new();
                                                            ::saga_runtime::__private::requests(
                                                                &mut __round,
                                                                __request0,
                                                            );
                                                            ::saga_runtime::__private::restatable(
                                                                &mut __round,
                                                                __SAGA_RESTATED[0usize],
                                                            );
                                                            __round
                                                        },
                                                    ),
                                                );
                                                ::saga_runtime::__private::answer(
                                                    __mark0,
                                                    &mut __answers,
                                                    0,
                                                )
                                            };
                                            let pick: String = __a0?;
                                            done.push(format!("{name}: {pick} of {}", tables.len()));
                                        }
                                    }
                                }
                                ::core::result::Result::Ok(
                                    Self::__finish(Ok(format!("{} ({mode})", done.join(", ")))),
                                )
                            };
                            if let ::core::option::Option::Some(__state) = ::saga_runtime::__private::slot_state(
                                &__slot,
                            ) {
                                struct __SagaProbe<T: ?::core::marker::Sized>(
                                    ::core::marker::PhantomData<T>,
                                );
                                trait __SagaProbeOf {
                                    type Probe;
                                    fn __saga_probe(&self) -> Self::Probe;
                                }
                                impl<T> __SagaProbeOf
                                for ::saga_runtime::__private::Slot<T> {
                                    type Probe = __SagaProbe<T>;
                                    fn __saga_probe(&self) -> __SagaProbe<T> {
                                        __SagaProbe(::core::marker::PhantomData)
                                    }
                                }
                                struct ABorrow;
                                struct __SagaOwned;
                                trait __SagaViaBorrow {
                                    fn __saga_kind(&self) -> ABorrow {
                                        ABorrow
                                    }
                                }
                                impl<'a, T: ?::core::marker::Sized> __SagaViaBorrow
                                for __SagaProbe<&'a T>
                                where
                                    &'a T: ::saga_runtime::__private::serde::Deserialize<'a>,
                                {}
                                impl<'a, T: ?::core::marker::Sized> __SagaViaBorrow
                                for __SagaProbe<::core::option::Option<&'a T>>
                                where
                                    &'a T: ::saga_runtime::__private::serde::Deserialize<'a>,
                                {}
                                impl<'a, T: ?::core::marker::Sized> __SagaViaBorrow
                                for __SagaProbe<::std::vec::Vec<&'a T>>
                                where
                                    &'a T: ::saga_runtime::__private::serde::Deserialize<'a>,
                                {}
                                trait __SagaViaOwned {
                                    fn __saga_kind(&self) -> __SagaOwned {
                                        __SagaOwned
                                    }
                                }
                                impl<T: ?::core::marker::Sized> __SagaViaOwned
                                for &__SagaProbe<T> {}
                                #[diagnostic::on_unimplemented(
                                    message = "`{L}` is a borrow kept across a suspension point, but only owned values can be saved in the saga's state",
                                    label = "this borrow is used after a suspension",
                                    note = "the locals used after `elicit`, `sample`, `list_roots`, `checkpoint`, `join!` or a `#[saga_fn]` are saved in the requestState token and read back by a later request, where what they borrow is gone (and a `&'static str` cannot be read back either)",
                                    note = "saga makes a borrow again after the suspension only when it borrows a place of the function's locals (a local, a field, an element, a standard accessor such as `.first()` or `.as_str()` of one) or is a `&'static str` chosen among literals, or a reference chosen among constants with its type written (`let bank: &[&str] = if hard { HARD } else { EASY };`); hold an owned value instead (`.to_owned()`, `.to_string()`, `.clone()`; for a `&'static str` a function returned, `String::from(..)`, with `.as_str()` where a `&str` is needed; for an operand evaluated before a suspension in the same expression, `let trimmed = name.trim().to_owned();` before it), or, when a `let` that is not `mut` binds it, write the `let`'s type (`let best: &Item = pick_best(&items);`): saga then computes it again after the suspension, from what it reads, and checks it is the same; a `&str` into a `String` kept with it (a field of an argument, an element of a kept `Vec`), assigned or pushed in code that suspends, is kept as where it points when the local's type is written (`let mut best: Option<&str> = None;`, `let mut picked: Vec<&str> = Vec::new();`): write it"
                                )]
                                trait SavedOwned<L: ?::core::marker::Sized> {}
                                #[diagnostic::do_not_recommend]
                                impl<L: ?::core::marker::Sized> SavedOwned<L>
                                for __SagaOwned {}
                                fn saga_saves_only_owned_values<
                                    L: ?::core::marker::Sized,
                                    K: SavedOwned<L>,
                                >(_: &__SagaProbe<L>, _: K) {}
                                match __state {
                                    __State::AfterElicitPick {
                                        __item1: __item1,
                                        sources: sources,
                                        mode: mode,
                                        done: done,
                                        __pos1: __pos1,
                                        ..
                                    } => {
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(__item1);
                                            let __kind = (&__probe).__saga_kind();
                                            saga_saves_only_owned_values(&__probe, __kind);
                                        }
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(sources);
                                            let __kind = (&__probe).__saga_kind();
                                            saga_saves_only_owned_values(&__probe, __kind);
                                        }
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(mode);
                                            let __kind = (&__probe).__saga_kind();
                                            saga_saves_only_owned_values(&__probe, __kind);
                                        }
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(done);
                                            let __kind = (&__probe).__saga_kind();
                                            saga_saves_only_owned_values(&__probe, __kind);
                                        }
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(__pos1);
                                            let __kind = (&__probe).__saga_kind();
                                            saga_saves_only_owned_values(&__probe, __kind);
                                        }
                                    }
                                    #[allow(unreachable_patterns)]
                                    _ => {}
                                }
                            }
                            __step
                        }
                        ::saga_runtime::__private::MacroState::Trace => {
                            ::saga_runtime::__private::record_state(
                                &__slot,
                                &["borrows 2de9de11"],
                            );
                            return ::core::result::Result::Ok(
                                ::saga_runtime::__private::traced(),
                            );
                        }
                        ::saga_runtime::__private::MacroState::Inspect(__bytes) => {
                            return ::core::result::Result::Ok(
                                ::saga_runtime::__private::inspected(&__slot, &__bytes),
                            );
                        }
                        ::saga_runtime::__private::MacroState::Inspected(_) => {
                            return ::core::result::Result::Ok(
                                ::saga_runtime::__private::failed(
                                    "an inspection's answer is not a mode of the step",
                                ),
                            );
                        }
                        __resuming @ (::saga_runtime::__private::MacroState::Resume(_)
                        | ::saga_runtime::__private::MacroState::Restate(_)) => {
                            let __bytes = ::saga_runtime::__private::resumed(
                                __resuming,
                                &mut __answers,
                            );
                            let __resumed = match ::saga_runtime::__private::decode(
                                &__slot,
                                &__bytes,
                            ) {
                                ::core::result::Result::Ok(__state) => __state,
                                ::core::result::Result::Err(__error) => {
                                    return ::core::result::Result::Ok(
                                        ::saga_runtime::__private::undecodable(&__error),
                                    );
                                }
                            };
                            match __resumed {
                                __State::AfterElicitPick {
                                    __item1: __saved___item1,
                                    sources: __saved_sources,
                                    mode: __saved_mode,
                                    done: __saved_done,
                                    __pos1: __saved___pos1,
                                    __m0: __mark0,
                                } => {
                                    let sources = ::saga_runtime::__private::restore(
                                        __saved_sources,
                                    );
                                    let mode = ::saga_runtime::__private::Literal::pick(
                                        ::saga_runtime::__private::restore(__saved_mode),
                                        &["fast", "slow"],
                                    );
                                    let mut done = ::saga_runtime::__private::restore(
                                        __saved_done,
                                    );
                                    let mut __pos1 = ::saga_runtime::__private::restore(
                                        __saved___pos1,
                                    );
                                    let __walk1 = ::saga_runtime::__private::again(
                                        ::saga_runtime::__private::ordered(&sources),
                                    );
                                    {
                                        '__peel0_0: {
                                            let __item1 = ::saga_runtime::__private::restore(
                                                __saved___item1,
                                            );
                                            let ::core::option::Option::Some(src) = ::saga_runtime::__private::again(
                                                ::saga_runtime::__private::item_at(&__item1, __walk1),
                                            ) else {
                                                ::core::unreachable!(
                                                    "a place borrowed across a suspension changed"
                                                )
                                            };
                                            {
                                                {
                                                    #[allow(irrefutable_let_patterns)]
                                                    let Source::Db { name: name, tables: tables } = ::saga_runtime::__private::again(
                                                        src,
                                                    ) else {
                                                        ::core::unreachable!(
                                                            "a place borrowed across a suspension changed"
                                                        )
                                                    };
                                                    if ::saga_runtime::__private::asking_again(&__answers) {
                                                        return ::core::result::Result::Ok(
                                                            ::saga_runtime::__private::cannot_restate(),
                                                        );
                                                    }
                                                    let __a0 = ::saga_runtime::__private::answer(
                                                        __mark0,
                                                        &mut __answers,
                                                        0,
                                                    );
                                                    let pick: String = __a0?;
                                                    done.push(format!("{name}: {pick} of {}", tables.len()));
                                                }
                                            };
                                        }
                                        loop {
                                            let __item1 = ::saga_runtime::__private::advance(
                                                &mut __pos1,
                                            );
                                            let ::core::option::Option::Some(src) = ::saga_runtime::__private::item_at(
                                                &__item1,
                                                __walk1,
                                            ) else {
                                                break;
                                            };
                                            {
                                                if let Source::Db { name: name, tables: tables } = src {
                                                    let __a0 = {
                                                        let __request0 = elicit(
                                                            format!("Tables of {name} ({mode})?"),
                                                        );
                                                        let __mark0 = ::saga_runtime::__private::marker(
                                                            &__request0,
                                                        );
                                                        ::saga_runtime::__private::keep_alive(&name);
                                                        ::saga_runtime::__private::keep_alive(&tables);
                                                        ::saga_runtime::__private::keep_alive(&__walk1);
                                                        ::core::mem::drop(__walk1);
                                                        return ::core::result::Result::Ok(
                                                            ::saga_runtime::__private::suspend(
                                                                &__slot,
                                                                __State::AfterElicitPick {
                                                                    __item1: saga_saves_this_local(
                                                                        &::saga_runtime::__private::ASuspension,
                                                                        __item1,
                                                                    ),
                                                                    sources: saga_saves_this_local(
                                                                        &::saga_runtime::__private::ASuspension,
                                                                        sources,
                                                                    ),
                                                                    mode: saga_saves_this_local(
                                                                        &::saga_runtime::__private::ASuspension,
                                                                        ::saga_runtime::__private::Literal::of(mode),
                                                                    ),
                                                                    done: saga_saves_this_local(
                                                                        &::saga_runtime::__private::ASuspension,
                                                                        done,
                                                                    ),
                                                                    __pos1: saga_saves_this_local(
                                                                        &::saga_runtime::__private::ASuspension,
                                                                        __pos1,
                                                                    ),
                                                                    __m0: __mark0,
                                                                },
                                                                {
                                                                    let mut __round = ::std::vec::Vec::new();
                                                                    ::saga_runtime::__private::requests(
                                                                        &mut __round,
                                                                        __request0,
                                                                    );
                                                                    ::saga_runtime::__private::restatable(
                                                                        &mut __round,
                                                                        __SAGA_RESTATED[0usize],
                                                                    );
                                                                    __round
                                                                },
                                                            ),
                                                        );
                                                        ::saga_runtime::__private::answer(
                                                            __mark0,
                                                            &mut __answers,
                                                            0,
                                                        )
                                                    };
                                                    let pick: String = __a0?;
                                                    done.push(format!("{name}: {pick} of {}", tables.len()));
                                                }
                                            }
                                        }
                                    }
                                    ::core::result::Result::Ok(
                                        Self::__finish(Ok(format!("{} ({mode})", done.join(", ")))),
                                    )
                                }
                            }
                        }
                    }
                })
                .await;
            match __exit {
                ::core::result::Result::Ok(__step) => __step,
                ::core::result::Result::Err(__error) => {
                    Self::__finish(::core::result::Result::Err(__error))
                }
            }
        }
    }
};
