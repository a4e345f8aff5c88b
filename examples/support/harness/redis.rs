//! A `redis-server` of the test's own, on a free loopback port.

use std::process::Stdio;
use std::time::Duration;

/// A `redis-server` of our own on a free loopback port, stopped on drop.
pub struct Redis {
    child: std::process::Child,
    /// `redis://127.0.0.1:PORT/`.
    pub url: String,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts one; panics with the install command when `redis-server` is missing.
pub async fn start_redis() -> Redis {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| {
            panic!(
                "redis-server could not start ({error}); install it: apt-get install redis-server"
            )
        });
    // Owned by the guard at once, so that it is stopped and reaped on every path.
    let redis = Redis {
        child,
        url: format!("redis://127.0.0.1:{port}/"),
    };
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return redis;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("redis-server did not listen on {port}");
}
