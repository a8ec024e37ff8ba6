//! The library the sample tests exercise (tests/runners/cargo).

/// The sum of 1..=n.
pub fn triangle(n: u64) -> u64 {
    n * (n + 1) / 2
}
