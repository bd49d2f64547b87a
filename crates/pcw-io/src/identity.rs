// SPDX-License-Identifier: MIT OR Apache-2.0
//! What makes two paths, or a path and a descriptor, the same file: the one test of it for the
//! outputs that name an input ([`crate::output`]) and a standard output redirected onto one
//! ([`crate::console`], through [`crate::input`]'s list of opened inputs).

use std::fs;
use std::io;
use std::path::Path;

/// The identity of an existing file, through any of its names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Identity(#[cfg(unix)] (u64, u64), #[cfg(not(unix))] same_file::Handle);

impl Identity {
    /// The identity of what `path` names (symbolic links followed), without opening it — a
    /// FIFO's open would block.
    #[cfg(unix)]
    #[expect(
        clippy::unnecessary_wraps,
        reason = "the same signature as the other systems', where finding the identity can fail"
    )]
    pub(crate) fn of(path: &Path, meta: &fs::Metadata) -> io::Result<Self> {
        let _ = path;
        Ok(Self::of_metadata(meta))
    }

    #[cfg(not(unix))]
    pub(crate) fn of(path: &Path, _meta: &fs::Metadata) -> io::Result<Self> {
        same_file::Handle::from_path(path).map(Self)
    }

    /// A file's identity from its metadata alone (device and inode).
    #[cfg(unix)]
    fn of_metadata(meta: &fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self((meta.dev(), meta.ino()))
    }

    /// Standard output's identity when it is a regular file (`None` for a pipe, a terminal, a
    /// device, a closed descriptor, and off Unix).
    pub(crate) fn of_stdout() -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .ok()
                .and_then(|fd| fs::File::from(fd).metadata().ok())
                .filter(fs::Metadata::is_file)
                .map(|meta| Self::of_metadata(&meta))
        }
        #[cfg(not(unix))]
        None
    }
}
