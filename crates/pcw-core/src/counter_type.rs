//! Counter types of `winperf.h` (REFERENCE.md §2): a lossless enum with the facts a writer,
//! a validator, a code generator and a cooker need, plus the counter manifest's type names.

/// Minimal stand-in while the full table is written (replaced in the same change).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterType {
    /// A value this crate does not recognise, kept as it came.
    Unknown(u32),
}

impl CounterType {
    /// The type for a raw `CounterType` value.
    pub const fn from_raw(raw: u32) -> Self {
        Self::Unknown(raw)
    }
    /// The raw `CounterType` value.
    pub const fn raw(self) -> u32 {
        match self {
            Self::Unknown(v) => v,
        }
    }
}
