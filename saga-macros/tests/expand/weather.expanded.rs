/// Gets the weather for a location, after checking who asks.
/**

# Diagram

Where this saga suspends and how it gets there, as `#[saga_tool]` compiled it (Mermaid; `SagaTool::diagram()` gives the text):

<pre class="mermaid saga-diagram">
stateDiagram-v2
    Start : get_weather(location)
    AfterJoinLoginCapital : join!: 2 requests in one round
    AfterJoinLoginCapital : elicit GithubLogin "Please provide your GitHub username" key "github_login"
    AfterJoinLoginCapital : sample "What is the capital of France?" key "capital_of_france"
    AfterJoinLoginCapital : sample (client or server model)
    Done : result
    Done : Ok(format!("Weather for {location}: sunny. Asked by {} (capital check: {})", lo…
    Failed : error from ?
    [*] --&gt; Start
    Start --&gt; AfterJoinLoginCapital
    AfterJoinLoginCapital --&gt; Failed : login? or capital?
    AfterJoinLoginCapital --&gt; Done
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
struct get_weather;
#[doc(hidden)]
#[allow(non_camel_case_types)]
#[derive(
    ::saga_runtime::__private::serde::Deserialize,
    ::saga_runtime::__private::schemars::JsonSchema
)]
#[serde(crate = "::saga_runtime::__private::serde")]
#[schemars(crate = "::saga_runtime::__private::schemars")]
struct __saga_args_get_weather {
    pub location: String,
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
    const __SAGA_RESTATED: &[bool] = &[true];
    #[allow(non_camel_case_types, clippy::enum_variant_names)]
    enum __State<T0, R1, R2> {
        /// Suspended at `let (login, capital) = join!( elicit::< GithubLogin > ("Please provide your GitHub username") .key("github_login"), samp…`
        AfterJoinLoginCapital {
            location: T0,
            __m0: ::saga_runtime::__private::Marker<R1>,
            __m1: ::saga_runtime::__private::Marker<R2>,
        },
    }
    #[allow(unreachable_code, unused_variables, clippy::match_single_binding)]
    impl<T0, R1, R2> ::saga_runtime::__private::StateEnum for __State<T0, R1, R2>
    where
        T0: ::saga_runtime::__private::SlotField,
    {
        const SHAPE: ::saga_runtime::__private::StateShape = ::saga_runtime::__private::StateShape {
            name: "__State",
            variants: &["AfterJoinLoginCapital"],
            fields: &[&["location", "__m0", "__m1"]],
        };
        fn tagged() -> &'static ::core::sync::atomic::AtomicBool {
            static TAGGED: ::core::sync::atomic::AtomicBool = ::core::sync::atomic::AtomicBool::new(
                false,
            );
            &TAGGED
        }
        fn write(&self, __writer: &mut ::saga_runtime::__private::StateWriter) {
            match *self {
                __State::AfterJoinLoginCapital { location: ref __v0, .. } => {
                    __writer.variant(0u32);
                    __writer.field(__v0);
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
                        __State::AfterJoinLoginCapital {
                            location: __v0,
                            __m0: ::core::marker::PhantomData,
                            __m1: ::core::marker::PhantomData,
                        }
                    }
                    _ => return ::core::result::Result::Err(__reader.unknown_variant()),
                },
            )
        }
        fn render(&self, __render: &mut ::saga_runtime::__private::StateRender) {
            match *self {
                __State::AfterJoinLoginCapital { location: ref __v0, .. } => {
                    __render.variant("AfterJoinLoginCapital");
                    __render
                        .field(
                            "location",
                            ::saga_runtime::__private::SlotField::shown(__v0),
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
                    __tracer
                        .marker(
                            ::core::any::type_name::<
                                ::core::marker::PhantomData<
                                    ::saga_runtime::__private::Marker<R1>,
                                >,
                            >(),
                        )
                }
                (0u32, 2usize) => {
                    __tracer
                        .marker(
                            ::core::any::type_name::<
                                ::core::marker::PhantomData<
                                    ::saga_runtime::__private::Marker<R2>,
                                >,
                            >(),
                        )
                }
                _ => __tracer.missing(),
            }
        }
    }
    impl get_weather {
        #[doc(hidden)]
        fn __finish(
            output: Result<String, SagaError>,
        ) -> ::saga_runtime::__private::Step<
            ::saga_runtime::__private::MacroState<__saga_args_get_weather>,
        > {
            ::saga_runtime::__private::done(output)
        }
    }
    impl ::saga_runtime::__private::SagaTool for get_weather {
        type State = ::saga_runtime::__private::MacroState<__saga_args_get_weather>;
        fn tool(&self) -> ::saga_runtime::__private::Tool {
            let mut tool = ::saga_runtime::__private::described(
                "get_weather",
                ::saga_runtime::__private::args_schema::<__saga_args_get_weather>(),
            );
            tool.description = ::core::option::Option::Some(
                "Gets the weather for a location, after checking who asks.".into(),
            );
            tool.meta = ::saga_runtime::__private::with_diagram(
                tool.meta.take(),
                "stateDiagram-v2\n    Start : get_weather(location)\n    AfterJoinLoginCapital : join!: 2 requests in one round\n    AfterJoinLoginCapital : elicit GithubLogin \"Please provide your GitHub username\" key \"github_login\"\n    AfterJoinLoginCapital : sample \"What is the capital of France?\" key \"capital_of_france\"\n    AfterJoinLoginCapital : sample (client or server model)\n    Done : result\n    Done : Ok(format!(\"Weather for {location}: sunny. Asked by {} (capital check: {})\", lo…\n    Failed : error from ?\n    [*] --> Start\n    Start --> AfterJoinLoginCapital\n    AfterJoinLoginCapital --> Failed : login? or capital?\n    AfterJoinLoginCapital --> Done\n    Done --> [*]\n    Failed --> [*]\n",
            );
            tool.output_schema = <Result<
                String,
                SagaError,
            > as ::saga_runtime::__private::ToolOutput>::output_schema();
            tool
        }
        fn build_tag(&self) -> u16 {
            43160u16
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
            &["AfterJoinLoginCapital"]
        }
        fn diagram(&self) -> ::std::string::String {
            ::std::string::String::from(
                "stateDiagram-v2\n    Start : get_weather(location)\n    AfterJoinLoginCapital : join!: 2 requests in one round\n    AfterJoinLoginCapital : elicit GithubLogin \"Please provide your GitHub username\" key \"github_login\"\n    AfterJoinLoginCapital : sample \"What is the capital of France?\" key \"capital_of_france\"\n    AfterJoinLoginCapital : sample (client or server model)\n    Done : result\n    Done : Ok(format!(\"Weather for {location}: sunny. Asked by {} (capital check: {})\", lo…\n    Failed : error from ?\n    [*] --> Start\n    Start --> AfterJoinLoginCapital\n    AfterJoinLoginCapital --> Failed : login? or capital?\n    AfterJoinLoginCapital --> Done\n    Done --> [*]\n    Failed --> [*]\n",
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
                    let __slot: ::saga_runtime::__private::StateSlot<__State<_, _, _>> = ::core::marker::PhantomData;
                    match __state {
                        ::saga_runtime::__private::MacroState::Start(
                            __saga_args_get_weather { location },
                        ) => {
                            let __step = {
                                let __a0 = {
                                    let __request0 = elicit::<
                                        GithubLogin,
                                    >("Please provide your GitHub username")
                                        .key("github_login");
                                    let __mark0 = ::saga_runtime::__private::marker(
                                        &__request0,
                                    );
                                    let __request1 = sample("What is the capital of France?")
                                        .max_tokens(100)
                                        .key("capital_of_france");
                                    let __mark1 = ::saga_runtime::__private::marker(
                                        &__request1,
                                    );
                                    return ::core::result::Result::Ok(
                                        ::saga_runtime::__private::suspend(
                                            &__slot,
                                            __State::AfterJoinLoginCapital {
                                                location: saga_saves_this_local(
                                                    &::saga_runtime::__private::ASuspension,
                                                    location,
                                                ),
                                                __m0: __mark0,
                                                __m1: __mark1,
                                            },
                                            {
                                                let mut __round = ::std::vec::Vec::new();
                                                ::saga_runtime::__private::requests(
                                                    &mut __round,
                                                    __request0,
                                                );
                                                ::saga_runtime::__private::requests(
                                                    &mut __round,
                                                    __request1,
                                                );
                                                ::saga_runtime::__private::restatable(
                                                    &mut __round,
                                                    __SAGA_RESTATED[0usize],
                                                );
                                                __round
                                            },
                                        ),
                                    );
                                    (
                                        ::saga_runtime::__private::answer(
                                            __mark0,
                                            &mut __answers,
                                            0usize,
                                        ),
                                        ::saga_runtime::__private::answer(
                                            __mark1,
                                            &mut __answers,
                                            1usize,
                                        ),
                                    )
                                };
                                let (login, capital) = __a0;
                                let __login_2 = login?;
                                let __capital_2 = capital?;
                                ::core::result::Result::Ok(
                                    Self::__finish(
                                        Ok(
                                            format!(
                                                "Weather for {location}: sunny. Asked by {} (capital check: {})",
                                                __login_2.name, __capital_2.text()
                                            ),
                                        ),
                                    ),
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
                                    __State::AfterJoinLoginCapital {
                                        location: location,
                                        ..
                                    } => {
                                        let __probe = __SagaProbeOf::__saga_probe(location);
                                        let __kind = (&__probe).__saga_kind();
                                        saga_saves_only_owned_values(&__probe, __kind);
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
                                __State::AfterJoinLoginCapital {
                                    location: __saved_location,
                                    __m0: __mark0,
                                    __m1: __mark1,
                                } => {
                                    let location = ::saga_runtime::__private::restore(
                                        __saved_location,
                                    );
                                    if ::saga_runtime::__private::asking_again(&__answers)
                                        || !::saga_runtime::__private::fits(
                                            &__mark0,
                                            &__answers,
                                            0usize,
                                        )
                                        || !::saga_runtime::__private::fits(
                                            &__mark1,
                                            &__answers,
                                            1usize,
                                        )
                                    {
                                        let __request0 = ::saga_runtime::__private::as_marked(
                                            &__mark0,
                                            elicit::<GithubLogin>("Please provide your GitHub username")
                                                .key("github_login"),
                                        );
                                        let __request1 = ::saga_runtime::__private::as_marked(
                                            &__mark1,
                                            sample("What is the capital of France?")
                                                .max_tokens(100)
                                                .key("capital_of_france"),
                                        );
                                        return ::core::result::Result::Ok(
                                            ::saga_runtime::__private::ask_again({
                                                let mut __round = ::std::vec::Vec::new();
                                                ::saga_runtime::__private::requests(
                                                    &mut __round,
                                                    __request0,
                                                );
                                                ::saga_runtime::__private::requests(
                                                    &mut __round,
                                                    __request1,
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
                                    let __a0 = (
                                        ::saga_runtime::__private::answer(
                                            __mark0,
                                            &mut __answers,
                                            0usize,
                                        ),
                                        ::saga_runtime::__private::answer(
                                            __mark1,
                                            &mut __answers,
                                            1usize,
                                        ),
                                    );
                                    let (login, capital) = __a0;
                                    let __login_2 = login?;
                                    let __capital_2 = capital?;
                                    ::core::result::Result::Ok(
                                        Self::__finish(
                                            Ok(
                                                format!(
                                                    "Weather for {location}: sunny. Asked by {} (capital check: {})",
                                                    __login_2.name, __capital_2.text()
                                                ),
                                            ),
                                        ),
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
