// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-io: how the pcw-rs tools read their inputs, decode text, write their outputs and print,
//! so that a closed pipe, a full disk, an output path that is also an input, a FIFO, a device
//! or a 2 GB file never crashes a command, hangs it, exhausts memory, or loses a file.
//!
//! * [`input`]: bounded reads. Each kind of input has a size limit ([`input::MANIFEST`],
//!   [`input::CAPTURE`], [`input::COUNTER_FILE`], [`input::IMAGE`]); a regular file over it is
//!   refused by its size before a byte is read, anything else is read up to the limit.
//! * [`text`]: the one decoding of text files (UTF-8 with or without BOM, UTF-16 LE/BE), with
//!   the line and column of the first invalid byte; and how a message quotes user text
//!   ([`text::visible`]) and paths ([`text::shown`]), so that neither can break its line.
//! * [`output`]: all-or-nothing outputs. [`output::Outputs`] plans every output of a command,
//!   refuses an output that is an input or is named twice, then writes each to a temporary file
//!   in its destination's directory and renames them all only when every one was written.
//!   Unchanged files are not rewritten; devices and pipes are written directly, never read.
//!   [`output::OutputFile`] is one such output written progressively (typeperf's `-o`).
//! * [`tree`]: a new directory of files, all or nothing: staged beside its destination and
//!   renamed into place when every file was written; an existing one replaced only when the
//!   command is told to, and never one holding an input.
//! * [`console`]: standard output and error as fallible writes. A broken pipe or a full device
//!   is an error the caller returns, never a panic.
//! * [`staged`]: the temporaries of [`output`] and [`tree`], known to the whole process, so
//!   that a command stopped by a signal removes them ([`staged::discard`]) before it exits.
//!
//! Nothing here panics, whatever the file system does.
#![forbid(
    unsafe_code,
    reason = "the standard library's file and pipe calls cover everything these reads and writes do"
)]

pub mod console;
mod identity;
pub mod input;
pub mod output;
pub mod staged;
pub mod text;
pub mod tree;

pub use console::StreamError;
pub use input::{InputError, Kind};
pub use output::{OutputError, OutputFile, Outputs};
pub use text::{TextError, decode};
pub use tree::{Tree, TreeError};

/// The README, compiled as documentation tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
