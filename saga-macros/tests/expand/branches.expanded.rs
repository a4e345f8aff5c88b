/// Routes a request by kind.
#[allow(non_camel_case_types)]
#[derive(
    ::core::clone::Clone,
    ::core::marker::Copy,
    ::core::fmt::Debug,
    ::core::default::Default
)]
struct route;
#[doc(hidden)]
#[allow(non_camel_case_types)]
#[derive(
    ::saga_runtime::__private::serde::Deserialize,
    ::saga_runtime::__private::schemars::JsonSchema
)]
#[serde(crate = "::saga_runtime::__private::serde")]
#[schemars(crate = "::saga_runtime::__private::schemars")]
struct __saga_args_route {
    pub kind: String,
}
const _: () = {
    /// Per suspension: whether the step states its requests again when asked, so
    /// that the token keeps none of them.
    #[allow(dead_code)]
    const __SAGA_RESTATED: &[bool] = &[true, true, false, true];
    #[derive(
        ::saga_runtime::__private::serde::Serialize,
        ::saga_runtime::__private::serde::Deserialize
    )]
    #[serde(crate = "::saga_runtime::__private::serde")]
    #[serde(
        bound(
            serialize = "T2: ::saga_runtime::__private::serde::Serialize, T3: ::saga_runtime::__private::serde::Serialize",
            deserialize = "T2: ::saga_runtime::__private::serde::de::DeserializeOwned, T3: ::saga_runtime::__private::serde::de::DeserializeOwned"
        )
    )]
    #[allow(non_camel_case_types, clippy::enum_variant_names)]
    enum __State<R0, R1, T2, T3, R4> {
        /// Suspended at `let reply: String = elicit("Your answer?").key("reply").await?;`
        AfterElicitReply { __m0: ::saga_runtime::__private::Marker<R0> },
        /// Suspended at `let sampled = sample("Answer for me").await?;`
        AfterSampleSampled { __m0: ::saga_runtime::__private::Marker<R1> },
        /// Suspended at `checkpoint().await;`
        AfterCheckpoint { answer: T2 },
        /// Suspended at `let roots = list_roots().await?;`
        AfterListRootsRoots { answer: T3, __m0: ::saga_runtime::__private::Marker<R4> },
    }
    impl route {
        #[doc(hidden)]
        fn __finish(
            output: Result<String, SagaError>,
        ) -> ::saga_runtime::__private::Step<
            ::saga_runtime::__private::MacroState<__saga_args_route>,
        > {
            ::saga_runtime::__private::done(output)
        }
        /// Runs the tool as one ordinary async function, asking `script` at each
        /// suspension; for tests that compare it with the state machine.
        #[doc(hidden)]
        #[allow(unused_mut, unused_variables, non_shorthand_field_patterns, clippy::all)]
        pub async fn __plain(
            &self,
            __arguments: ::saga_runtime::__private::JsonObject,
            __cx: &::saga_runtime::__private::SagaContext,
            __run: &mut ::saga_runtime::__private::PlainRun,
            __script: &mut dyn ::saga_runtime::__private::Script,
        ) -> ::core::result::Result<
            Result<String, SagaError>,
            ::saga_runtime::__private::ErrorData,
        > {
            let __saga_args_route { kind } = ::saga_runtime::__private::parse_arguments(
                __arguments,
            )?;
            let cx: &::saga_runtime::__private::SagaContext = __cx;
            let __output: Result<String, SagaError> = async move {
                let answer = match kind.as_str() {
                    "ask" if cx.can_elicit() => {
                        let reply: String = ({
                            let __request0 = elicit("Your answer?").key("reply");
                            let __mark0 = ::saga_runtime::__private::marker(&__request0);
                            let mut __round = ::std::vec::Vec::new();
                            ::saga_runtime::__private::requests(
                                &mut __round,
                                __request0,
                            );
                            let mut __answers = __run.ask(__script, __round);
                            ::saga_runtime::__private::answer(
                                __mark0,
                                &mut __answers,
                                0usize,
                            )
                        })?;
                        reply
                    }
                    "llm" => {
                        let sampled = ({
                            let __request0 = sample("Answer for me");
                            let __mark0 = ::saga_runtime::__private::marker(&__request0);
                            let mut __round = ::std::vec::Vec::new();
                            ::saga_runtime::__private::requests(
                                &mut __round,
                                __request0,
                            );
                            let mut __answers = __run.ask(__script, __round);
                            ::saga_runtime::__private::answer(
                                __mark0,
                                &mut __answers,
                                0usize,
                            )
                        })?;
                        sampled.text().to_owned()
                    }
                    _ => return Err(SagaError::msg("unknown kind")),
                };
                if let Some(first) = answer.chars().next() {
                    if first.is_uppercase() {
                        {
                            __run.checkpoint();
                        };
                    } else if answer.len() > 3 {
                        let roots = ({
                            let __request0 = list_roots();
                            let __mark0 = ::saga_runtime::__private::marker(&__request0);
                            let mut __round = ::std::vec::Vec::new();
                            ::saga_runtime::__private::requests(
                                &mut __round,
                                __request0,
                            );
                            let mut __answers = __run.ask(__script, __round);
                            ::saga_runtime::__private::answer(
                                __mark0,
                                &mut __answers,
                                0usize,
                            )
                        })?;
                        return Ok(format!("{answer} in {} roots", roots.len()));
                    }
                }
                Ok(answer)
            }
                .await;
            ::core::result::Result::Ok(__output)
        }
    }
    impl ::saga_runtime::__private::SagaTool for route {
        type State = ::saga_runtime::__private::MacroState<__saga_args_route>;
        fn tool(&self) -> ::saga_runtime::__private::Tool {
            let mut schema = (*::saga_runtime::__private::schema_for_type::<
                __saga_args_route,
            >())
                .clone();
            schema.remove("title");
            let mut tool = ::saga_runtime::__private::Tool::new(
                "route",
                "",
                ::std::sync::Arc::new(schema),
            );
            tool.description = ::core::option::Option::None;
            tool.description = ::core::option::Option::Some(
                "Routes a request by kind.".into(),
            );
            tool.output_schema = <Result<
                String,
                SagaError,
            > as ::saga_runtime::__private::ToolOutput>::output_schema();
            tool
        }
        fn build_tag(&self) -> u16 {
            42170u16
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
            &[
                "AfterElicitReply",
                "AfterSampleSampled",
                "AfterCheckpoint",
                "AfterListRootsRoots",
            ]
        }
        fn state_json(
            &self,
            state: Self::State,
        ) -> ::core::result::Result<
            ::saga_runtime::__private::serde_json::Value,
            ::std::string::String,
        > {
            ::saga_runtime::__private::macro_state_json(self, state)
        }
        fn start(
            &self,
            arguments: ::saga_runtime::__private::JsonObject,
        ) -> ::core::result::Result<Self::State, ::saga_runtime::__private::ErrorData> {
            ::saga_runtime::__private::start(arguments)
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
            let cx: &::saga_runtime::__private::SagaContext = __cx;
            let mut __slot: ::core::option::Option<__State<_, _, _, _, _>> = ::core::option::Option::None;
            match __state {
                ::saga_runtime::__private::MacroState::Start(
                    __saga_args_route { kind },
                ) => {
                    let answer = match kind.as_str() {
                        "ask" if cx.can_elicit() => {
                            let __a0 = {
                                let __request0 = elicit("Your answer?").key("reply");
                                let __mark0 = ::saga_runtime::__private::marker(
                                    &__request0,
                                );
                                return ::saga_runtime::__private::suspend(
                                    &mut __slot,
                                    __State::AfterElicitReply {
                                        __m0: __mark0,
                                    },
                                    {
                                        let mut __round = ::std::vec::Vec::new();
                                        ::saga_runtime::__private::requests(
                                            &mut __round,
                                            __request0,
                                        );
                                        ::saga_runtime::__private::rebuilt(
                                            &mut __round,
                                            __SAGA_RESTATED[0usize],
                                        );
                                        __round
                                    },
                                );
                                ::saga_runtime::__private::answer(
                                    __mark0,
                                    &mut __answers,
                                    0,
                                )
                            };
                            let reply: String = match __a0 {
                                ::core::result::Result::Ok(__value) => __value,
                                ::core::result::Result::Err(__error) => {
                                    return Self::__finish(
                                        ::core::result::Result::Err(
                                            ::core::convert::From::from(__error),
                                        ),
                                    );
                                }
                            };
                            reply
                        }
                        "llm" => {
                            let __a1 = {
                                let __request0 = sample("Answer for me");
                                let __mark0 = ::saga_runtime::__private::marker(
                                    &__request0,
                                );
                                return ::saga_runtime::__private::suspend(
                                    &mut __slot,
                                    __State::AfterSampleSampled {
                                        __m0: __mark0,
                                    },
                                    {
                                        let mut __round = ::std::vec::Vec::new();
                                        ::saga_runtime::__private::requests(
                                            &mut __round,
                                            __request0,
                                        );
                                        ::saga_runtime::__private::rebuilt(
                                            &mut __round,
                                            __SAGA_RESTATED[1usize],
                                        );
                                        __round
                                    },
                                );
                                ::saga_runtime::__private::answer(
                                    __mark0,
                                    &mut __answers,
                                    0,
                                )
                            };
                            let sampled = match __a1 {
                                ::core::result::Result::Ok(__value) => __value,
                                ::core::result::Result::Err(__error) => {
                                    return Self::__finish(
                                        ::core::result::Result::Err(
                                            ::core::convert::From::from(__error),
                                        ),
                                    );
                                }
                            };
                            sampled.text().to_owned()
                        }
                        _ => return Self::__finish(Err(SagaError::msg("unknown kind"))),
                    };
                    if let Some(first) = answer.chars().next() {
                        if first.is_uppercase() {
                            let __a2 = {
                                let _: ::saga_runtime::__private::Checkpoint = checkpoint();
                                ::saga_runtime::__private::saved(&answer);
                                return ::saga_runtime::__private::suspend(
                                    &mut __slot,
                                    __State::AfterCheckpoint {
                                        answer: answer,
                                    },
                                    {
                                        let mut __round = ::std::vec::Vec::new();
                                        ::saga_runtime::__private::rebuilt(
                                            &mut __round,
                                            __SAGA_RESTATED[2usize],
                                        );
                                        __round
                                    },
                                );
                                ()
                            };
                            __a2;
                        } else if answer.len() > 3 {
                            let __a3 = {
                                let __request0 = list_roots();
                                let __mark0 = ::saga_runtime::__private::marker(
                                    &__request0,
                                );
                                ::saga_runtime::__private::saved(&answer);
                                return ::saga_runtime::__private::suspend(
                                    &mut __slot,
                                    __State::AfterListRootsRoots {
                                        answer: answer,
                                        __m0: __mark0,
                                    },
                                    {
                                        let mut __round = ::std::vec::Vec::new();
                                        ::saga_runtime::__private::requests(
                                            &mut __round,
                                            __request0,
                                        );
                                        ::saga_runtime::__private::rebuilt(
                                            &mut __round,
                                            __SAGA_RESTATED[3usize],
                                        );
                                        __round
                                    },
                                );
                                ::saga_runtime::__private::answer(
                                    __mark0,
                                    &mut __answers,
                                    0,
                                )
                            };
                            let roots = match __a3 {
                                ::core::result::Result::Ok(__value) => __value,
                                ::core::result::Result::Err(__error) => {
                                    return Self::__finish(
                                        ::core::result::Result::Err(
                                            ::core::convert::From::from(__error),
                                        ),
                                    );
                                }
                            };
                            return Self::__finish(
                                Ok(format!("{answer} in {} roots", roots.len())),
                            );
                        }
                    }
                    Self::__finish(Ok(answer))
                }
                ::saga_runtime::__private::MacroState::Resume(__bytes) => {
                    if ::saga_runtime::__private::tracing_layout(&__bytes) {
                        ::saga_runtime::__private::record_state(
                            &__slot,
                            &["", "", "", ""],
                        );
                        return ::saga_runtime::__private::traced();
                    }
                    let __resumed = match ::saga_runtime::__private::decode(
                        &__slot,
                        &__bytes,
                    ) {
                        ::core::result::Result::Ok(state) => state,
                        ::core::result::Result::Err(error) => {
                            return ::saga_runtime::__private::undecodable(&error);
                        }
                    };
                    match __resumed {
                        __State::AfterElicitReply { __m0: __mark0 } => {
                            let answer = {
                                if ::saga_runtime::__private::asking_again(&__answers)
                                    || !::saga_runtime::__private::fits(
                                        &__mark0,
                                        &__answers,
                                        0usize,
                                    )
                                {
                                    let __request0 = ::saga_runtime::__private::as_marked(
                                        &__mark0,
                                        elicit("Your answer?").key("reply"),
                                    );
                                    return ::saga_runtime::__private::ask_again({
                                        let mut __round = ::std::vec::Vec::new();
                                        ::saga_runtime::__private::requests(
                                            &mut __round,
                                            __request0,
                                        );
                                        ::saga_runtime::__private::rebuilt(&mut __round, true);
                                        ::saga_runtime::__private::note_misfits(
                                            &mut __round,
                                            &__answers,
                                        );
                                        __round
                                    });
                                }
                                let __a0 = ::saga_runtime::__private::answer(
                                    __mark0,
                                    &mut __answers,
                                    0,
                                );
                                let reply: String = match __a0 {
                                    ::core::result::Result::Ok(__value) => __value,
                                    ::core::result::Result::Err(__error) => {
                                        return Self::__finish(
                                            ::core::result::Result::Err(
                                                ::core::convert::From::from(__error),
                                            ),
                                        );
                                    }
                                };
                                reply
                            };
                            if let Some(first) = answer.chars().next() {
                                if first.is_uppercase() {
                                    let __a2 = {
                                        let _: ::saga_runtime::__private::Checkpoint = checkpoint();
                                        ::saga_runtime::__private::saved(&answer);
                                        return ::saga_runtime::__private::suspend(
                                            &mut __slot,
                                            __State::AfterCheckpoint {
                                                answer: answer,
                                            },
                                            {
                                                let mut __round = ::std::vec::Vec::new();
                                                ::saga_runtime::__private::rebuilt(
                                                    &mut __round,
                                                    __SAGA_RESTATED[2usize],
                                                );
                                                __round
                                            },
                                        );
                                        ()
                                    };
                                    __a2;
                                } else if answer.len() > 3 {
                                    let __a3 = {
                                        let __request0 = list_roots();
                                        let __mark0 = ::saga_runtime::__private::marker(
                                            &__request0,
                                        );
                                        ::saga_runtime::__private::saved(&answer);
                                        return ::saga_runtime::__private::suspend(
                                            &mut __slot,
                                            __State::AfterListRootsRoots {
                                                answer: answer,
                                                __m0: __mark0,
                                            },
                                            {
                                                let mut __round = ::std::vec::Vec::new();
                                                ::saga_runtime::__private::requests(
                                                    &mut __round,
                                                    __request0,
                                                );
                                                ::saga_runtime::__private::rebuilt(
                                                    &mut __round,
                                                    __SAGA_RESTATED[3usize],
                                                );
                                                __round
                                            },
                                        );
                                        ::saga_runtime::__private::answer(
                                            __mark0,
                                            &mut __answers,
                                            0,
                                        )
                                    };
                                    let roots = match __a3 {
                                        ::core::result::Result::Ok(__value) => __value,
                                        ::core::result::Result::Err(__error) => {
                                            return Self::__finish(
                                                ::core::result::Result::Err(
                                                    ::core::convert::From::from(__error),
                                                ),
                                            );
                                        }
                                    };
                                    return Self::__finish(
                                        Ok(format!("{answer} in {} roots", roots.len())),
                                    );
                                }
                            }
                            Self::__finish(Ok(answer))
                        }
                        __State::AfterSampleSampled { __m0: __mark0 } => {
                            let answer = {
                                if ::saga_runtime::__private::asking_again(&__answers)
                                    || !::saga_runtime::__private::fits(
                                        &__mark0,
                                        &__answers,
                                        0usize,
                                    )
                                {
                                    let __request0 = ::saga_runtime::__private::as_marked(
                                        &__mark0,
                                        sample("Answer for me"),
                                    );
                                    return ::saga_runtime::__private::ask_again({
                                        let mut __round = ::std::vec::Vec::new();
                                        ::saga_runtime::__private::requests(
                                            &mut __round,
                                            __request0,
                                        );
                                        ::saga_runtime::__private::rebuilt(&mut __round, true);
                                        ::saga_runtime::__private::note_misfits(
                                            &mut __round,
                                            &__answers,
                                        );
                                        __round
                                    });
                                }
                                let __a1 = ::saga_runtime::__private::answer(
                                    __mark0,
                                    &mut __answers,
                                    0,
                                );
                                let sampled = match __a1 {
                                    ::core::result::Result::Ok(__value) => __value,
                                    ::core::result::Result::Err(__error) => {
                                        return Self::__finish(
                                            ::core::result::Result::Err(
                                                ::core::convert::From::from(__error),
                                            ),
                                        );
                                    }
                                };
                                sampled.text().to_owned()
                            };
                            if let Some(first) = answer.chars().next() {
                                if first.is_uppercase() {
                                    let __a2 = {
                                        let _: ::saga_runtime::__private::Checkpoint = checkpoint();
                                        ::saga_runtime::__private::saved(&answer);
                                        return ::saga_runtime::__private::suspend(
                                            &mut __slot,
                                            __State::AfterCheckpoint {
                                                answer: answer,
                                            },
                                            {
                                                let mut __round = ::std::vec::Vec::new();
                                                ::saga_runtime::__private::rebuilt(
                                                    &mut __round,
                                                    __SAGA_RESTATED[2usize],
                                                );
                                                __round
                                            },
                                        );
                                        ()
                                    };
                                    __a2;
                                } else if answer.len() > 3 {
                                    let __a3 = {
                                        let __request0 = list_roots();
                                        let __mark0 = ::saga_runtime::__private::marker(
                                            &__request0,
                                        );
                                        ::saga_runtime::__private::saved(&answer);
                                        return ::saga_runtime::__private::suspend(
                                            &mut __slot,
                                            __State::AfterListRootsRoots {
                                                answer: answer,
                                                __m0: __mark0,
                                            },
                                            {
                                                let mut __round = ::std::vec::Vec::new();
                                                ::saga_runtime::__private::requests(
                                                    &mut __round,
                                                    __request0,
                                                );
                                                ::saga_runtime::__private::rebuilt(
                                                    &mut __round,
                                                    __SAGA_RESTATED[3usize],
                                                );
                                                __round
                                            },
                                        );
                                        ::saga_runtime::__private::answer(
                                            __mark0,
                                            &mut __answers,
                                            0,
                                        )
                                    };
                                    let roots = match __a3 {
                                        ::core::result::Result::Ok(__value) => __value,
                                        ::core::result::Result::Err(__error) => {
                                            return Self::__finish(
                                                ::core::result::Result::Err(
                                                    ::core::convert::From::from(__error),
                                                ),
                                            );
                                        }
                                    };
                                    return Self::__finish(
                                        Ok(format!("{answer} in {} roots", roots.len())),
                                    );
                                }
                            }
                            Self::__finish(Ok(answer))
                        }
                        __State::AfterCheckpoint { answer: __saved_answer } => {
                            let answer = __saved_answer;
                            {
                                {
                                    let __a2 = ();
                                    __a2;
                                }
                            }
                            Self::__finish(Ok(answer))
                        }
                        __State::AfterListRootsRoots {
                            answer: __saved_answer,
                            __m0: __mark0,
                        } => {
                            let answer = __saved_answer;
                            {
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
                                            list_roots(),
                                        );
                                        return ::saga_runtime::__private::ask_again({
                                            let mut __round = ::std::vec::Vec::new();
                                            ::saga_runtime::__private::requests(
                                                &mut __round,
                                                __request0,
                                            );
                                            ::saga_runtime::__private::rebuilt(&mut __round, true);
                                            ::saga_runtime::__private::note_misfits(
                                                &mut __round,
                                                &__answers,
                                            );
                                            __round
                                        });
                                    }
                                    let __a3 = ::saga_runtime::__private::answer(
                                        __mark0,
                                        &mut __answers,
                                        0,
                                    );
                                    let roots = match __a3 {
                                        ::core::result::Result::Ok(__value) => __value,
                                        ::core::result::Result::Err(__error) => {
                                            return Self::__finish(
                                                ::core::result::Result::Err(
                                                    ::core::convert::From::from(__error),
                                                ),
                                            );
                                        }
                                    };
                                    return Self::__finish(
                                        Ok(format!("{answer} in {} roots", roots.len())),
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
};
