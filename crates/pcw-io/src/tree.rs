// SPDX-License-Identifier: MIT OR Apache-2.0
//! A new directory of files, all or nothing (what `pcw new` writes).
//!
//! [`Tree`] collects the files (paths relative to the directory, and their bytes), then
//! [`Tree::commit`]:
//!
//! 1. refuses, before writing anything, a destination that exists unless told to replace it
//!    (and then only a directory, never a file), a destination whose parent directory does not
//!    exist, a file path that leaves the directory (absolute, or with `..`), and a replaced
//!    directory that holds one of the command's inputs;
//! 2. writes every file into a new temporary directory beside the destination;
//! 3. only when all were written, renames the temporary directory to the destination — after
//!    moving a directory it replaces aside, which is removed once the new one is in place (and
//!    put back should the rename fail).
//!
//! A failure in steps 1–2 (a full disk, a missing permission) leaves the destination as it was
//! and no temporary directory behind.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use thiserror::Error;

/// Why a directory could not be written.
#[derive(Debug, Error)]
pub enum TreeError {
    /// The destination exists and the command was not told to replace it.
    #[error("`{}` already exists; {hint}", crate::text::shown(path))]
    Exists {
        /// The destination.
        path: PathBuf,
        /// How to replace it anyway.
        hint: &'static str,
    },
    /// The destination is not a directory (a file is never replaced by a directory).
    #[error("`{}` exists and is not a directory", crate::text::shown(path))]
    NotDirectory {
        /// The destination.
        path: PathBuf,
    },
    /// The directory that would hold the destination does not exist.
    #[error("the directory `{}` does not exist", crate::text::shown(path))]
    NoParent {
        /// The missing directory.
        path: PathBuf,
    },
    /// A file path that is not inside the directory.
    #[error(
        "`{}` is not a relative path inside the new directory",
        crate::text::shown(path)
    )]
    Escapes {
        /// The path given.
        path: PathBuf,
    },
    /// The directory to be replaced holds one of the command's inputs.
    #[error(
        "`{}` holds `{}`, an input of this command; refusing to replace it",
        crate::text::shown(path),
        crate::text::shown(input)
    )]
    HoldsInput {
        /// The destination.
        path: PathBuf,
        /// The input.
        input: PathBuf,
    },
    /// Writing failed; nothing was changed.
    #[error("cannot write `{}`: {source}", crate::text::shown(path))]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// A directory to create with its files.
#[derive(Debug)]
pub struct Tree {
    dest: PathBuf,
    files: Vec<(PathBuf, Vec<u8>)>,
    inputs: Vec<PathBuf>,
}

fn write_err(path: &Path) -> impl FnOnce(io::Error) -> TreeError + '_ {
    move |source| TreeError::Write {
        path: path.to_path_buf(),
        source,
    }
}

impl Tree {
    /// A directory to be created at `dest`.
    pub fn new(dest: impl Into<PathBuf>) -> Self {
        Self {
            dest: dest.into(),
            files: Vec::new(),
            inputs: Vec::new(),
        }
    }

    /// Declares an input of the command: a directory holding it is never replaced.
    pub fn input(&mut self, path: &Path) -> &mut Self {
        self.inputs.push(path.to_path_buf());
        self
    }

    /// Adds a file at `relative` (directories are created as needed).
    ///
    /// # Errors
    /// [`TreeError::Escapes`] for an absolute path or one with `..`.
    pub fn file(
        &mut self,
        relative: impl Into<PathBuf>,
        bytes: impl Into<Vec<u8>>,
    ) -> Result<&mut Self, TreeError> {
        let relative = relative.into();
        if !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(TreeError::Escapes { path: relative });
        }
        self.files.push((relative, bytes.into()));
        Ok(self)
    }

    /// Writes the directory. An existing destination is refused with `refuse`'s hint (how to
    /// replace it anyway) when it is `Some`; with `None` an existing directory is replaced
    /// whole.
    ///
    /// # Errors
    /// [`TreeError`]; the destination is then as it was.
    pub fn commit(self, refuse: Option<&'static str>) -> Result<PathBuf, TreeError> {
        let dest = &self.dest;
        let parent = match dest.parent() {
            Some(p) if p.as_os_str().is_empty() => Path::new("."),
            Some(p) => p,
            None => return Err(TreeError::NotDirectory { path: dest.clone() }),
        };
        if !parent.is_dir() {
            return Err(TreeError::NoParent {
                path: parent.to_path_buf(),
            });
        }
        let existing = match fs::symlink_metadata(dest) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(write_err(dest)(e)),
        };
        if let Some(meta) = &existing {
            if let Some(hint) = refuse {
                return Err(TreeError::Exists {
                    path: dest.clone(),
                    hint,
                });
            }
            if !meta.is_dir() {
                return Err(TreeError::NotDirectory { path: dest.clone() });
            }
            let held = fs::canonicalize(dest).map_err(write_err(dest))?;
            for input in &self.inputs {
                if fs::canonicalize(input).is_ok_and(|i| i.starts_with(&held)) {
                    return Err(TreeError::HoldsInput {
                        path: dest.clone(),
                        input: input.clone(),
                    });
                }
            }
        }
        let staged = tempfile::Builder::new()
            .prefix(".pcw-new-")
            .tempdir_in(parent)
            .map_err(write_err(parent))?;
        for (relative, bytes) in &self.files {
            let path = staged.path().join(relative);
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir).map_err(write_err(&dest.join(relative)))?;
            }
            fs::write(&path, bytes).map_err(write_err(&dest.join(relative)))?;
        }
        let staged = staged.keep();
        let put = |from: &Path, to: &Path| fs::rename(from, to).map_err(write_err(to));
        if existing.is_none() {
            if let Err(e) = put(&staged, dest) {
                let _ = fs::remove_dir_all(&staged);
                return Err(e);
            }
            return Ok(dest.clone());
        }
        let aside = tempfile::Builder::new()
            .prefix(".pcw-old-")
            .tempdir_in(parent)
            .map_err(write_err(parent))?
            .keep();
        // The empty directory only reserved the name.
        let moved = fs::remove_dir(&aside)
            .map_err(write_err(&aside))
            .and_then(|()| put(dest, &aside));
        if let Err(e) = moved {
            let _ = fs::remove_dir_all(&staged);
            return Err(e);
        }
        if let Err(e) = put(&staged, dest) {
            let _ = fs::rename(&aside, dest);
            let _ = fs::remove_dir_all(&staged);
            return Err(e);
        }
        fs::remove_dir_all(&aside).map_err(write_err(&aside))?;
        Ok(dest.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dest: &Path) -> Tree {
        let mut t = Tree::new(dest);
        t.file("a.txt", "a").unwrap();
        t.file("src/b.rs", "b").unwrap();
        t
    }

    #[test]
    fn writes_a_new_directory_and_refuses_an_existing_one() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("new");
        tree(&dest).commit(Some("add `--force`")).unwrap();
        assert_eq!(fs::read_to_string(dest.join("src/b.rs")).unwrap(), "b");
        let e = tree(&dest).commit(Some("add `--force`")).unwrap_err();
        assert!(
            e.to_string().ends_with("already exists; add `--force`"),
            "{e}"
        );
        // Nothing staged is left beside it.
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn replaces_a_directory_whole_when_told() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("new");
        fs::create_dir(&dest).unwrap();
        fs::write(dest.join("old.txt"), "old").unwrap();
        tree(&dest).commit(None).unwrap();
        assert!(!dest.join("old.txt").exists());
        assert!(dest.join("a.txt").exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn refusals_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(matches!(
            tree(&file).commit(None),
            Err(TreeError::NotDirectory { .. })
        ));
        assert!(matches!(
            tree(&dir.path().join("no/such/dir")).commit(None),
            Err(TreeError::NoParent { .. })
        ));
        assert!(matches!(
            Tree::new(dir.path().join("x")).file("../up", "u"),
            Err(TreeError::Escapes { .. })
        ));
        let dest = dir.path().join("held");
        fs::create_dir(&dest).unwrap();
        fs::write(dest.join("input.man"), "m").unwrap();
        let mut t = tree(&dest);
        t.input(&dest.join("input.man"));
        assert!(matches!(t.commit(None), Err(TreeError::HoldsInput { .. })));
        assert_eq!(fs::read_to_string(dest.join("input.man")).unwrap(), "m");
        assert_eq!(fs::read_to_string(&file).unwrap(), "x");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("new");
        let mut t = tree(&dest);
        // A file and a directory of the same name cannot both be written.
        t.file("a.txt/c", "c").unwrap();
        assert!(matches!(
            t.commit(Some("add `--force`")),
            Err(TreeError::Write { .. })
        ));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
