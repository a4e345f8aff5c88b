/// Collects names until the user says stop, then confirms each.
/**

# Diagram

Where this saga suspends and how it gets there, as `#[saga_tool]` compiled it (Mermaid; `SagaTool::diagram()` gives the text):

<pre class="mermaid saga-diagram">
stateDiagram-v2
    Start : collect(limit, candidates)
    state Loop1 &lt;&lt;choice&gt;&gt;
    AfterElicitName : elicit String
    AfterElicitName : "Another name?"
    state Loop2 &lt;&lt;choice&gt;&gt;
    state Loop3 &lt;&lt;choice&gt;&gt;
    AfterElicitKeep : elicit bool
    AfterElicitKeep : format!("Keep {candidate} (try {attempt})?")
    Done : result
    Done : Ok(names)
    Failed : error from ?
    [*] --&gt; Start
    Start --&gt; Loop1
    Loop1 --&gt; AfterElicitName : while names.len() &lt; limit as usize
    AfterElicitName --&gt; Failed : ?
    AfterElicitName --&gt; Loop1 : if name != "stop", next
    AfterElicitName --&gt; Loop2 : if name == "stop"
    Loop1 --&gt; Loop2 : !(names.len() &lt; limit as usize)
    Loop2 --&gt; Loop3 : for candidate in candidates
    Loop3 --&gt; AfterElicitKeep : for attempt in 0..2
    AfterElicitKeep --&gt; Failed : ?
    AfterElicitKeep --&gt; Loop2 : if !keep, continue
    AfterElicitKeep --&gt; Loop3 : if keep, next
    Loop3 --&gt; Loop2 : done, next
    Loop2 --&gt; Done : done
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
struct collect;
#[doc(hidden)]
#[allow(non_camel_case_types)]
#[derive(
    ::saga_runtime::__private::serde::Deserialize,
    ::saga_runtime::__private::schemars::JsonSchema
)]
#[serde(crate = "::saga_runtime::__private::serde")]
#[schemars(crate = "::saga_runtime::__private::schemars")]
struct __saga_args_collect {
    pub limit: u32,
    pub candidates: Vec<String>,
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
    #[allow(dead_code)]
    #[inline]
    fn saga_saves_this_loops_items<
        __K: ::saga_runtime::__private::CallSaves,
        __T: ::saga_runtime::__private::SavedLoopItem<
                <__K as ::saga_runtime::__private::CallSaves>::Across,
                __M,
            >,
        __M,
    >(
        __saga_site: &__K,
        __saga_items: &::std::vec::Vec<__T>,
    ) -> ::saga_runtime::__private::Items<__M> {
        ::saga_runtime::__private::for_items(__saga_site, __saga_items)
    }
    #[allow(dead_code)]
    #[inline]
    fn saga_saves_this_part_of_an_item<
        __I,
        __M: ::saga_runtime::__private::SavedItemPart<__I, __N>,
        __N,
    >(
        __saga_item: __I,
        __saga_items: ::saga_runtime::__private::Items<__M>,
    ) -> <__M as ::saga_runtime::__private::SavedItemPart<__I, __N>>::Kept {
        ::saga_runtime::__private::keep_item(__saga_item, __saga_items)
    }
    /// Per suspension: whether the step states its requests again when asked, so
    /// that the token keeps none of them.
    #[allow(dead_code)]
    const __SAGA_RESTATED: &[bool] = &[true, false];
    #[allow(non_camel_case_types, clippy::enum_variant_names)]
    enum __State<T0, T1, T2, R3, T4, T5, T6, T7, R8> {
        /// Suspended at `let name: String = elicit("Another name?").await?;`
        AfterElicitName {
            limit: T0,
            candidates: T1,
            names: T2,
            __m0: ::saga_runtime::__private::Marker<R3>,
        },
        /// Suspended at `let keep: bool = elicit(format!("Keep {candidate} (try {attempt})?")).await?;`
        AfterElicitKeep {
            __rest2: T4,
            candidate: T5,
            names: T6,
            __rest1: T7,
            __m0: ::saga_runtime::__private::Marker<R8>,
        },
    }
    #[allow(unreachable_code, unused_variables, clippy::match_single_binding)]
    impl<T0, T1, T2, R3, T4, T5, T6, T7, R8> ::saga_runtime::__private::StateEnum
    for __State<T0, T1, T2, R3, T4, T5, T6, T7, R8>
    where
        T0: ::saga_runtime::__private::SlotField,
        T1: ::saga_runtime::__private::SlotField,
        T2: ::saga_runtime::__private::SlotField,
        T4: ::saga_runtime::__private::SlotField,
        T5: ::saga_runtime::__private::SlotField,
        T6: ::saga_runtime::__private::SlotField,
        T7: ::saga_runtime::__private::SlotField,
    {
        const SHAPE: ::saga_runtime::__private::StateShape = ::saga_runtime::__private::StateShape {
            name: "__State",
            variants: &["AfterElicitName", "AfterElicitKeep"],
            fields: &[
                &["limit", "candidates", "names", "__m0"],
                &["__rest2", "candidate", "names", "__rest1", "__m0"],
            ],
        };
        fn tagged() -> &'static ::core::sync::atomic::AtomicBool {
            static TAGGED: ::core::sync::atomic::AtomicBool = ::core::sync::atomic::AtomicBool::new(
                false,
            );
            &TAGGED
        }
        fn write(&self, __writer: &mut ::saga_runtime::__private::StateWriter) {
            match *self {
                __State::AfterElicitName {
                    limit: ref __v0,
                    candidates: ref __v1,
                    names: ref __v2,
                    ..
                } => {
                    __writer.variant(0u32);
                    __writer.field(__v0);
                    __writer.field(__v1);
                    __writer.field(__v2);
                }
                __State::AfterElicitKeep {
                    __rest2: ref __v0,
                    candidate: ref __v1,
                    names: ref __v2,
                    __rest1: ref __v3,
                    ..
                } => {
                    __writer.variant(1u32);
                    __writer.field(__v0);
                    __writer.field(__v1);
                    __writer.field(__v2);
                    __writer.field(__v3);
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
                        __State::AfterElicitName {
                            limit: __v0,
                            candidates: __v1,
                            names: __v2,
                            __m0: ::core::marker::PhantomData,
                        }
                    }
                    1u32 => {
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
                        __State::AfterElicitKeep {
                            __rest2: __v0,
                            candidate: __v1,
                            names: __v2,
                            __rest1: __v3,
                            __m0: ::core::marker::PhantomData,
                        }
                    }
                    _ => return ::core::result::Result::Err(__reader.unknown_variant()),
                },
            )
        }
        fn render(&self, __render: &mut ::saga_runtime::__private::StateRender) {
            match *self {
                __State::AfterElicitName {
                    limit: ref __v0,
                    candidates: ref __v1,
                    names: ref __v2,
                    ..
                } => {
                    __render.variant("AfterElicitName");
                    __render
                        .field(
                            "limit",
                            ::saga_runtime::__private::SlotField::shown(__v0),
                        );
                    __render
                        .field(
                            "candidates",
                            ::saga_runtime::__private::SlotField::shown(__v1),
                        );
                    __render
                        .field(
                            "names",
                            ::saga_runtime::__private::SlotField::shown(__v2),
                        );
                }
                __State::AfterElicitKeep {
                    __rest2: ref __v0,
                    candidate: ref __v1,
                    names: ref __v2,
                    __rest1: ref __v3,
                    ..
                } => {
                    __render.variant("AfterElicitKeep");
                    __render
                        .field(
                            "__rest2",
                            ::saga_runtime::__private::SlotField::shown(__v0),
                        );
                    __render
                        .field(
                            "candidate",
                            ::saga_runtime::__private::SlotField::shown(__v1),
                        );
                    __render
                        .field(
                            "names",
                            ::saga_runtime::__private::SlotField::shown(__v2),
                        );
                    __render
                        .field(
                            "__rest1",
                            ::saga_runtime::__private::SlotField::shown(__v3),
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
                    __tracer
                        .marker(
                            ::core::any::type_name::<
                                ::core::marker::PhantomData<
                                    ::saga_runtime::__private::Marker<R3>,
                                >,
                            >(),
                        )
                }
                (1u32, 0usize) => {
                    ::saga_runtime::__private::trace_slot::<
                        <T4 as ::saga_runtime::__private::SlotField>::Shown,
                    >(__tracer)
                }
                (1u32, 1usize) => {
                    ::saga_runtime::__private::trace_slot::<
                        <T5 as ::saga_runtime::__private::SlotField>::Shown,
                    >(__tracer)
                }
                (1u32, 2usize) => {
                    ::saga_runtime::__private::trace_slot::<
                        <T6 as ::saga_runtime::__private::SlotField>::Shown,
                    >(__tracer)
                }
                (1u32, 3usize) => {
                    ::saga_runtime::__private::trace_slot::<
                        <T7 as ::saga_runtime::__private::SlotField>::Shown,
                    >(__tracer)
                }
                (1u32, 4usize) => {
                    __tracer
                        .marker(
                            ::core::any::type_name::<
                                ::core::marker::PhantomData<
                                    ::saga_runtime::__private::Marker<R8>,
                                >,
                            >(),
                        )
                }
                _ => __tracer.missing(),
            }
        }
    }
    impl collect {
        #[doc(hidden)]
        fn __finish(
            output: Result<Vec<String>, SagaError>,
        ) -> ::saga_runtime::__private::Step<
            ::saga_runtime::__private::MacroState<__saga_args_collect>,
        > {
            ::saga_runtime::__private::done(output)
        }
    }
    impl ::saga_runtime::__private::SagaTool for collect {
        type State = ::saga_runtime::__private::MacroState<__saga_args_collect>;
        fn tool(&self) -> ::saga_runtime::__private::Tool {
            let mut tool = ::saga_runtime::__private::described(
                "collect",
                ::saga_runtime::__private::args_schema::<__saga_args_collect>(),
            );
            tool.description = ::core::option::Option::Some(
                "Collects names until the user says stop, then confirms each.".into(),
            );
            tool.meta = ::saga_runtime::__private::with_diagram(
                tool.meta.take(),
                "stateDiagram-v2\n    Start : collect(limit, candidates)\n    state Loop1 <<choice>>\n    AfterElicitName : elicit String\n    AfterElicitName : \"Another name?\"\n    state Loop2 <<choice>>\n    state Loop3 <<choice>>\n    AfterElicitKeep : elicit bool\n    AfterElicitKeep : format!(\"Keep {candidate} (try {attempt})?\")\n    Done : result\n    Done : Ok(names)\n    Failed : error from ?\n    [*] --> Start\n    Start --> Loop1\n    Loop1 --> AfterElicitName : while names.len() < limit as usize\n    AfterElicitName --> Failed : ?\n    AfterElicitName --> Loop1 : if name != \"stop\", next\n    AfterElicitName --> Loop2 : if name == \"stop\"\n    Loop1 --> Loop2 : !(names.len() < limit as usize)\n    Loop2 --> Loop3 : for candidate in candidates\n    Loop3 --> AfterElicitKeep : for attempt in 0..2\n    AfterElicitKeep --> Failed : ?\n    AfterElicitKeep --> Loop2 : if !keep, continue\n    AfterElicitKeep --> Loop3 : if keep, next\n    Loop3 --> Loop2 : done, next\n    Loop2 --> Done : done\n    Done --> [*]\n    Failed --> [*]\n",
            );
            tool.output_schema = <Result<
                Vec<String>,
                SagaError,
            > as ::saga_runtime::__private::ToolOutput>::output_schema();
            tool
        }
        fn build_tag(&self) -> u16 {
            11350u16
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
            &["AfterElicitName", "AfterElicitKeep"]
        }
        fn diagram(&self) -> ::std::string::String {
            ::std::string::String::from(
                "stateDiagram-v2\n    Start : collect(limit, candidates)\n    state Loop1 <<choice>>\n    AfterElicitName : elicit String\n    AfterElicitName : \"Another name?\"\n    state Loop2 <<choice>>\n    state Loop3 <<choice>>\n    AfterElicitKeep : elicit bool\n    AfterElicitKeep : format!(\"Keep {candidate} (try {attempt})?\")\n    Done : result\n    Done : Ok(names)\n    Failed : error from ?\n    [*] --> Start\n    Start --> Loop1\n    Loop1 --> AfterElicitName : while names.len() < limit as usize\n    AfterElicitName --> Failed : ?\n    AfterElicitName --> Loop1 : if name != \"stop\", next\n    AfterElicitName --> Loop2 : if name == \"stop\"\n    Loop1 --> Loop2 : !(names.len() < limit as usize)\n    Loop2 --> Loop3 : for candidate in candidates\n    Loop3 --> AfterElicitKeep : for attempt in 0..2\n    AfterElicitKeep --> Failed : ?\n    AfterElicitKeep --> Loop2 : if !keep, continue\n    AfterElicitKeep --> Loop3 : if keep, next\n    Loop3 --> Loop2 : done, next\n    Loop2 --> Done : done\n    Done --> [*]\n    Failed --> [*]\n",
            )
        }
        fn restate(
            &self,
            __state: Self::State,
            __cx: &::saga_runtime::__private::SagaContext,
        ) -> ::core::option::Option<
            ::std::vec::Vec<::saga_runtime::__private::Request>,
        > {
            ::saga_runtime::__private::macro_restate(self, __state, __cx)
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
                        __State<_, _, _, _, _, _, _, _, _>,
                    > = ::core::marker::PhantomData;
                    match __state {
                        ::saga_runtime::__private::MacroState::Start(
                            __saga_args_collect { limit, candidates },
                        ) => {
                            let __step = {
                                let mut names = Vec::new();
                                loop {
                                    if names.len() < limit as usize {
                                        let __a0 = {
                                            let __request0 = elicit("Another name?");
                                            let __mark0 = ::saga_runtime::__private::marker(
                                                &__request0,
                                            );
                                            return ::core::result::Result::Ok(
                                                ::saga_runtime::__private::suspend(
                                                    &__slot,
                                                    __State::AfterElicitName {
                                                        limit: saga_saves_this_local(
                                                            &::saga_runtime::__private::ASuspension,
                                                            limit,
                                                        ),
                                                        candidates: saga_saves_this_local(
                                                            &::saga_runtime::__private::ASuspension,
                                                            candidates,
                                                        ),
                                                        names: saga_saves_this_local(
                                                            &::saga_runtime::__private::ASuspension,
                                                            names,
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
                                        let name: String = __a0?;
                                        if name == "stop" {
                                            break;
                                        }
                                        names.push(name);
                                    } else {
                                        break;
                                    }
                                }
                                let mut __rest1: ::std::vec::Vec<_> = ::core::iter::IntoIterator::into_iter(
                                        candidates,
                                    )
                                    .collect();
                                __rest1.reverse();
                                'outer: loop {
                                    let ::core::option::Option::Some(candidate) = __rest1.pop()
                                    else {
                                        break;
                                    };
                                    {
                                        let mut __rest2 = ::saga_runtime::__private::RangeRest::from(
                                            0..2,
                                        );
                                        loop {
                                            let ::core::option::Option::Some(attempt) = __rest2.next()
                                            else {
                                                break;
                                            };
                                            {
                                                let __a1 = {
                                                    let __request0 = elicit(
                                                        format!("Keep {candidate} (try {attempt})?"),
                                                    );
                                                    let __mark0 = ::saga_runtime::__private::marker(
                                                        &__request0,
                                                    );
                                                    let __items1 = saga_saves_this_loops_items(
                                                        &::saga_runtime::__private::ASuspension,
                                                        &__rest1,
                                                    );
                                                    return ::core::result::Result::Ok(
                                                        ::saga_runtime::__private::suspend(
                                                            &__slot,
                                                            __State::AfterElicitKeep {
                                                                __rest2: saga_saves_this_local(
                                                                    &::saga_runtime::__private::ASuspension,
                                                                    __rest2,
                                                                ),
                                                                candidate: saga_saves_this_part_of_an_item(
                                                                    candidate,
                                                                    __items1,
                                                                ),
                                                                names: saga_saves_this_local(
                                                                    &::saga_runtime::__private::ASuspension,
                                                                    names,
                                                                ),
                                                                __rest1: ::saga_runtime::__private::keep_rest(
                                                                    &::saga_runtime::__private::ASuspension,
                                                                    __rest1,
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
                                                                    __SAGA_RESTATED[1usize],
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
                                                let keep: bool = __a1?;
                                                if !keep {
                                                    continue 'outer;
                                                }
                                            }
                                        }
                                        names.push(candidate);
                                    }
                                }
                                ::core::result::Result::Ok(Self::__finish(Ok(names)))
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
                                    __State::AfterElicitName {
                                        limit: limit,
                                        candidates: candidates,
                                        names: names,
                                        ..
                                    } => {
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(limit);
                                            let __kind = (&__probe).__saga_kind();
                                            saga_saves_only_owned_values(&__probe, __kind);
                                        }
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(candidates);
                                            let __kind = (&__probe).__saga_kind();
                                            saga_saves_only_owned_values(&__probe, __kind);
                                        }
                                        {
                                            let __probe = __SagaProbeOf::__saga_probe(names);
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
                            ::saga_runtime::__private::record_state(&__slot, &["", ""]);
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
                                __State::AfterElicitName {
                                    limit: __saved_limit,
                                    candidates: __saved_candidates,
                                    names: __saved_names,
                                    __m0: __mark0,
                                } => {
                                    let limit = ::saga_runtime::__private::restore(
                                        __saved_limit,
                                    );
                                    let candidates = ::saga_runtime::__private::restore(
                                        __saved_candidates,
                                    );
                                    let mut names = ::saga_runtime::__private::restore(
                                        __saved_names,
                                    );
                                    {
                                        let __flow = '__peel0_0: {
                                            {
                                                if ::saga_runtime::__private::asking_again(&__answers)
                                                    || !::saga_runtime::__private::fits(
                                                        &__mark0,
                                                        &__answers,
                                                        0usize,
                                                    )
                                                {
                                                    let __request0 = ::saga_runtime::__private::as_marked(
                                                        &__mark0,
                                                        elicit("Another name?"),
                                                    );
                                                    return ::core::result::Result::Ok(
                                                        ::saga_runtime::__private::ask_again({
                                                            let mut __round = ::std::vec::Vec::new();
                                                            ::saga_runtime::__private::requests(
                                                                &mut __round,
                                                                __request0,
                                                            );
                                                            ::saga_runtime::__private::restatable(&mut __round, true);
                                                            ::saga_runtime::__private::note_misfits(
                                                                &mut __round,
                                                                &__answers,
                                                            );
                                                            __round
                                                        }),
                                                    );
                                                }
                                                let __a0 = ::saga_runtime::__private::answer(
                                                    __mark0,
                                                    &mut __answers,
                                                    0,
                                                );
                                                let name: String = __a0?;
                                                if name == "stop" {
                                                    break '__peel0_0 (::saga_runtime::__private::Flow::Break(()));
                                                }
                                                names.push(name);
                                            };
                                            ::saga_runtime::__private::Flow::Continue
                                        };
                                        match __flow {
                                            ::saga_runtime::__private::Flow::Break(__value) => __value,
                                            ::saga_runtime::__private::Flow::Continue => {
                                                loop {
                                                    if names.len() < limit as usize {
                                                        let __a0 = {
                                                            let __request0 = elicit("Another name?");
                                                            let __mark0 = ::saga_runtime::__private::marker(
                                                                &__request0,
                                                            );
                                                            return ::core::result::Result::Ok(
                                                                ::saga_runtime::__private::suspend(
                                                                    &__slot,
                                                                    __State::AfterElicitName {
                                                                        limit: saga_saves_this_local(
                                                                            &::saga_runtime::__private::ASuspension,
                                                                            limit,
                                                                        ),
                                                                        candidates: saga_saves_this_local(
                                                                            &::saga_runtime::__private::ASuspension,
                                                                            candidates,
                                                                        ),
                                                                        names: saga_saves_this_local(
                                                                            &::saga_runtime::__private::ASuspension,
                                                                            names,
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
                                                        let name: String = __a0?;
                                                        if name == "stop" {
                                                            break;
                                                        }
                                                        names.push(name);
                                                    } else {
                                                        break;
                                                    }
                                                }
                                            }
                                        }
                                    }
                                    let mut __rest1: ::std::vec::Vec<_> = ::core::iter::IntoIterator::into_iter(
                                            candidates,
                                        )
                                        .collect();
                                    __rest1.reverse();
                                    'outer: loop {
                                        let ::core::option::Option::Some(candidate) = __rest1.pop()
                                        else {
                                            break;
                                        };
                                        {
                                            let mut __rest2 = ::saga_runtime::__private::RangeRest::from(
                                                0..2,
                                            );
                                            loop {
                                                let ::core::option::Option::Some(attempt) = __rest2.next()
                                                else {
                                                    break;
                                                };
                                                {
                                                    let __a1 = {
                                                        let __request0 = elicit(
                                                            format!("Keep {candidate} (try {attempt})?"),
                                                        );
                                                        let __mark0 = ::saga_runtime::__private::marker(
                                                            &__request0,
                                                        );
                                                        let __items1 = saga_saves_this_loops_items(
                                                            &::saga_runtime::__private::ASuspension,
                                                            &__rest1,
                                                        );
                                                        return ::core::result::Result::Ok(
                                                            ::saga_runtime::__private::suspend(
                                                                &__slot,
                                                                __State::AfterElicitKeep {
                                                                    __rest2: saga_saves_this_local(
                                                                        &::saga_runtime::__private::ASuspension,
                                                                        __rest2,
                                                                    ),
                                                                    candidate: saga_saves_this_part_of_an_item(
                                                                        candidate,
                                                                        __items1,
                                                                    ),
                                                                    names: saga_saves_this_local(
                                                                        &::saga_runtime::__private::ASuspension,
                                                                        names,
                                                                    ),
                                                                    __rest1: ::saga_runtime::__private::keep_rest(
                                                                        &::saga_runtime::__private::ASuspension,
                                                                        __rest1,
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
                                                                        __SAGA_RESTATED[1usize],
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
                                                    let keep: bool = __a1?;
                                                    if !keep {
                                                        continue 'outer;
                                                    }
                                                }
                                            }
                                            names.push(candidate);
                                        }
                                    }
                                    ::core::result::Result::Ok(Self::__finish(Ok(names)))
                                }
                                __State::AfterElicitKeep {
                                    __rest2: __saved___rest2,
                                    candidate: __saved_candidate,
                                    names: __saved_names,
                                    __rest1: __saved___rest1,
                                    __m0: __mark0,
                                } => {
                                    let mut names = ::saga_runtime::__private::restore(
                                        __saved_names,
                                    );
                                    let mut __rest1 = ::saga_runtime::__private::restore(
                                        __saved___rest1,
                                    );
                                    {
                                        '__peel1_0: {
                                            let candidate = ::saga_runtime::__private::restore(
                                                __saved_candidate,
                                            );
                                            {
                                                let mut __rest2 = ::saga_runtime::__private::restore(
                                                    __saved___rest2,
                                                );
                                                {
                                                    '__peel1_2: {
                                                        {
                                                            if ::saga_runtime::__private::asking_again(&__answers) {
                                                                return ::core::result::Result::Ok(
                                                                    ::saga_runtime::__private::cannot_restate(),
                                                                );
                                                            }
                                                            let __a1 = ::saga_runtime::__private::answer(
                                                                __mark0,
                                                                &mut __answers,
                                                                0,
                                                            );
                                                            let keep: bool = __a1?;
                                                            if !keep {
                                                                break '__peel1_0;
                                                            }
                                                        };
                                                    }
                                                    loop {
                                                        let ::core::option::Option::Some(attempt) = __rest2.next()
                                                        else {
                                                            break;
                                                        };
                                                        {
                                                            let __a1 = {
                                                                let __request0 = elicit(
                                                                    format!("Keep {candidate} (try {attempt})?"),
                                                                );
                                                                let __mark0 = ::saga_runtime::__private::marker(
                                                                    &__request0,
                                                                );
                                                                let __items1 = saga_saves_this_loops_items(
                                                                    &::saga_runtime::__private::ASuspension,
                                                                    &__rest1,
                                                                );
                                                                return ::core::result::Result::Ok(
                                                                    ::saga_runtime::__private::suspend(
                                                                        &__slot,
                                                                        __State::AfterElicitKeep {
                                                                            __rest2: saga_saves_this_local(
                                                                                &::saga_runtime::__private::ASuspension,
                                                                                __rest2,
                                                                            ),
                                                                            candidate: saga_saves_this_part_of_an_item(
                                                                                candidate,
                                                                                __items1,
                                                                            ),
                                                                            names: saga_saves_this_local(
                                                                                &::saga_runtime::__private::ASuspension,
                                                                                names,
                                                                            ),
                                                                            __rest1: ::saga_runtime::__private::keep_rest(
                                                                                &::saga_runtime::__private::ASuspension,
                                                                                __rest1,
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
                                                                                __SAGA_RESTATED[1usize],
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
                                                            let keep: bool = __a1?;
                                                            if !keep {
                                                                break '__peel1_0;
                                                            }
                                                        }
                                                    }
                                                }
                                                names.push(candidate);
                                            };
                                        }
                                        'outer: loop {
                                            let ::core::option::Option::Some(candidate) = __rest1.pop()
                                            else {
                                                break;
                                            };
                                            {
                                                let mut __rest2 = ::saga_runtime::__private::RangeRest::from(
                                                    0..2,
                                                );
                                                loop {
                                                    let ::core::option::Option::Some(attempt) = __rest2.next()
                                                    else {
                                                        break;
                                                    };
                                                    {
                                                        let __a1 = {
                                                            let __request0 = elicit(
                                                                format!("Keep {candidate} (try {attempt})?"),
                                                            );
                                                            let __mark0 = ::saga_runtime::__private::marker(
                                                                &__request0,
                                                            );
                                                            let __items1 = saga_saves_this_loops_items(
                                                                &::saga_runtime::__private::ASuspension,
                                                                &__rest1,
                                                            );
                                                            return ::core::result::Result::Ok(
                                                                ::saga_runtime::__private::suspend(
                                                                    &__slot,
                                                                    __State::AfterElicitKeep {
                                                                        __rest2: saga_saves_this_local(
                                                                            &::saga_runtime::__private::ASuspension,
                                                                            __rest2,
                                                                        ),
                                                                        candidate: saga_saves_this_part_of_an_item(
                                                                            candidate,
                                                                            __items1,
                                                                        ),
                                                                        names: saga_saves_this_local(
                                                                            &::saga_runtime::__private::ASuspension,
                                                                            names,
                                                                        ),
                                                                        __rest1: ::saga_runtime::__private::keep_rest(
                                                                            &::saga_runtime::__private::ASuspension,
                                                                            __rest1,
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
                                                                            __SAGA_RESTATED[1usize],
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
                                                        let keep: bool = __a1?;
                                                        if !keep {
                                                            continue 'outer;
                                                        }
                                                    }
                                                }
                                                names.push(candidate);
                                            }
                                        }
                                    }
                                    ::core::result::Result::Ok(Self::__finish(Ok(names)))
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
