// SPDX-License-Identifier: MIT OR Apache-2.0
//! Bounded reads of the tools' inputs.
//!
//! Every input has a [`Kind`]: what it is called in messages and the most bytes it may have.
//! [`Input::open`] refuses a directory, and a regular file whose size is over the limit, before
//! anything is read; a device, FIFO or other stream has no size to check, so reads stop one byte
//! past the limit and fail there. Memory is therefore bounded by the limit whatever the path
//! names: `/dev/zero`, a 2 GB sparse file, a pipe that never ends.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::identity::Identity;

use thiserror::Error;

/// What an input is, for messages, and how large it may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// The input's name in messages (`manifest`, `capture`, …).
    pub noun: &'static str,
    /// The most bytes it may have.
    pub limit: u64,
}

const MIB: u64 = 1 << 20;

/// A counter manifest (`.man`): 128 MiB, room for hundreds of thousands of counters in UTF-16.
pub const MANIFEST: Kind = Kind {
    noun: "manifest",
    limit: 128 * MIB,
};

/// A V1 performance data capture (`pcw dump`): 256 MiB.
pub const CAPTURE: Kind = Kind {
    noun: "capture",
    limit: 256 * MIB,
};

/// A typeperf counter file (`-cf`): 16 MiB of counter paths.
pub const COUNTER_FILE: Kind = Kind {
    noun: "counter file",
    limit: 16 * MIB,
};

/// A driver image (`.sys`): 256 MiB, more than the largest drivers Windows ships.
pub const IMAGE: Kind = Kind {
    noun: "driver image",
    limit: 256 * MIB,
};

/// A size as bytes, and in MiB when that reads better.
struct Size(u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= MIB && self.0.is_multiple_of(MIB) {
            write!(f, "{} MiB", self.0 / MIB)
        } else {
            write!(f, "{} bytes", self.0)
        }
    }
}

/// Why an input could not be read.
#[derive(Debug, Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("cannot read the {noun} `{}`: {source}", crate::text::shown(path))]
    Io {
        /// The input's noun.
        noun: &'static str,
        /// The path as given.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The path is a directory.
    #[error("the {noun} `{}` is a directory, not a file", crate::text::shown(path))]
    Directory {
        /// The input's noun.
        noun: &'static str,
        /// The path as given.
        path: PathBuf,
    },
    /// The input is larger than its kind allows.
    #[error("the {noun} `{}` {}; a {noun} may have at most {}", crate::text::shown(path), match size {
        Some(size) => format!("has {size} bytes"),
        None => format!("goes on past {} bytes", limit + 1),
    }, Size(*limit))]
    TooLarge {
        /// The input's noun.
        noun: &'static str,
        /// The path as given.
        path: PathBuf,
        /// Its size, when it is a regular file; `None` when a stream ran past the limit.
        size: Option<u64>,
        /// The limit.
        limit: u64,
    },
}

impl InputError {
    /// The error without the path, for a message that names the file already (a diagnostic
    /// `file:line:column: …`).
    pub fn describe(&self) -> String {
        match self {
            Self::Io { noun, source, .. } => format!("cannot read the {noun}: {source}"),
            Self::Directory { noun, .. } => format!("the {noun} is a directory, not a file"),
            Self::TooLarge {
                noun, size, limit, ..
            } => match size {
                Some(size) => format!(
                    "the {noun} has {size} bytes; a {noun} may have at most {}",
                    Size(*limit)
                ),
                None => format!(
                    "the {noun} goes on past {} bytes; a {noun} may have at most {}",
                    limit + 1,
                    Size(*limit)
                ),
            },
        }
    }

    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::Io { path, .. } | Self::Directory { path, .. } | Self::TooLarge { path, .. } => {
                path
            }
        }
    }
}

/// An open input: a regular file of known size, or a stream read up to the limit.
#[derive(Debug)]
pub struct Input {
    reader: io::Take<File>,
    path: PathBuf,
    kind: Kind,
    /// The size of a regular file.
    size: Option<u64>,
    /// Bytes read so far.
    read: u64,
}

impl Input {
    /// Opens `path` as an input of `kind`: a directory is refused, and so is a regular file
    /// larger than `kind.limit`.
    ///
    /// # Errors
    /// [`InputError`].
    pub fn open(path: &Path, kind: Kind) -> Result<Self, InputError> {
        let io_error = |source| InputError::Io {
            noun: kind.noun,
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io_error)?;
        let meta = file.metadata().map_err(io_error)?;
        if meta.is_dir() {
            return Err(InputError::Directory {
                noun: kind.noun,
                path: path.to_path_buf(),
            });
        }
        note_opened(&meta, path);
        let size = meta.is_file().then_some(meta.len());
        if let Some(size) = size.filter(|s| *s > kind.limit) {
            return Err(InputError::TooLarge {
                noun: kind.noun,
                path: path.to_path_buf(),
                size: Some(size),
                limit: kind.limit,
            });
        }
        Ok(Self {
            // One byte more than the limit, so that a stream running past it is seen.
            reader: file.take(kind.limit.saturating_add(1)),
            path: path.to_path_buf(),
            kind,
            size,
            read: 0,
        })
    }

    /// The size of a regular file; `None` for a device, FIFO or other stream.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// Bytes read so far.
    pub fn position(&self) -> u64 {
        self.read
    }

    fn io_error(&self, source: io::Error) -> InputError {
        InputError::Io {
            noun: self.kind.noun,
            path: self.path.clone(),
            source,
        }
    }

    fn too_large(&self) -> InputError {
        InputError::TooLarge {
            noun: self.kind.noun,
            path: self.path.clone(),
            size: self.size,
            limit: self.kind.limit,
        }
    }

    /// Appends up to `n` more bytes to `buf` (fewer at the end of the input) and returns how
    /// many were appended.
    ///
    /// # Errors
    /// [`InputError::Io`], and [`InputError::TooLarge`] when the input runs past its limit.
    pub fn read_up_to(&mut self, n: u64, buf: &mut Vec<u8>) -> Result<usize, InputError> {
        let start = buf.len();
        let got = (&mut self.reader)
            .take(n)
            .read_to_end(buf)
            .map_err(|e| self.io_error(e))?;
        self.read += got as u64;
        if self.read > self.kind.limit {
            buf.truncate(start);
            return Err(self.too_large());
        }
        Ok(got)
    }

    /// Reads the rest of the input.
    ///
    /// # Errors
    /// As [`Input::read_up_to`].
    pub fn read_rest(&mut self, buf: &mut Vec<u8>) -> Result<usize, InputError> {
        // Room for everything the input may still hold, reserved once: a regular file's size
        // (it may still change while read), or a stream's limit. Growing the buffer as it fills
        // would copy it at each doubling and hold twice the bytes at the peak; an untouched
        // reservation costs address space, not memory.
        let left = match self.size {
            Some(size) => size.saturating_sub(self.read),
            None => self.kind.limit.saturating_add(1).saturating_sub(self.read),
        };
        buf.reserve(usize::try_from(left).unwrap_or(0));
        self.read_up_to(u64::MAX, buf)
    }

    /// How many bytes are left, without keeping them: a regular file's remaining size, or a
    /// stream read to its end (up to the limit) and discarded.
    ///
    /// # Errors
    /// As [`Input::read_up_to`].
    pub fn count_rest(&mut self) -> Result<u64, InputError> {
        if let Some(size) = self.size {
            return Ok(size.saturating_sub(self.read));
        }
        let copied = io::copy(&mut self.reader, &mut io::sink()).map_err(|e| self.io_error(e))?;
        self.read += copied;
        if self.read > self.kind.limit {
            return Err(self.too_large());
        }
        Ok(copied)
    }
}

/// The regular files opened as inputs by this process, with the path each was opened by. A
/// standard output redirected onto one of them is refused ([`crate::console`]), as an output
/// path naming one is ([`crate::output`]).
static OPENED: Mutex<Vec<(Identity, PathBuf)>> = Mutex::new(Vec::new());

/// Lists `path`, just opened, if it is a regular file.
fn note_opened(meta: &fs::Metadata, path: &Path) {
    if !meta.is_file() {
        return;
    }
    if let Ok(id) = Identity::of(path, meta) {
        let mut opened = OPENED.lock().unwrap_or_else(PoisonError::into_inner);
        if !opened.iter().any(|(i, _)| *i == id) {
            opened.push((id, path.to_path_buf()));
        }
    }
}

/// The path of the input that is the file `id`, if one was opened.
pub(crate) fn opened_as(id: &Identity) -> Option<PathBuf> {
    let opened = OPENED.lock().unwrap_or_else(PoisonError::into_inner);
    opened.iter().find(|(i, _)| i == id).map(|(_, p)| p.clone())
}

/// Reads the whole input at `path`, bounded by `kind`'s limit.
///
/// # Errors
/// [`InputError`].
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, InputError> {
    let mut input = Input::open(path, kind)?;
    let mut bytes = Vec::new();
    input.read_rest(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Kind = Kind {
        noun: "thing",
        limit: 10,
    };

    #[test]
    fn a_regular_file_over_the_limit_is_refused_by_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        let file = File::create(&path).unwrap();
        // Sparse: nothing is written, and nothing may be read.
        file.set_len(3 << 30).unwrap();
        let err = read(&path, SMALL).unwrap_err();
        assert!(
            matches!(err, InputError::TooLarge { size: Some(s), limit: 10, .. } if s == 3 << 30),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "the thing `{}` has 3221225472 bytes; a thing may have at most 10 bytes",
                path.display()
            )
        );
        fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read(&path, SMALL).unwrap(), b"0123456789");
    }

    #[cfg(unix)]
    #[test]
    fn a_stream_is_read_to_the_limit_and_no_further() {
        let err = read(Path::new("/dev/zero"), MANIFEST).unwrap_err();
        assert!(
            matches!(err, InputError::TooLarge { size: None, .. }),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "the manifest `/dev/zero` goes on past 134217729 bytes; a manifest may have at most 128 MiB"
        );
        assert_eq!(read(Path::new("/dev/null"), SMALL).unwrap(), b"");
        let mut input = Input::open(Path::new("/dev/zero"), SMALL).unwrap();
        let mut buf = Vec::new();
        assert_eq!(input.read_up_to(4, &mut buf).unwrap(), 4);
        assert!(matches!(
            input.count_rest(),
            Err(InputError::TooLarge { .. })
        ));
    }

    #[test]
    fn directories_and_missing_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = read(dir.path(), SMALL).unwrap_err();
        assert!(matches!(err, InputError::Directory { .. }), "{err:?}");
        assert!(err.to_string().ends_with("is a directory, not a file"));
        let missing = dir.path().join("missing");
        let err = read(&missing, SMALL).unwrap_err();
        assert!(matches!(err, InputError::Io { .. }), "{err:?}");
        assert_eq!(err.path(), missing);
    }

    #[test]
    fn partial_reads_and_counting_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, b"abcdefgh").unwrap();
        let mut input = Input::open(&path, SMALL).unwrap();
        assert_eq!(input.size(), Some(8));
        let mut buf = Vec::new();
        assert_eq!(input.read_up_to(3, &mut buf).unwrap(), 3);
        assert_eq!(buf, b"abc");
        assert_eq!(input.position(), 3);
        assert_eq!(input.count_rest().unwrap(), 5);
    }
}
