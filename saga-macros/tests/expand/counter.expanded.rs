/// Counts to `n`, one checkpoint at a time.
/**

# Diagram

Where this saga suspends and how it gets there, as `#[saga_tool]` compiled it (Mermaid; `SagaTool::diagram()` gives the text):

<pre class="mermaid saga-diagram">
stateDiagram-v2
    Start : count_to(n)
    state Loop1 &lt;&lt;choice&gt;&gt;
    AfterCheckpoint : checkpoint
    Done : result
    Done : Ok(Json(Count { n, total }))
    [*] --&gt; Start
    Start --&gt; Loop1
    Loop1 --&gt; AfterCheckpoint : for i in 1..=n
    AfterCheckpoint --&gt; Loop1 : next
    Loop1 --&gt; Done : done
    Done --&gt; [*]
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
struct count_to;
#[doc(hidden)]
#[allow(non_camel_case_types)]
#[derive(
    ::saga_runtime::__private::serde::Deserialize,
    ::saga_runtime::__private::schemars::JsonSchema
)]
#[serde(crate = "::saga_runtime::__private::serde")]
#[schemars(crate = "::saga_runtime::__private::schemars")]
struct __saga_args_count_to {
    #[schemars(description = "Where to stop")]
    pub n: u32,
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
    enum __State<T0, T1, T2> {
        /// Suspended at `checkpoint().await;`
        AfterCheckpoint { n: T0, total: T1, __rest1: T2 },
    }
    #[allow(unreachable_code, unused_variables, clippy::match_single_binding)]
    impl<T0, T1, T2> ::saga_runtime::__private::StateEnum for __State<T0, T1, T2>
    where
        T0: ::saga_runtime::__private::SlotField,
        T1: ::saga_runtime::__private::SlotField,
        T2: ::saga_runtime::__private::SlotField,
    {
        const SHAPE: ::saga_runtime::__private::StateShape = ::saga_runtime::__private::StateShape {
            name: "__State",
            variants: &["AfterCheckpoint"],
            fields: &[&["n", "total", "__rest1"]],
        };
        fn tagged() -> &'static ::core::sync::atomic::AtomicBool {
            static TAGGED: ::core::sync::atomic::AtomicBool = ::core::sync::atomic::AtomicBool::new(
                false,
            );
            &TAGGED
        }
        fn write(&self, __writer: &mut ::saga_runtime::__private::StateWriter) {
            match *self {
                __State::AfterCheckpoint {
                    n: ref __v0,
                    total: ref __v1,
                    __rest1: ref __v2,
                    ..
                } => {
                    __writer.variant(0u32);
                    __writer.field(__v0);
                    __writer.field(__v1);
                    __writer.field(__v2);
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
                        __State::AfterCheckpoint {
                            n: __v0,
                            total: __v1,
                            __rest1: __v2,
                        }
                    }
                    _ => return ::core::result::Result::Err(__reader.unknown_variant()),
                },
            )
        }
        fn render(&self, __render: &mut ::saga_runtime::__private::StateRender) {
            match *self {
                __State::AfterCheckpoint {
                    n: ref __v0,
                    total: ref __v1,
                    __rest1: ref __v2,
                    ..
                } => {
                    __render.variant("AfterCheckpoint");
                    __render
                        .field("n", ::saga_runtime::__private::SlotField::shown(__v0));
                    __render
                        .field(
                            "total",
                            ::saga_runtime::__private::SlotField::shown(__v1),
                        );
                    __render
                        .field(
                            "__rest1",
                            ::saga_runtime::__private::SlotField::shown(__v2),
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
                _ => __tracer.missing(),
            }
        }
    }
    impl count_to {
        #[doc(hidden)]
        fn __finish(
            output: Result<Json<Count>, SagaError>,
        ) -> ::saga_runtime::__private::Step<
            ::saga_runtime::__private::MacroState<__saga_args_count_to>,
        > {
            ::saga_runtime::__private::done(output)
        }
    }
    impl ::saga_runtime::__private::SagaTool for count_to {
        type State = ::saga_runtime::__private::MacroState<__saga_args_count_to>;
        fn tool(&self) -> ::saga_runtime::__private::Tool {
            let mut tool = ::saga_runtime::__private::described(
                "count_to",
                ::saga_runtime::__private::args_schema::<__saga_args_count_to>(),
            );
            tool.description = ::core::option::Option::Some(
                "Counts to `n`, one checkpoint at a time.".into(),
            );
            tool.meta = ::saga_runtime::__private::with_diagram(
                tool.meta.take(),
                "stateDiagram-v2\n    Start : count_to(n)\n    state Loop1 <<choice>>\n    AfterCheckpoint : checkpoint\n    Done : result\n    Done : Ok(Json(Count { n, total }))\n    [*] --> Start\n    Start --> Loop1\n    Loop1 --> AfterCheckpoint : for i in 1..=n\n    AfterCheckpoint --> Loop1 : next\n    Loop1 --> Done : done\n    Done --> [*]\n",
            );
            tool.output_schema = <Result<
                Json<Count>,
                SagaError,
            > as ::saga_runtime::__private::ToolOutput>::output_schema();
            tool
        }
        fn build_tag(&self) -> u16 {
            9416u16
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
            &["AfterCheckpoint"]
        }
        fn diagram(&self) -> ::std::string::String {
            ::std::string::String::from(
                "stateDiagram-v2\n    Start : count_to(n)\n    state Loop1 <<choice>>\n    AfterCheckpoint : checkpoint\n    Done : result\n    Done : Ok(Json(Count { n, total }))\n    [*] --> Start\n    Start --> Loop1\n    Loop1 --> AfterCheckpoint : for i in 1..=n\n    AfterCheckpoint --> Loop1 : next\n    Loop1 --> Done : done\n    Done --> [*]\n",
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
                    let __slot: ::saga_runtime::__private::StateSlot<__State<_, _, _>> = ::core::marker::PhantomData;
                    match __state {
                        ::saga_runtime::__private::MacroState::Start(
                            __saga_args_count_to { n },
                        ) => {
                            let __step = {
                                let mut total = 0u64;
                                let mut __rest1 = ::saga_runtime::__private::RangeRest::from(
                                    1..=n,
                                );
                                loop {
                                    let ::core::option::Option::Some(i) = __rest1.next() else {
                                        break;
                                    };
                                    {
                                        total += u64::from(i);
                                        let __a0 = {
                                            let _: ::saga_runtime::__private::Checkpoint = checkpoint();
                                            return ::core::result::Result::Ok(
                                                ::saga_runtime::__private::suspend(
                                                    &__slot,
                                                    __State::AfterCheckpoint {
                                                        n: saga_saves_this_local(
                                                            &::saga_runtime::__private::ASuspension,
                                                            n,
                                                        ),
                                                        total: saga_saves_this_local(
                                                            &::saga_runtime::__private::ASuspension,
                                                            total,
                                                        ),
                                                        __rest1: saga_saves_this_local(
                                                            &::saga_runtime::__private::ASuspension,
                                                            __rest1,
                                                        ),
                                                    },
                                                    {
                                                        let mut __round = ::std::vec::Vec::new();
                                                        ::saga_runtime::__private::restatable(
                                                            &mut __round,
                                                            __SAGA_RESTATED[0usize],
                                                        );
                                                        __round
                                                    },
                                                ),
                                            );
                                            ()
                                        };
                                        __a0;
                                    }
                                }
                                ::core::result::Result::Ok(
                                    Self::__finish(Ok(Json(Count { n, total }))),
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
                                    __State::AfterCheckpoint { n: n, total: total, .. } => {
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(n);
                                            let __kind = (&__probe).__saga_kind();
                                            saga_saves_only_owned_values(&__probe, __kind);
                                        }
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(total);
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
                            ::saga_runtime::__private::record_state(&__slot, &[""]);
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
                                __State::AfterCheckpoint {
                                    n: __saved_n,
                                    total: __saved_total,
                                    __rest1: __saved___rest1,
                                } => {
                                    let n = ::saga_runtime::__private::restore(__saved_n);
                                    let mut total = ::saga_runtime::__private::restore(
                                        __saved_total,
                                    );
                                    let mut __rest1 = ::saga_runtime::__private::restore(
                                        __saved___rest1,
                                    );
                                    {
                                        '__peel0_0: {
                                            {
                                                let __a0 = ();
                                                __a0;
                                            };
                                        }
                                        loop {
                                            let ::core::option::Option::Some(i) = __rest1.next() else {
                                                break;
                                            };
                                            {
                                                total += u64::from(i);
                                                let __a0 = {
                                                    let _: ::saga_runtime::__private::Checkpoint = checkpoint();
                                                    return ::core::result::Result::Ok(
                                                        ::saga_runtime::__private::suspend(
                                                            &__slot,
                                                            __State::AfterCheckpoint {
                                                                n: saga_saves_this_local(
                                                                    &::saga_runtime::__private::ASuspension,
                                                                    n,
                                                                ),
                                                                total: saga_saves_this_local(
                                                                    &::saga_runtime::__private::ASuspension,
                                                                    total,
                                                                ),
                                                                __rest1: saga_saves_this_local(
                                                                    &::saga_runtime::__private::ASuspension,
                                                                    __rest1,
                                                                ),
                                                            },
                                                            {
                                                                let mut __round = ::std::vec::Vec::new();
                                                                ::saga_runtime::__private::restatable(
                                                                    &mut __round,
                                                                    __SAGA_RESTATED[0usize],
                                                                );
                                                                __round
                                                            },
                                                        ),
                                                    );
                                                    ()
                                                };
                                                __a0;
                                            }
                                        }
                                    }
                                    ::core::result::Result::Ok(
                                        Self::__finish(Ok(Json(Count { n, total }))),
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
