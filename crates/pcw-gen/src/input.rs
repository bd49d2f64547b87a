// SPDX-License-Identifier: MIT OR Apache-2.0
//! What every operation reads: a manifest's bytes (or a Rust source's, for declarations) and
//! the name its diagnostics give it — read from a file, or given.

use std::borrow::Cow;
use std::path::Path;

use crate::error::Error;

/// A manifest to analyse, generate from or inspect (or a Rust source file holding `counters!`
/// declarations): its bytes in any encoding pcw reads (UTF-8 or UTF-16, with or without a byte
/// order mark), and the path its diagnostics and outputs are labelled with.
///
/// [`Input::read`] reads a file, bounded as every pcw input is; [`Input::new`] takes bytes the
/// caller already has (the path is then only a label). Every operation — [`crate::analyze`],
/// [`crate::lint`], [`crate::Config::generate`], [`crate::Config::inspect`],
/// [`crate::Config::v1_tables`], [`crate::declare::analyze_declarations`],
/// [`crate::declare::to_rust`] — takes one.
///
/// # Examples
///
/// ```
/// use pcw_gen::Input;
///
/// let input = Input::new("contoso_v11.man", include_str!("../tests/manifests/contoso_v11.man"));
/// assert_eq!(input.path(), std::path::Path::new("contoso_v11.man"));
/// assert!(pcw_gen::analyze(&input).manifest.is_some());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input<'a> {
    path: Cow<'a, Path>,
    bytes: Cow<'a, [u8]>,
}

impl<'a> Input<'a> {
    /// Bytes the caller has, labelled `path` (no file is read).
    ///
    /// # Examples
    ///
    /// ```
    /// let bytes: Vec<u8> = b"<counters/>".to_vec();
    /// let input = pcw_gen::Input::new("inline.man", &bytes);
    /// assert_eq!(input.bytes(), b"<counters/>");
    /// ```
    pub fn new<P, B>(path: &'a P, bytes: &'a B) -> Self
    where
        P: AsRef<Path> + ?Sized,
        B: AsRef<[u8]> + ?Sized,
    {
        Self {
            path: Cow::Borrowed(path.as_ref()),
            bytes: Cow::Borrowed(bytes.as_ref()),
        }
    }

    /// Reads the file at `path`, bounded by [`pcw_io::input::MANIFEST`] (a directory, or a
    /// file past the limit, is refused before anything is read).
    ///
    /// # Errors
    ///
    /// [`Error::Read`] naming the file and what went wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::{Error, Input};
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/manifests/contoso_v11.man");
    /// assert!(!Input::read(path)?.bytes().is_empty());
    /// assert!(matches!(Input::read("no/such.man"), Err(Error::Read(_))));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn read(path: impl AsRef<Path>) -> Result<Input<'static>, Error> {
        let path = path.as_ref();
        let bytes = pcw_io::input::read(path, pcw_io::input::MANIFEST)?;
        Ok(Input {
            path: Cow::Owned(path.to_path_buf()),
            bytes: Cow::Owned(bytes),
        })
    }

    /// The path: the file read, or the label given.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("a/b.man", "");
    /// assert_eq!(input.path().file_name().unwrap(), "b.man");
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes, as read or given.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(pcw_gen::Input::new("x.man", "abc").bytes(), b"abc");
    /// ```
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}
