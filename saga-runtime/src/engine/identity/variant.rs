//! The name of the state a saga is in, for the log, read without the tool's types.

use serde::Serialize;

/// The name of `state`: for a `#[saga_tool]` saga, its suspension's variant
/// (`AfterElicitTarget`, looked up in `names` by the encoded variant index) or `Start`;
/// for a hand-written state enum, its variant; otherwise its type's short name. Only
/// computed when a span will record it.
pub(crate) fn variant_name<S: Serialize>(state: &S, names: &[&'static str]) -> String {
    // Only the rendering is `S`'s: the reading is compiled once.
    name_of(
        serde_json::to_value(state),
        names,
        std::any::type_name::<S>(),
    )
}

fn name_of(
    rendered: Result<serde_json::Value, serde_json::Error>,
    names: &[&'static str],
    type_name: &'static str,
) -> String {
    match rendered {
        Ok(serde_json::Value::String(unit)) => unit,
        Ok(serde_json::Value::Object(map)) if map.len() == 1 => {
            map.keys().next().cloned().unwrap_or_default()
        }
        // A macro saga's state: its enum, postcard-encoded, which starts with the
        // variant index as a varint.
        Ok(serde_json::Value::Array(bytes)) => {
            let index = bytes
                .iter()
                .map_while(|b| b.as_u64())
                .take(5)
                .enumerate()
                .try_fold(0u64, |acc, (i, b)| {
                    let acc = acc | ((b & 0x7f) << (7 * i));
                    if b & 0x80 == 0 { Err(acc) } else { Ok(acc) }
                });
            // A state sealed in the tagged form has its index offset (see `slot`).
            let index = index.map_err(|index| {
                index
                    .checked_sub(u64::from(crate::engine::identity::points::TAGGED))
                    .unwrap_or(index)
            });
            match index {
                Err(index) => names
                    .get(index as usize)
                    .map_or_else(|| format!("#{index}"), |name| (*name).to_owned()),
                Ok(_) => "?".to_owned(),
            }
        }
        // A macro saga's first state (its arguments) is never serialized.
        Err(_) => "Start".to_owned(),
        _ => type_name.rsplit("::").next().unwrap_or_default().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    enum State {
        Start,
        AfterElicitTarget { target: String },
        AfterSample(u32),
    }

    #[test]
    fn names_the_variant() {
        assert_eq!(variant_name(&State::Start, &[]), "Start");
        assert_eq!(
            variant_name(&State::AfterElicitTarget { target: "x".into() }, &[]),
            "AfterElicitTarget"
        );
        assert_eq!(variant_name(&State::AfterSample(3), &[]), "AfterSample");
        assert_eq!(variant_name(&(), &[]), "()");
    }

    #[test]
    fn names_an_encoded_state_by_its_index() {
        let names = ["AfterA", "AfterB"];
        let encoded = |index: u32| {
            let mut bytes = postcard::to_allocvec(&index).expect("encodes");
            bytes.extend_from_slice(&[7, 7]);
            bytes
        };
        #[derive(Serialize)]
        struct Bytes(#[serde(with = "serde_bytes_as_seq")] Vec<u8>);
        mod serde_bytes_as_seq {
            pub(crate) fn serialize<S: serde::Serializer>(
                b: &[u8],
                s: S,
            ) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(b)
            }
        }
        assert_eq!(variant_name(&Bytes(encoded(1)), &names), "AfterB");
        assert_eq!(variant_name(&Bytes(encoded(300)), &names), "#300");
    }
}
