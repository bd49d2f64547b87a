// SPDX-License-Identifier: MIT OR Apache-2.0
//! Standard output and standard error as fallible writes.
//!
//! `println!` and `eprintln!` panic when the stream fails (a reader that went away,
//! `/dev/full`). Here every write returns a [`StreamError`] instead, so a command stops and
//! exits non-zero, the same way for every command and every stream. Standard output that is a
//! file the command opened as an input (`pcw gen m.man >> m.man`) is refused at the first
//! write, as an output path naming an input is. (A descriptor closed before
//! the program started, `pcw … >&-`, is not an error: Rust's runtime opens `/dev/null` on it
//! before `main`, so that no file the program opens takes its place, and what is written there
//! is discarded as it would be for `>/dev/null`.)

use std::fmt;
use std::io::{self, Write};
use std::sync::OnceLock;

use thiserror::Error;

use crate::identity::Identity;

/// Which standard stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Stdout => "standard output",
            Self::Stderr => "standard error",
        })
    }
}

/// A write to a standard stream failed.
#[derive(Debug, Error)]
#[error("cannot write to {stream}: {source}")]
pub struct StreamError {
    /// The stream.
    pub stream: Stream,
    /// The cause.
    #[source]
    pub source: io::Error,
}

/// A standard stream as an [`io::Write`] (unlocked between writes, so that a message from
/// another thread is never cut in two by one of ours).
#[derive(Debug)]
pub struct Writer {
    stream: Stream,
}

impl Writer {
    /// The writer for `stream`.
    pub fn new(stream: Stream) -> Self {
        Self { stream }
    }
}

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.stream {
            Stream::Stdout => {
                refuse_an_input()?;
                io::stdout().lock().write(buf)
            }
            Stream::Stderr => io::stderr().lock().write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self.stream {
            Stream::Stdout => {
                refuse_an_input()?;
                io::stdout().lock().write_all(buf)
            }
            Stream::Stderr => io::stderr().lock().write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.stream {
            Stream::Stdout => io::stdout().lock().flush(),
            Stream::Stderr => io::stderr().lock().flush(),
        }
    }
}

/// An error when standard output is a regular file the command opened as an input
/// (`pcw gen m.man >> m.man`): what would be written there would change the input, which no
/// output of a command may (an output path naming one is refused the same way).
fn refuse_an_input() -> io::Result<()> {
    // Looked at once: the descriptor does not change while the command runs.
    static STDOUT: OnceLock<Option<Identity>> = OnceLock::new();
    let stdout = STDOUT.get_or_init(Identity::of_stdout).as_ref();
    match stdout.and_then(crate::input::opened_as) {
        Some(input) => Err(io::Error::other(format!(
            "it is `{}`, an input of this command; nothing was written to it",
            crate::text::shown(&input)
        ))),
        None => Ok(()),
    }
}

/// Writes all of `text` to `stream` and flushes it.
///
/// # Errors
/// [`StreamError`] when the stream is broken (its reader went away) or full.
pub fn write(stream: Stream, text: &str) -> Result<(), StreamError> {
    let mut w = Writer::new(stream);
    w.write_all(text.as_bytes())
        .and_then(|()| w.flush())
        .map_err(|source| StreamError { stream, source })
}

/// Writes `text` to standard output.
///
/// # Errors
/// [`StreamError`].
pub fn out(text: &str) -> Result<(), StreamError> {
    write(Stream::Stdout, text)
}

/// Writes `text` to standard error.
///
/// # Errors
/// [`StreamError`].
pub fn err(text: &str) -> Result<(), StreamError> {
    write(Stream::Stderr, text)
}

/// Maps an [`io::Error`] of a write to `stream` into a [`StreamError`].
pub fn failed(stream: Stream) -> impl FnOnce(io::Error) -> StreamError {
    move |source| StreamError { stream, source }
}
