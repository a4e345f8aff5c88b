//! Opening a token: any text, including mutations of real tokens, must be refused or
//! opened, never panic; a token that opens must be one this codec sealed.

#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use saga_runtime::state::{Binding, KeyRing, PointKey, StateCodec, TokenHeader};

static CODEC: LazyLock<StateCodec> = LazyLock::new(|| {
    let keys = KeyRing::from_keys([[7u8; 32], [9u8; 32]]).expect("two distinct keys");
    StateCodec::new(keys, Duration::from_secs(600))
});

const POINT: PointKey = PointKey {
    header: *b"fuzzpt01",
    identity: [3; 32],
};

fuzz_target!(|data: &[u8]| {
    let binding = Binding::new("deploy", "tools/call", "alice", None);
    let Ok(text) = std::str::from_utf8(data) else {
        // Bytes that are not text become the plaintext of a real token instead.
        let token = CODEC.seal(&POINT, &binding, data);
        assert_eq!(TokenHeader::peek_point(&token), Ok(POINT.header));
        let opened = CODEC
            .open(&token, &POINT, &binding)
            .expect("a fresh token opens");
        assert_eq!(opened.plaintext, data);
        return;
    };
    // The point is read from any text without a panic, and agrees with the header that
    // text decodes to (`parse`, for `saga inspect`, forgives surrounding whitespace, which
    // a server never does).
    let point = TokenHeader::peek_point(text);
    if text.trim() == text
        && let (Ok(point), Ok(header)) = (point, TokenHeader::parse(text))
    {
        assert_eq!(point, header.point);
    }
    if let Ok(opened) = CODEC.open(text, &POINT, &binding) {
        // Only a token sealed with our keys, for this binding, can get here: the fuzzer
        // cannot forge one, so this would be a bug (or a 2^-128 event).
        panic!("a fuzzed token opened: {:?}", opened.plaintext);
    }
});
