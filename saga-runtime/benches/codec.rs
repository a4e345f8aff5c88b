//! saga's sealed state against rmcp's `RequestStateCodec`, in one run, on the same state.
//!
//! Run with `cargo bench -p saga-runtime --bench codec`. It prints markdown tables; it
//! asserts nothing about timings (only that every token opens to what was sealed).
//!
//! # What is compared, and why it is fair
//!
//! * **The same logical state.** A `State { step, note }` whose `note` is a `String` of
//!   100 B, 1 KiB or 4 KiB of ASCII text. Each side serializes it the way it would in
//!   production: saga with postcard, rmcp with JSON (`seal_json_with` / `open_json_with`,
//!   rmcp's own typed API). The field is a `String`, not a `Vec<u8>`: JSON writes a byte
//!   vector as an array of decimal numbers (about 3.5 characters per byte), which would
//!   inflate rmcp's tokens and times for a reason unrelated to either codec. With plain
//!   ASCII text the two encodings differ by a few bytes of framing only.
//! * **The same guarantees asked of each.** Both bind the token to the request and give it
//!   a 600 s lifetime: saga through a [`Binding`] (tool, method, principal, arguments),
//!   rmcp through `SealOptions::associated_data` (a 32-byte SHA-256 of the same four
//!   things) and `SealOptions::ttl`. Both are computed once, outside the timed loop, as a
//!   server computes them once per request. rmcp uses a key ring (`rs2`), so its tokens
//!   carry a key id as saga's do.
//! * **What differs by design.** saga encrypts (XChaCha20-Poly1305: HChaCha20 and ring's
//!   ChaCha20-Poly1305, a random 24-byte nonce from a per-thread ChaCha12 stream seeded by
//!   the OS) and names its suspension point; rmcp only authenticates (HMAC-SHA256: the
//!   payload is readable by the client). The "floors" table shows the bare primitives.
//!
//! # Method
//!
//! For each case (run one after another on one thread): warm up for 100 ms, size a batch to take about 20 ms, run 15 batches
//! and report the median time per iteration. Every input goes through
//! [`std::hint::black_box`] and every output is consumed by it.

use std::hint::black_box;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::AeadInOut;
use chacha20poly1305::{KeyInit as _, XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac as _};
use rmcp::model::{RequestStateCodec, SealOptions};
use saga_runtime::__private::Slot;
use saga_runtime::state::{Binding, KeyRing, PointKey, StateCodec};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest as _, Sha256};

const SIZES: [(usize, &str); 3] = [(100, "100 B"), (1024, "1 KiB"), (4096, "4 KiB")];
const TTL: Duration = Duration::from_secs(600);
const FP: &PointKey = &PointKey {
    header: *b"pt-bench",
    identity: [7; 32],
};
const WARM_UP: Duration = Duration::from_millis(100);
const BATCH: Duration = Duration::from_millis(20);
const BATCHES: usize = 15;

// The AEAD exactly as saga ships it (saga-wire's, behind the runtime's codec).
use saga_wire::aead;

/// The suspended saga's state, as a tool would define it.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct State {
    step: u32,
    note: String,
}

fn state(len: usize) -> State {
    let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ";
    let note = (0..len)
        .map(|i| alphabet[(i * 7 + i / 13) % alphabet.len()] as char)
        .collect();
    State { step: 3, note }
}

/// Median nanoseconds per call of `f`.
fn measure(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut warm = 0u64;
    while start.elapsed() < WARM_UP {
        f();
        warm += 1;
    }
    let per_call = WARM_UP.as_secs_f64() / warm as f64;
    let iterations = ((BATCH.as_secs_f64() / per_call) as u64).max(1);
    let mut samples: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let batch = Instant::now();
            for _ in 0..iterations {
                f();
            }
            batch.elapsed().as_nanos() as f64 / iterations as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[BATCHES / 2]
}

struct Row {
    size: &'static str,
    saga_ns: f64,
    rmcp_ns: f64,
    saga_len: usize,
    rmcp_len: usize,
}

fn print_table(title: &str, rows: &[Row]) {
    println!("\n### {title}\n");
    println!(
        "| size | saga seal+open (ns) | rmcp seal+open (ns) | saga/rmcp | saga token (chars) | rmcp token (chars) | length saga/rmcp |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        println!(
            "| {} | {:.0} | {:.0} | {:.2} | {} | {} | {:.3} |",
            row.size,
            row.saga_ns,
            row.rmcp_ns,
            row.saga_ns / row.rmcp_ns,
            row.saga_len,
            row.rmcp_len,
            row.saga_len as f64 / row.rmcp_len as f64,
        );
    }
}

fn main() {
    // `SEAL_COUNT=N`: only N seals of the 1 KiB struct slot (with `SEAL_VALUE` set, of the
    // bare `Value`), for an instruction count (`valgrind --tool=callgrind`), which a timed
    // loop cannot give.
    if let Some(count) = std::env::var("SEAL_COUNT")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        let kept = Kept {
            body: api_response(1024),
            note: Some(None),
            seen: Some(3),
        };
        let bare = std::env::var_os("SEAL_VALUE").is_some();
        for _ in 0..count {
            if bare {
                black_box(postcard::to_allocvec(&Slot(black_box(&kept.body).clone())).unwrap());
            } else {
                black_box(postcard::to_allocvec(&Slot(black_box(&kept).clone())).unwrap());
            }
        }
        return;
    }
    let started = Instant::now();
    let key = [0x42u8; 32];
    let cipher = aead::XChaCha20Poly1305::new(&key);

    let saga = StateCodec::new(KeyRing::from_keys([key]).unwrap(), TTL);
    let rmcp = RequestStateCodec::new_with_keyring("k1", [("k1", key.to_vec())]).unwrap();

    // The request both tokens are bound to.
    let (tool, method, principal) = ("deploy", "tools/call", "alice");
    let arguments = json!({"env": "prod", "replicas": 3, "canary": true});
    let binding = Binding::new(tool, method, principal, arguments.as_object());
    let context: [u8; 32] = Sha256::new()
        .chain_update(format!("{tool}\0{method}\0{principal}\0{arguments}"))
        .finalize()
        .into();
    let options = SealOptions::new().associated_data(&context).ttl(TTL);

    let mut end_to_end = Vec::new();
    let mut codec_only = Vec::new();
    let mut serialized = Vec::new();
    for (len, size) in SIZES {
        let value = state(len);
        let postcard_bytes = postcard::to_allocvec(&value).unwrap();
        let json_bytes = serde_json::to_vec(&value).unwrap();

        // Check once, untimed, that both round trips give back the state.
        let saga_token = saga.seal(FP, &binding, &postcard_bytes);
        let opened = saga.open(&saga_token, FP, &binding).unwrap();
        assert_eq!(
            postcard::from_bytes::<State>(&opened.plaintext).unwrap(),
            value
        );
        let rmcp_token = rmcp.seal_json_with(&value, &options).unwrap();
        let reopened: State = rmcp.open_json_with(&rmcp_token, &context).unwrap();
        assert_eq!(reopened, value);

        // Serialize + seal + open + deserialize: what a request costs each server.
        let saga_ns = measure(|| {
            let bytes = postcard::to_allocvec(black_box(&value)).unwrap();
            let token = saga.seal(FP, black_box(&binding), &bytes);
            let opened = saga.open(black_box(&token), FP, &binding).unwrap();
            black_box(postcard::from_bytes::<State>(&opened.plaintext).unwrap());
        });
        let rmcp_ns = measure(|| {
            let token = rmcp
                .seal_json_with(black_box(&value), black_box(&options))
                .unwrap();
            let state: State = rmcp.open_json_with(black_box(&token), &context).unwrap();
            black_box(state);
        });
        end_to_end.push(Row {
            size,
            saga_ns,
            rmcp_ns,
            saga_len: saga_token.len(),
            rmcp_len: rmcp_token.len(),
        });

        // The codecs alone, on bytes already serialized.
        let saga_ns = measure(|| {
            let token = saga.seal(FP, black_box(&binding), black_box(&postcard_bytes));
            black_box(saga.open(black_box(&token), FP, &binding).unwrap());
        });
        let rmcp_ns = measure(|| {
            let token = rmcp.seal_with(black_box(&json_bytes), black_box(&options));
            black_box(rmcp.open_with(black_box(&token), &context).unwrap());
        });
        codec_only.push(Row {
            size,
            saga_ns,
            rmcp_ns,
            saga_len: saga_token.len(),
            rmcp_len: rmcp_token.len(),
        });
        serialized.push(format!(
            "{size}: postcard {} B, JSON {} B",
            postcard_bytes.len(),
            json_bytes.len()
        ));
    }

    print_table(
        "Serialize + seal + open + deserialize (saga: postcard, rmcp: JSON)",
        &end_to_end,
    );
    print_table("Seal + open of the already-serialized bytes", &codec_only);
    println!("\nSerialized state: {}.", serialized.join("; "));

    // The floors: the bare primitives each codec is built on, on raw bytes of each size.
    let previous = XChaCha20Poly1305::new(&key.into());
    let nonce = [7u8; 24];
    let aad = [0x11u8; 101]; // saga's associated data: 37-byte header, binding digest, point identity
    let mut floors: Vec<(&str, [f64; 3])> = vec![
        (
            "XChaCha20-Poly1305 as saga builds it (HChaCha20 + ring's ChaCha20-Poly1305), encrypt + decrypt, 101-byte AAD: the AEAD floor",
            [0.0; 3],
        ),
        ("saga `seal` + `open` of raw bytes", [0.0; 3]),
        ("HMAC-SHA256 tag + verify (rmcp's floor)", [0.0; 3]),
        ("base64url encode + decode", [0.0; 3]),
        (
            "RustCrypto `chacha20poly1305` XChaCha20-Poly1305 (saga's previous backend), same work",
            [0.0; 3],
        ),
    ];
    for (column, (len, _)) in SIZES.into_iter().enumerate() {
        let mut buffer = vec![0x5au8; len];
        floors[0].1[column] = measure(|| {
            let tag = cipher.seal_in_place(&nonce, black_box(&aad), &mut buffer);
            cipher
                .open_in_place(&nonce, &aad, &mut buffer, black_box(&tag))
                .expect("opens");
        });
        assert_eq!(buffer, vec![0x5au8; len], "decryption restores the buffer");
        floors[4].1[column] = measure(|| {
            let xnonce = XNonce::from(nonce);
            let tag = previous
                .encrypt_inout_detached(&xnonce, black_box(&aad), buffer.as_mut_slice().into())
                .unwrap();
            previous
                .decrypt_inout_detached(
                    &xnonce,
                    &aad,
                    buffer.as_mut_slice().into(),
                    black_box(&tag),
                )
                .unwrap();
        });
        assert_eq!(buffer, vec![0x5au8; len], "decryption restores the buffer");
        floors[1].1[column] = measure(|| {
            let token = saga.seal(FP, &binding, black_box(&buffer));
            black_box(saga.open(black_box(&token), FP, &binding).unwrap());
        });
        floors[2].1[column] = measure(|| {
            let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
            mac.update(black_box(&buffer));
            let tag = mac.finalize().into_bytes();
            let mut check = Hmac::<Sha256>::new_from_slice(&key).unwrap();
            check.update(black_box(&buffer));
            check.verify_slice(black_box(&tag)).unwrap();
        });
        floors[3].1[column] = measure(|| {
            let text = URL_SAFE_NO_PAD.encode(black_box(&buffer));
            black_box(URL_SAFE_NO_PAD.decode(black_box(&text)).unwrap());
        });
    }
    let nonce_ns = measure(|| {
        let mut nonce = [0u8; 24];
        getrandom::fill(&mut nonce).unwrap();
        black_box(nonce);
    });

    println!("\n### Floors (ns)\n");
    println!("| operation | 100 B | 1 KiB | 4 KiB |");
    println!("|---|---:|---:|---:|");
    for (operation, [small, medium, large]) in &floors {
        println!("| {operation} | {small:.0} | {medium:.0} | {large:.0} |");
    }
    println!(
        "| 24-byte nonce from the OS (`getrandom`, what a seal drew before its per-thread stream), any size | {nonce_ns:.0} | | |"
    );
    self_described();
    println!("\n(finished in {:.1} s)", started.elapsed().as_secs_f64());
}

/// An API response's shape, of about `len` bytes of JSON text.
/// A struct a tool keeps: an API response and options beside it (MessagePack, as it holds
/// a `Value`).
#[derive(Serialize, Deserialize, Clone, PartialEq, Debug)]
struct Kept {
    body: serde_json::Value,
    note: Option<Option<String>>,
    seen: Option<u32>,
}

fn api_response(len: usize) -> serde_json::Value {
    let mut items = Vec::new();
    let mut text = 40;
    while text < len {
        let i = items.len();
        let item = serde_json::json!({
            "id": 1000 + i, "title": format!("issue {i}"), "open": i % 3 != 0,
            "labels": [{"name": "ops", "color": null}], "score": i as f64 / 7.0,
        });
        text += item.to_string().len() + 1;
        items.push(item);
    }
    serde_json::json!({"total": items.len(), "next": null, "items": items})
}

/// How a saved local postcard cannot read is kept (`engine::slot`): MessagePack (structs
/// as maps), as saga keeps it, against JSON, encoded and decoded as a `serde_json::Value`.
fn self_described() {
    println!("\n### A saved local postcard cannot read: MessagePack (what saga keeps) vs JSON\n");
    println!(
        "| `serde_json::Value` | MessagePack (B) | JSON (B) | size MessagePack/JSON | MessagePack encode+decode (ns) | JSON encode+decode (ns) | time MessagePack/JSON |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (len, size) in [(100, "100 B"), (1024, "1 KiB"), (4096, "4 KiB")] {
        let value = api_response(len);
        let msgpack = |value: &serde_json::Value| {
            let mut bytes = Vec::new();
            value
                .serialize(&mut rmp_serde::Serializer::new(&mut bytes).with_struct_map())
                .unwrap();
            bytes
        };
        let packed = msgpack(&value);
        let json = serde_json::to_vec(&value).unwrap();
        assert_eq!(
            rmp_serde::from_slice::<serde_json::Value>(&packed).unwrap(),
            value
        );
        let msgpack_ns = measure(|| {
            let bytes = msgpack(black_box(&value));
            black_box(rmp_serde::from_slice::<serde_json::Value>(&bytes).unwrap());
        });
        let json_ns = measure(|| {
            let bytes = serde_json::to_vec(black_box(&value)).unwrap();
            black_box(serde_json::from_slice::<serde_json::Value>(&bytes).unwrap());
        });
        println!(
            "| {size} | {} | {} | {:.2}× | {msgpack_ns:.0} | {json_ns:.0} | {:.2}× |",
            packed.len(),
            json.len(),
            packed.len() as f64 / json.len() as f64,
            msgpack_ns / json_ns,
        );
    }
    // Reading it back as saga does (a tree parsed once, then visited; `slot/msgpack.rs`),
    // through a saved local's own encoding, against rmp-serde's streaming reader.
    println!(
        "\n| `serde_json::Value` | rmp-serde decode (ns) | saga's slot decode (ns) | saga/rmp-serde |"
    );
    println!("|---|---:|---:|---:|");
    for (len, size) in [(100, "100 B"), (1024, "1 KiB"), (4096, "4 KiB")] {
        let value = api_response(len);
        let mut packed = Vec::new();
        value
            .serialize(&mut rmp_serde::Serializer::new(&mut packed).with_struct_map())
            .unwrap();
        let slot = postcard::to_allocvec(&Slot(value.clone())).unwrap();
        assert_eq!(
            postcard::from_bytes::<Slot<serde_json::Value>>(&slot)
                .unwrap()
                .0,
            value
        );
        let rmp_ns = measure(|| {
            black_box(rmp_serde::from_slice::<serde_json::Value>(black_box(&packed)).unwrap());
        });
        let slot_ns = measure(|| {
            black_box(postcard::from_bytes::<Slot<serde_json::Value>>(black_box(&slot)).unwrap());
        });
        println!(
            "| {size} | {rmp_ns:.0} | {slot_ns:.0} | {:.2}× |",
            slot_ns / rmp_ns
        );
    }
    // Writing it as saga does at a seal (the slot's encoding and its read-back check):
    // a bare `Value` (read back by construction, so not checked in release), and a struct
    // holding one with options beside it (read back, and since issue 72 compared). Each
    // seal takes a clone of the value (a slot owns it); the clone alone is its own column.
    println!(
        "\n| seal of a slot | rmp-serde encode (ns) | clone (ns) | `Value` slot, with its clone (ns) | struct slot, with its clone (ns) |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (len, size) in [(100, "100 B"), (1024, "1 KiB"), (4096, "4 KiB")] {
        let value = api_response(len);
        let kept = Kept {
            body: value.clone(),
            note: Some(None),
            seen: Some(3),
        };
        let rmp_ns = measure(|| {
            let mut packed = Vec::new();
            black_box(&value)
                .serialize(&mut rmp_serde::Serializer::new(&mut packed).with_struct_map())
                .unwrap();
            black_box(packed);
        });
        let clone_ns = measure(|| {
            black_box(black_box(&value).clone());
        });
        let value_ns = measure(|| {
            black_box(postcard::to_allocvec(&Slot(black_box(&value).clone())).unwrap());
        });
        let kept_ns = measure(|| {
            black_box(postcard::to_allocvec(&Slot(black_box(&kept).clone())).unwrap());
        });
        println!("| {size} | {rmp_ns:.0} | {clone_ns:.0} | {value_ns:.0} | {kept_ns:.0} |");
    }
    // What JSON cannot keep at all, and MessagePack keeps.
    let nan = f64::NAN;
    let json_nan = serde_json::to_vec(&nan)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<f64>(&bytes).ok());
    let mut packed = Vec::new();
    nan.serialize(&mut rmp_serde::Serializer::new(&mut packed))
        .unwrap();
    let msgpack_nan: f64 = rmp_serde::from_slice(&packed).unwrap();
    let keys: std::collections::BTreeMap<(u8, u8), String> = [((1, 2), "x".to_owned())].into();
    println!(
        "\nNaN: MessagePack reads it back ({}); JSON {}. A map keyed by `(u8, u8)`: JSON {}.",
        msgpack_nan.is_nan(),
        if json_nan.is_some() {
            "too"
        } else {
            "does not (it writes null)"
        },
        if serde_json::to_vec(&keys).is_ok() {
            "writes it"
        } else {
            "cannot write it"
        },
    );
}
