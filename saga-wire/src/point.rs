//! A suspension point's key: what a token names of the point it stopped at.

use sha2::{Digest, Sha256};

/// What a token says of the suspension point it stopped at: 8 bytes in its header, and
/// the point's whole identity in its associated data. The runtime makes both from the
/// tool, its version, the point and its saved layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointKey {
    /// The header's 8 bytes: a tag of the tool's and the point's names (4), the tool's
    /// version (2, big-endian), a tag of the identity (2).
    pub header: [u8; 8],
    /// The whole identity: SHA-256 of the tool, version, point and saved layout.
    pub identity: [u8; 32],
}

impl PointKey {
    /// The version a point header names.
    #[inline]
    pub fn version_of(header: &[u8; 8]) -> u16 {
        u16::from_be_bytes([header[4], header[5]])
    }
}

/// The key of point `point` of `tool` at `version` with layout `layout`.
pub fn point_key(tool: &str, version: u16, point: &str, layout: &str) -> PointKey {
    let identity: [u8; 32] = Sha256::new()
        .chain_update(b"saga-point/v1\0")
        .chain_update(tool.as_bytes())
        .chain_update([0])
        .chain_update(version.to_be_bytes())
        .chain_update(point.as_bytes())
        .chain_update([0])
        .chain_update(layout.as_bytes())
        .finalize()
        .into();
    let names = name_tag(tool, point);
    let version = version.to_be_bytes();
    let header = [
        names[0],
        names[1],
        names[2],
        names[3],
        version[0],
        version[1],
        identity[0],
        identity[1],
    ];
    PointKey { header, identity }
}

/// The key of the tagged twin of the point [`point_key`] gives: the key of a state whose
/// saved locals each name their encoding (saga-runtime's `engine/identity/points.rs`).
pub fn tagged_point_key(tool: &str, version: u16, point: &str, layout: &str) -> PointKey {
    // `\0` is quoted in any name a layout shows: no layout text ends so.
    point_key(tool, version, point, &format!("{layout}\0tagged"))
}

fn name_tag(tool: &str, point: &str) -> [u8; 4] {
    let digest = Sha256::new()
        .chain_update(b"saga-point-name/v1\0")
        .chain_update(tool.as_bytes())
        .chain_update([0])
        .chain_update(point.as_bytes())
        .finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}
