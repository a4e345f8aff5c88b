//! `saga` over https: an example server behind a TLS front whose certificate a test
//! authority of its own signed. Trusted through `SSL_CERT_FILE` (the roots read in place
//! of the system's), a call goes through every round; not trusted, the connection is
//! refused and the error says why and what to do.
//!
//! The examples are binaries of the workspace's root package: build them first (see
//! tests/tasks.rs).

use std::net::SocketAddr;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

mod support;
use support::*;

/// A certificate authority made for one test, and a certificate for `localhost` it signed.
struct Authority {
    ca_pem: String,
    leaf: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

fn authority() -> Authority {
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "saga-cli tests' authority");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().expect("a CA key"))
        .expect("the CA's certificate");
    let key = KeyPair::generate().expect("a server key");
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .expect("server parameters")
        .signed_by(&key, &ca)
        .expect("the server's certificate");
    Authority {
        ca_pem: ca.pem(),
        leaf: leaf.der().clone(),
        key: PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
    }
}

/// Serves TLS with `authority`'s certificate on a free port of 127.0.0.1 and passes each
/// connection's bytes to `backend` (in a thread of its own, for the test's life).
fn tls_front(authority: &Authority, backend: SocketAddr) -> SocketAddr {
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(vec![authority.leaf.clone()], authority.key.clone_key())
    .expect("the server's certificate and key");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let address = listener.local_addr().expect("its address");
    listener.set_nonblocking(true).expect("non-blocking");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("the listener");
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A client that refuses the certificate ends the handshake here.
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
    });
    address
}

/// The `host:port` of an example's `http://host:port/mcp`.
fn backend(url: &str) -> SocketAddr {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap_or_else(|_| panic!("{url} is not http://ADDRESS/mcp"))
}

#[test]
fn a_call_goes_through_every_round_over_https() {
    let server = serve("migrate", &[]);
    let authority = authority();
    let front = tls_front(&authority, backend(&server.url));
    let url = format!("https://localhost:{}/mcp", front.port());
    let dir = temp_dir("tls");
    let ca = answers(&dir, "ca.pem", &authority.ca_pem);
    let trusted = [("SSL_CERT_FILE", ca.as_str())];

    let (code, out, err) = saga_with(&["tools", &url], &trusted);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("approve_migration"), "{out}");

    // A call whose form is answered: two rounds, each its own https request.
    let file = answers(&dir, "a.json", r#"{"elicit-1": {"approve": true}}"#);
    let (code, out, err) = saga_with(
        &[
            "call",
            "--answers",
            &file,
            &url,
            "approve_migration",
            "tables=5",
        ],
        &trusted,
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    let asked = at(&out, "Migrate 5 tables?");
    let result = at(&out, "5 tables approved");
    assert!(asked < result, "{out}");
}

#[test]
fn a_certificate_not_trusted_is_refused_and_said() {
    let server = serve("migrate", &[]);
    let authority = authority();
    let front = tls_front(&authority, backend(&server.url));
    let url = format!("https://localhost:{}/mcp", front.port());

    // No root the machine has signed the test authority's certificate.
    let (code, out, err) = saga(&["tools", &url]);
    assert_ne!(code, Some(0), "{out}\n{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains(&format!("cannot connect to {url}")), "{err}");
    assert!(err.contains("invalid peer certificate"), "{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");
    // What to do, which the test above does.
    assert!(
        err.contains(
            "to trust a private one, set SSL_CERT_FILE to a PEM file of the authorities \
             to trust (read instead of the system's)"
        ),
        "{err}"
    );

    // A plain-HTTP server asked over https: refused, with the TLS layer's reason.
    let plain = format!("https://localhost:{}/mcp", backend(&server.url).port());
    let (code, _, err) = saga(&["tools", &plain]);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains(&format!("cannot connect to {plain}")), "{err}");
    assert!(err.contains("corrupt message"), "{err}");
}

/// A machine with no authorities at all (a container without ca-certificates; here
/// `SSL_CERT_FILE` and `SSL_CERT_DIR` naming an empty file and directory): plain http still
/// works, and https is refused as signed by an unknown authority, with the hint.
#[test]
fn without_any_authority_http_still_works() {
    let server = serve("migrate", &[]);
    let authority = authority();
    let front = tls_front(&authority, backend(&server.url));
    let dir = temp_dir("no-roots");
    let empty = answers(&dir, "empty.pem", "");
    let empty_dir = dir.join("certs");
    std::fs::create_dir_all(&empty_dir).expect("an empty directory");
    let empty_dir = empty_dir.display().to_string();
    // Both variables, as a machine may set either (this one sets SSL_CERT_DIR).
    let no_roots = [
        ("SSL_CERT_FILE", empty.as_str()),
        ("SSL_CERT_DIR", empty_dir.as_str()),
    ];

    let (code, out, err) = saga_with(&["tools", &server.url], &no_roots);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("approve_migration"), "{out}");

    let url = format!("https://localhost:{}/mcp", front.port());
    let (code, out, err) = saga_with(&["tools", &url], &no_roots);
    assert_ne!(code, Some(0), "{out}\n{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");
    assert!(err.contains("set SSL_CERT_FILE"), "{err}");
}
