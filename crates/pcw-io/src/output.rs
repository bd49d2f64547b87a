// SPDX-License-Identifier: MIT OR Apache-2.0
//! All-or-nothing outputs.
//!
//! A command declares the files it reads ([`Outputs::input`]) and plans what it writes
//! ([`Outputs::add`]). Planning refuses, before anything is written, an output that is one of
//! the inputs (the same file, through any path, hard link or symbolic link), an output named
//! twice, a directory, and a dangling symbolic link. [`Outputs::commit`] then:
//!
//! 1. leaves alone every regular file that already holds exactly the planned bytes (so cargo
//!    and resource compilers see no change), reading it only because it is a regular file of
//!    the planned size;
//! 2. writes each other regular-file output to a new temporary file in its destination's
//!    directory, with the permissions of the file it replaces (a new file gets those
//!    `File::create` gives: 0666 less the umask on Unix);
//! 3. writes each device, FIFO or socket output directly (these are never read, and cannot be
//!    replaced);
//! 4. only when all of that succeeded, renames every temporary file over its destination.
//!
//! A failure in steps 1–3 (a full disk, a missing permission, a closed pipe) leaves every
//! destination as it was and no temporary file behind. A rename can only fail for reasons that
//! would also have stopped the write (the directory vanished), and the error names the file.
//!
//! [`OutputFile`] is one output written progressively (typeperf's `-o`): a temporary file
//! renamed into place by [`OutputFile::commit`], removed if the command fails first.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use tempfile::NamedTempFile;
use thiserror::Error;

use crate::identity::Identity;
use crate::staged::{self, Listed};

/// A temporary file an output is staged in, listed while it exists ([`crate::staged`]).
type Temp = Listed<NamedTempFile>;

/// Why an output could not be planned or written.
#[derive(Debug, Error)]
pub enum OutputError {
    /// The output is one of the command's inputs.
    #[error(
        "`{}` is also an input of this command (`{}`); refusing to overwrite it",
        crate::text::shown(path),
        crate::text::shown(input)
    )]
    IsInput {
        /// The output path as given.
        path: PathBuf,
        /// The input path as given.
        input: PathBuf,
    },
    /// The same file is named as two outputs.
    #[error(
        "`{}` is named as two outputs (`{}` too); each output needs its own file",
        crate::text::shown(path),
        crate::text::shown(other)
    )]
    Twice {
        /// The output path as given.
        path: PathBuf,
        /// The other output naming the same file.
        other: PathBuf,
    },
    /// The output path is a directory, or is written as one (ending with a separator, `.` or
    /// `..`).
    #[error("`{}` names a directory; give a file name", crate::text::shown(path))]
    Directory {
        /// The output path as given.
        path: PathBuf,
    },
    /// The output exists and the command was told not to overwrite it.
    #[error("`{}` already exists; {hint}", crate::text::shown(path))]
    Exists {
        /// The output path as given.
        path: PathBuf,
        /// How to overwrite it anyway.
        hint: &'static str,
    },
    /// The output path is a symbolic link to nothing.
    #[error(
        "`{}` is a symbolic link to a file that does not exist",
        crate::text::shown(path)
    )]
    DanglingLink {
        /// The output path as given.
        path: PathBuf,
    },
    /// Writing (or checking) the output failed.
    #[error("cannot write `{}`: {source}", crate::text::shown(path))]
    Write {
        /// The output path as given.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// Where an output goes.
#[derive(Debug)]
enum Dest {
    /// A regular file, existing (with its metadata) or to be created, at this path (symbolic
    /// links resolved, so that the rename replaces the file and not the link).
    File {
        path: PathBuf,
        existing: Option<fs::Metadata>,
    },
    /// A device, FIFO or socket, written directly.
    Stream,
}

/// One planned output.
#[derive(Debug)]
struct Planned {
    shown: PathBuf,
    dest: Dest,
    identity: Option<Identity>,
    bytes: Vec<u8>,
}

/// What happened to one output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Committed {
    /// The path as given.
    pub path: PathBuf,
    /// Whether its content was written (`false`: it already held the bytes).
    pub changed: bool,
}

/// The inputs and the planned outputs of one command (see the module docs).
#[derive(Debug, Default)]
pub struct Outputs {
    inputs: Vec<(PathBuf, Identity)>,
    planned: Vec<Planned>,
    create_dirs: bool,
}

/// Whether `path` as written names a directory whether or not one is there: it ends with a
/// separator, `.` or `..` (`out.rs/` would otherwise be written as the file `out.rs`).
fn names_a_directory(path: &Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    let last = bytes
        .rsplit(|b| std::path::is_separator(char::from(*b)))
        .next()
        .unwrap_or_default();
    !bytes.is_empty() && matches!(last, b"" | b"." | b"..")
}

fn write_error(path: &Path) -> impl FnOnce(io::Error) -> OutputError + '_ {
    move |source| OutputError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// `path` made absolute and free of `.` and `..`: its longest existing prefix resolved by the
/// file system (symbolic links followed), the rest, which will be created as plain
/// directories, folded lexically. Two spellings of one new file then compare equal.
fn resolve_new(path: &Path) -> io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let parts: Vec<Component<'_>> = absolute.components().collect();
    let mut split = parts.len();
    let mut prefix: PathBuf = parts.iter().collect();
    while split > 0 && fs::metadata(&prefix).is_err() {
        split -= 1;
        prefix = parts.iter().take(split).collect();
    }
    let mut out = fs::canonicalize(&prefix).unwrap_or(prefix);
    out.extend(parts.iter().skip(split));
    Ok(normalize(&out))
}

/// Removes `.` and folds `..` lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

impl Outputs {
    /// No inputs, no outputs.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether missing directories on the way to an output are created (default: no, a
    /// missing directory is an error, as for any command-line tool; a build script writing
    /// into its own output tree turns it on).
    pub fn create_dirs(&mut self, yes: bool) -> &mut Self {
        self.create_dirs = yes;
        self
    }

    /// Declares a file the command reads: no output may be that file. A path that does not
    /// exist is no file to protect and is ignored (reading it fails on its own).
    pub fn input(&mut self, path: &Path) -> &mut Self {
        if let Ok(meta) = fs::metadata(path)
            && let Ok(identity) = Identity::of(path, &meta)
        {
            self.inputs.push((path.to_path_buf(), identity));
        }
        self
    }

    /// Where `path` would be written, after the checks common to [`Outputs::add`] and
    /// [`Outputs::open`].
    fn plan(&self, path: &Path) -> Result<(Dest, Option<Identity>), OutputError> {
        if names_a_directory(path) {
            return Err(OutputError::Directory {
                path: path.to_path_buf(),
            });
        }
        match fs::metadata(path) {
            Ok(meta) => {
                if meta.is_dir() {
                    return Err(OutputError::Directory {
                        path: path.to_path_buf(),
                    });
                }
                let identity = Identity::of(path, &meta).map_err(write_error(path))?;
                if let Some((input, _)) = self.inputs.iter().find(|(_, i)| *i == identity) {
                    return Err(OutputError::IsInput {
                        path: path.to_path_buf(),
                        input: input.clone(),
                    });
                }
                if let Some(other) = self
                    .planned
                    .iter()
                    .find(|p| p.identity.as_ref() == Some(&identity))
                {
                    return Err(OutputError::Twice {
                        path: path.to_path_buf(),
                        other: other.shown.clone(),
                    });
                }
                let dest = if meta.is_file() {
                    Dest::File {
                        path: fs::canonicalize(path).map_err(write_error(path))?,
                        existing: Some(meta),
                    }
                } else {
                    Dest::Stream
                };
                Ok((dest, Some(identity)))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if fs::symlink_metadata(path).is_ok() {
                    return Err(OutputError::DanglingLink {
                        path: path.to_path_buf(),
                    });
                }
                let resolved = resolve_new(path).map_err(write_error(path))?;
                let twice = self.planned.iter().find(|p| match &p.dest {
                    Dest::File {
                        path: other,
                        existing: None,
                    } => *other == resolved,
                    _ => false,
                });
                if let Some(other) = twice {
                    return Err(OutputError::Twice {
                        path: path.to_path_buf(),
                        other: other.shown.clone(),
                    });
                }
                Ok((
                    Dest::File {
                        path: resolved,
                        existing: None,
                    },
                    None,
                ))
            }
            Err(e) => Err(write_error(path)(e)),
        }
    }

    /// Plans writing `bytes` to `path`.
    ///
    /// # Errors
    /// [`OutputError::IsInput`], [`OutputError::Twice`], [`OutputError::Directory`],
    /// [`OutputError::DanglingLink`], or [`OutputError::Write`] when the path cannot even be
    /// examined.
    pub fn add(
        &mut self,
        path: &Path,
        bytes: impl Into<Vec<u8>>,
    ) -> Result<&mut Self, OutputError> {
        let (dest, identity) = self.plan(path)?;
        self.planned.push(Planned {
            shown: path.to_path_buf(),
            dest,
            identity,
            bytes: bytes.into(),
        });
        Ok(self)
    }

    /// Writes every planned output, all or nothing (see the module docs).
    ///
    /// # Errors
    /// [`OutputError::Write`] naming the output that failed; no destination has changed unless
    /// the failure was a final rename.
    pub fn commit(self) -> Result<Vec<Committed>, OutputError> {
        let mut staged: Vec<(Temp, PathBuf, PathBuf)> = Vec::new();
        let mut results = Vec::with_capacity(self.planned.len());
        // Regular files first: staged beside their destinations.
        for p in self
            .planned
            .iter()
            .filter(|p| matches!(p.dest, Dest::File { .. }))
        {
            let Dest::File { path, existing } = &p.dest else {
                continue;
            };
            let unchanged = existing
                .as_ref()
                .is_some_and(|m| m.len() == p.bytes.len() as u64)
                && fs::read(path).is_ok_and(|old| old == p.bytes);
            results.push(Committed {
                path: p.shown.clone(),
                changed: !unchanged,
            });
            if unchanged {
                continue;
            }
            let temp = stage(
                path,
                &p.bytes,
                existing.as_ref().map(fs::Metadata::permissions),
                self.create_dirs,
            )
            .map_err(write_error(&p.shown))?;
            staged.push((temp, path.clone(), p.shown.clone()));
        }
        // Then streams, which cannot be taken back: only once every file is staged.
        for p in self
            .planned
            .iter()
            .filter(|p| matches!(p.dest, Dest::Stream))
        {
            let mut stream = OpenOptions::new()
                .write(true)
                .open(&p.shown)
                .map_err(write_error(&p.shown))?;
            stream
                .write_all(&p.bytes)
                .and_then(|()| stream.flush())
                .map_err(write_error(&p.shown))?;
            results.push(Committed {
                path: p.shown.clone(),
                changed: true,
            });
        }
        // Renamed under one lock of the staged list: an interrupt finds all of them done or
        // none begun. The temporaries left after a failure are dropped (removed) after it.
        let mut pending = staged.into_iter();
        let renamed = staged::renaming(|list| {
            for (temp, dest, shown) in pending.by_ref() {
                if let Some(file) = temp.take_in(list) {
                    file.persist(&dest)
                        .map_err(|e| write_error(&shown)(e.error))?;
                }
            }
            Ok(())
        });
        drop(pending);
        renamed.map(|()| results)
    }

    /// Opens `path` as one output written progressively ([`OutputFile`]), after the same
    /// checks as [`Outputs::add`]. With `existing = Some(hint)`, an existing regular file is
    /// refused with [`OutputError::Exists`] and the hint (how to overwrite it).
    ///
    /// # Errors
    /// As [`Outputs::add`], [`OutputError::Exists`], and [`OutputError::Write`] when the
    /// temporary file cannot be created or a stream cannot be opened.
    pub fn open(
        &self,
        path: &Path,
        existing: Option<&'static str>,
    ) -> Result<OutputFile, OutputError> {
        let (dest, _) = self.plan(path)?;
        let sink = match dest {
            Dest::File {
                path: dest,
                existing: old,
            } => {
                if let (Some(hint), Some(_)) = (existing, &old) {
                    return Err(OutputError::Exists {
                        path: path.to_path_buf(),
                        hint,
                    });
                }
                let temp = stage(
                    &dest,
                    &[],
                    old.as_ref().map(fs::Metadata::permissions),
                    self.create_dirs,
                )
                .map_err(write_error(path))?;
                Sink::Temp {
                    file: io::BufWriter::new(temp),
                    dest,
                }
            }
            Dest::Stream => Sink::Stream(
                OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(write_error(path))?,
            ),
        };
        Ok(OutputFile {
            shown: path.to_path_buf(),
            sink,
        })
    }
}

/// Whether the regular file `dest` holds exactly the bytes of `staged`, read a piece at a time
/// (a progressive output can be large); `false` when either cannot be read.
fn same_content(staged: &Path, dest: &Path) -> bool {
    use std::io::Read;
    let open = |p: &Path| File::open(p).and_then(|f| Ok((f.metadata()?, f)));
    let (Ok((new_meta, mut new)), Ok((old_meta, mut old))) = (open(staged), open(dest)) else {
        return false;
    };
    if !old_meta.is_file() || new_meta.len() != old_meta.len() {
        return false;
    }
    let (mut new_piece, mut old_piece) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let read = match new.read(&mut new_piece) {
            Ok(0) => return old.read(&mut old_piece[..1]).is_ok_and(|more| more == 0),
            Ok(read) => read,
            Err(_) => return false,
        };
        let (Some(new_piece), Some(old_piece)) = (new_piece.get(..read), old_piece.get_mut(..read))
        else {
            return false;
        };
        if old.read_exact(old_piece).is_err() || new_piece != old_piece {
            return false;
        }
    }
}

/// A new temporary file in `dest`'s directory (created if missing and `create_dirs`) holding
/// `bytes`, with `permissions` when it replaces a file.
fn stage(
    dest: &Path,
    bytes: &[u8],
    permissions: Option<Permissions>,
    create_dirs: bool,
) -> io::Result<Temp> {
    let dir = dest
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    if create_dirs {
        fs::create_dir_all(dir)?;
    }
    let name = dest
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    if permissions.is_none() {
        // A new file gets what `File::create` would give it (0666 less the umask), not the
        // owner-only mode of a temporary file.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(Permissions::from_mode(0o666));
    }
    let mut temp = Temp::create(|| builder.tempfile_in(dir), NamedTempFile::path).map_err(|e| {
        // tempfile's error reads "<the system's error> at path <the temporary file>", a path
        // the user never gave: the directory is named instead.
        let text = e.to_string();
        let cause = text
            .split_once(" at path ")
            .map_or(text.as_str(), |(cause, _)| cause);
        io::Error::new(
            e.kind(),
            format!(
                "no file can be created in its directory `{}` (an output is written beside its \
                 destination, then renamed over it): {cause}",
                crate::text::shown(dir),
            ),
        )
    })?;
    temp.write_all(bytes)?;
    temp.flush()?;
    if let (Some(permissions), Some(file)) = (permissions, temp.get_mut()) {
        file.as_file().set_permissions(permissions)?;
    }
    Ok(temp)
}

/// Writes go to the temporary file (an error once it was taken to be renamed, which ends its
/// writes).
impl Write for Temp {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.get_mut() {
            Some(file) => file.write(buf),
            None => Err(taken()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.get_mut() {
            Some(file) => file.flush(),
            None => Err(taken()),
        }
    }
}

/// The error of a write after the temporary was renamed into place (not reached: renaming
/// consumes it).
fn taken() -> io::Error {
    io::Error::other("the temporary file was already renamed into place")
}

#[derive(Debug)]
enum Sink {
    Temp {
        file: io::BufWriter<Temp>,
        dest: PathBuf,
    },
    Stream(File),
}

/// One output written progressively: a temporary file renamed over its destination by
/// [`OutputFile::commit`] (dropped without it, the temporary file is removed and the
/// destination is untouched), or a device or FIFO written directly.
#[derive(Debug)]
pub struct OutputFile {
    shown: PathBuf,
    sink: Sink,
}

impl OutputFile {
    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Flushes the output and, for a file, renames it into place.
    ///
    /// # Errors
    /// [`OutputError::Write`].
    pub fn commit(self) -> Result<(), OutputError> {
        let shown = self.shown;
        match self.sink {
            Sink::Temp { file, dest } => {
                let temp = file
                    .into_inner()
                    .map_err(|e| write_error(&shown)(e.into_error()))?;
                // A file whose content did not change is left untouched (the temporary is
                // removed as `temp` is dropped), as `Outputs::commit` leaves it.
                if same_content(temp.path(), &dest) {
                    return Ok(());
                }
                staged::renaming(|list| match temp.take_in(list) {
                    Some(file) => file
                        .persist(&dest)
                        .map(drop)
                        .map_err(|e| write_error(&shown)(e.error)),
                    None => Ok(()),
                })
            }
            Sink::Stream(mut stream) => stream.flush().map_err(write_error(&shown)),
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.sink {
            Sink::Temp { file, .. } => file.write(buf),
            Sink::Stream(stream) => stream.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Temp { file, .. } => file.flush(),
            Sink::Stream(stream) => stream.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn outputs_are_written_and_unchanged_files_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.rs");
        let b = dir.path().join("sub/b.rc");
        let mut outputs = Outputs::new();
        outputs.add(&a, b"one".to_vec()).unwrap();
        outputs.add(&b, b"two".to_vec()).unwrap();
        let err = outputs.commit().unwrap_err();
        assert!(
            matches!(&err, OutputError::Write { path, source } if *path == b && source.kind() == io::ErrorKind::NotFound),
            "{err:?}"
        );
        assert!(!a.exists(), "nothing is written when one output fails");
        let mut outputs = Outputs::new();
        outputs.create_dirs(true);
        outputs.add(&a, b"one".to_vec()).unwrap();
        outputs.add(&b, b"two".to_vec()).unwrap();
        let done = outputs.commit().unwrap();
        assert!(done.iter().all(|c| c.changed));
        assert_eq!(fs::read(&a).unwrap(), b"one");
        assert_eq!(fs::read(&b).unwrap(), b"two");
        let mut outputs = Outputs::new();
        outputs.add(&a, b"one".to_vec()).unwrap();
        outputs.add(&b, b"TWO".to_vec()).unwrap();
        let done = outputs.commit().unwrap();
        assert_eq!(
            done.iter().map(|c| c.changed).collect::<Vec<_>>(),
            [false, true]
        );
        assert_eq!(fs::read(&b).unwrap(), b"TWO");
        assert_eq!(listing(dir.path()), ["a.rs", "sub"]);
        assert_eq!(listing(&dir.path().join("sub")), ["b.rc"]);
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_through_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("m.man");
        fs::write(&input, b"manifest").unwrap();
        let mut outputs = Outputs::new();
        outputs.input(&input);
        let dotted = dir.path().join(".").join("m.man");
        for path in [input.clone(), dotted] {
            let err = outputs.add(&path, b"x".to_vec()).unwrap_err();
            assert!(matches!(err, OutputError::IsInput { .. }), "{err:?}");
        }
        #[cfg(unix)]
        {
            let hard = dir.path().join("hard.man");
            fs::hard_link(&input, &hard).unwrap();
            let soft = dir.path().join("soft.man");
            std::os::unix::fs::symlink(&input, &soft).unwrap();
            for path in [hard, soft] {
                let err = outputs.add(&path, b"x".to_vec()).unwrap_err();
                assert!(matches!(err, OutputError::IsInput { .. }), "{err:?}");
            }
        }
        assert_eq!(fs::read(&input).unwrap(), b"manifest");
    }

    #[test]
    fn the_same_output_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut outputs = Outputs::new();
        outputs
            .add(&dir.path().join("x.rc"), b"1".to_vec())
            .unwrap();
        let again = dir.path().join("new/../x.rc");
        let err = outputs.add(&again, b"2".to_vec()).unwrap_err();
        assert!(matches!(err, OutputError::Twice { .. }), "{err:?}");
        let existing = dir.path().join("e");
        fs::write(&existing, b"").unwrap();
        outputs.add(&existing, b"1".to_vec()).unwrap();
        let err = outputs
            .add(&dir.path().join("./e"), b"2".to_vec())
            .unwrap_err();
        assert!(matches!(err, OutputError::Twice { .. }), "{err:?}");
        let err = outputs.add(dir.path(), b"2".to_vec()).unwrap_err();
        assert!(matches!(err, OutputError::Directory { .. }), "{err:?}");
        // Written as a directory, a path is refused even where nothing is yet, and nothing is
        // created for it.
        for name in ["new.rs/", "new.rs/.", "new.rs//", "sub/.."] {
            let path = format!("{}/{name}", dir.path().display());
            let err = outputs.add(Path::new(&path), b"3".to_vec()).unwrap_err();
            assert!(
                matches!(err, OutputError::Directory { .. }),
                "{name}: {err:?}"
            );
            let err = outputs.open(Path::new(&path), None).unwrap_err();
            assert!(
                matches!(err, OutputError::Directory { .. }),
                "{name}: {err:?}"
            );
        }
        assert!(!dir.path().join("new.rs").exists());
        // Names that only look like those are files.
        for name in ["a.", "..foo", ".hidden", "sub/.hidden"] {
            let path = dir.path().join(name);
            outputs.add(&path, b"4".to_vec()).unwrap();
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_failing_output_leaves_every_destination_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, b"old a").unwrap();
        let mut outputs = Outputs::new();
        outputs.add(&a, b"new a".to_vec()).unwrap();
        outputs.add(Path::new("/dev/full"), b"x".to_vec()).unwrap();
        let err = outputs.commit().unwrap_err();
        assert!(
            matches!(&err, OutputError::Write { path, source } if path == Path::new("/dev/full") && source.raw_os_error() == Some(28)),
            "{err:?}"
        );
        assert_eq!(fs::read(&a).unwrap(), b"old a");
        assert_eq!(listing(dir.path()), ["a"]);
    }

    #[cfg(unix)]
    #[test]
    fn replaced_files_keep_their_permissions_and_links_their_targets() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.rs");
        fs::write(&real, b"old").unwrap();
        fs::set_permissions(&real, Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.rs");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut outputs = Outputs::new();
        outputs.add(&link, b"new".to_vec()).unwrap();
        outputs.commit().unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let err = Outputs::new().add(&dangling, b"x".to_vec()).unwrap_err();
        assert!(matches!(err, OutputError::DanglingLink { .. }), "{err:?}");
    }

    #[cfg(unix)]
    #[test]
    fn new_files_get_the_modes_file_create_gives_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let created = dir.path().join("created");
        File::create(&created).unwrap();
        let planned = dir.path().join("planned.rs");
        let mut outputs = Outputs::new();
        outputs.add(&planned, b"new".to_vec()).unwrap();
        outputs.commit().unwrap();
        let progressive = dir.path().join("progressive.csv");
        let file = Outputs::new().open(&progressive, None).unwrap();
        file.commit().unwrap();
        // Under the usual umask 022 that is 0644; a temporary file's own mode is 0600.
        assert_eq!(mode(&planned), mode(&created));
        assert_eq!(mode(&progressive), mode(&created));
        assert_ne!(
            mode(&created) & 0o066,
            0,
            "the test needs a umask that lets others read"
        );
    }

    #[test]
    fn a_directory_that_takes_no_new_file_is_named_not_the_temporary_file() {
        // The directory vanishes between planning and writing (as one that refuses new files
        // to a user who is not root, the stage cannot be created).
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        let mut outputs = Outputs::new();
        outputs.add(&sub.join("out.rs"), b"new".to_vec()).unwrap();
        fs::remove_dir(&sub).unwrap();
        let message = outputs.commit().unwrap_err().to_string();
        assert!(!message.contains(".out.rs."), "{message}");
        assert!(
            message.contains("no file can be created in its directory") && message.contains("sub`"),
            "{message}"
        );
    }

    #[test]
    fn a_progressive_output_appears_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        let outputs = Outputs::new();
        let mut file = outputs.open(&path, Some("pass -y")).unwrap();
        file.write_all(b"row 1\n").unwrap();
        assert!(!path.exists());
        drop(file);
        assert_eq!(listing(dir.path()), Vec::<String>::new());
        let mut file = outputs.open(&path, Some("pass -y")).unwrap();
        file.write_all(b"row 1\n").unwrap();
        file.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"row 1\n");
        let err = outputs.open(&path, Some("pass -y")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("`{}` already exists; pass -y", path.display())
        );
        let mut file = outputs.open(&path, None).unwrap();
        file.write_all(b"row 2\n").unwrap();
        file.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"row 2\n");
        // The same bytes again: the file is left as it was (same inode, same time), and the
        // temporary is gone; a longer or different content replaces it.
        let age = |p: &Path| {
            File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(std::time::SystemTime::UNIX_EPOCH)
                .unwrap();
        };
        age(&path);
        let identity = |p: &Path| Identity::of(p, &fs::metadata(p).unwrap()).unwrap();
        let before = identity(&path);
        let mut file = outputs.open(&path, None).unwrap();
        file.write_all(b"row 2\n").unwrap();
        file.commit().unwrap();
        assert_eq!(identity(&path), before);
        assert_eq!(
            fs::metadata(&path).unwrap().modified().unwrap(),
            std::time::SystemTime::UNIX_EPOCH
        );
        assert_eq!(listing(dir.path()), ["out.csv"]);
        for content in [&b"row 2\nrow 3\n"[..], b"row 3\n"] {
            age(&path);
            let mut file = outputs.open(&path, None).unwrap();
            file.write_all(content).unwrap();
            file.commit().unwrap();
            assert_eq!(listing(dir.path()), ["out.csv"]);
            assert_eq!(fs::read(&path).unwrap(), content);
            let time = fs::metadata(&path).unwrap().modified().unwrap();
            assert_ne!(time, std::time::SystemTime::UNIX_EPOCH);
        }
    }
}
