// SPDX-License-Identifier: MIT OR Apache-2.0
//! A new directory of files, all or nothing (what `pcw new` writes).
//!
//! [`Tree`] collects the files (paths relative to the directory, and their bytes), then
//! [`Tree::commit`]:
//!
//! 1. refuses, before writing anything, a destination that exists unless told to replace it
//!    (and then only a directory, never a file or a symbolic link), a destination whose parent
//!    directory does not exist or that names no entry (`..`, a root), a file path that leaves
//!    the directory (absolute, or with `..`), and a replaced directory that holds one of the
//!    command's inputs or the current directory;
//! 2. writes every file into a new temporary directory beside the destination (its parent as
//!    the file system resolves it, so that a path through the destination itself still names
//!    it once the old one is moved aside);
//! 3. only when all were written, renames the temporary directory to the destination — after
//!    moving a directory it replaces aside, which is removed once the new one is in place (and
//!    put back should the rename fail; if even that fails, the error says where it is).
//!
//! A failure in steps 1–2 (a full disk, a missing permission) leaves the destination as it was
//! and no temporary directory behind; so does a signal, once the command has the temporaries
//! removed ([`crate::staged`]): the writes and the renames hold the staged list's lock.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use thiserror::Error;

use crate::staged::{self, Listed};

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
    /// The destination's last component is not a name (`.`, `..`, a root).
    #[error(
        "`{}` does not end in the new directory's name (as `../NAME` does)",
        crate::text::shown(path)
    )]
    Unnamed {
        /// The destination.
        path: PathBuf,
    },
    /// The destination is a symbolic link (what it points to is never replaced through it).
    #[error(
        "`{}` is a symbolic link; name the directory itself to replace it",
        crate::text::shown(path)
    )]
    Link {
        /// The destination.
        path: PathBuf,
    },
    /// The directory to be replaced is the current directory or holds it.
    #[error(
        "`{}` holds the current directory; refusing to replace it (run the command from \
         elsewhere)",
        crate::text::shown(path)
    )]
    HoldsCurrent {
        /// The destination.
        path: PathBuf,
    },
    /// Replacing failed after the old directory was moved aside, and it could not be moved
    /// back: nothing is lost, but it is under another name.
    #[error(
        "cannot write `{}`: {source}; its previous contents could not be put back and are in \
         `{}`",
        crate::text::shown(path),
        crate::text::shown(aside)
    )]
    Stranded {
        /// The destination.
        path: PathBuf,
        /// Where the previous directory is.
        aside: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The destination was replaced, but the old directory, moved aside, could not all be
    /// removed.
    #[error(
        "`{}` was replaced, but its previous contents could not all be removed from `{}`: \
         {source}",
        crate::text::shown(path),
        crate::text::shown(aside)
    )]
    Leftover {
        /// The destination.
        path: PathBuf,
        /// Where what is left of the previous directory is.
        aside: PathBuf,
        /// The cause.
        source: io::Error,
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

/// What [`Tree::commit`]'s checks found.
#[derive(Debug)]
struct Checked {
    /// The destination's parent as given (named in errors).
    given_parent: PathBuf,
    /// The parent as the file system resolves it.
    parent: PathBuf,
    /// The destination in the resolved parent.
    dest: PathBuf,
    /// A directory is there, to be replaced.
    replaces: bool,
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

    /// The checks of [`Tree::commit`] before anything is written: the destination's parent as
    /// given and as the file system resolves it, and what exists at the destination (a
    /// directory that may be replaced).
    fn checked(&self, refuse: Option<&'static str>) -> Result<Checked, TreeError> {
        let shown = &self.dest;
        let Some(name) = shown.file_name() else {
            return Err(TreeError::Unnamed {
                path: shown.clone(),
            });
        };
        let given_parent = match shown.parent() {
            Some(p) if p.as_os_str().is_empty() => Path::new("."),
            Some(p) => p,
            None => {
                return Err(TreeError::Unnamed {
                    path: shown.clone(),
                });
            }
        };
        if !given_parent.is_dir() {
            let path = given_parent.to_path_buf();
            return Err(if given_parent.exists() {
                TreeError::NotDirectory { path }
            } else {
                TreeError::NoParent { path }
            });
        }
        // The parent as the file system resolves it: a path through the destination itself
        // (`d/../d`) would stop resolving once the destination is moved aside.
        let parent = &fs::canonicalize(given_parent).map_err(write_err(given_parent))?;
        let dest = &parent.join(name);
        let existing = match fs::symlink_metadata(dest) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(write_err(dest)(e)),
        };
        if let Some(meta) = &existing {
            if let Some(hint) = refuse {
                return Err(TreeError::Exists {
                    path: shown.clone(),
                    hint,
                });
            }
            if meta.is_symlink() {
                return Err(TreeError::Link {
                    path: shown.clone(),
                });
            }
            if !meta.is_dir() {
                return Err(TreeError::NotDirectory {
                    path: shown.clone(),
                });
            }
            // Compared as the file system resolves it (on a case-insensitive one, `MyProj` is
            // `myproj`, which the inputs' resolved paths spell).
            let held = fs::canonicalize(dest).map_err(write_err(shown))?;
            for input in &self.inputs {
                if fs::canonicalize(input).is_ok_and(|i| i.starts_with(&held)) {
                    return Err(TreeError::HoldsInput {
                        path: shown.clone(),
                        input: input.clone(),
                    });
                }
            }
            if std::env::current_dir()
                .and_then(fs::canonicalize)
                .is_ok_and(|cwd| cwd.starts_with(&held))
            {
                return Err(TreeError::HoldsCurrent {
                    path: shown.clone(),
                });
            }
        }
        Ok(Checked {
            given_parent: given_parent.to_path_buf(),
            parent: parent.clone(),
            dest: dest.clone(),
            replaces: existing.is_some(),
        })
    }

    /// Writes the directory. An existing destination is refused with `refuse`'s hint (how to
    /// replace it anyway) when it is `Some`; with `None` an existing directory is replaced
    /// whole.
    ///
    /// # Errors
    /// [`TreeError`]; the destination is then as it was, but after [`TreeError::Leftover`]
    /// (replaced, what is left of the old one named) and [`TreeError::Stranded`] (the old one
    /// under another name, named).
    pub fn commit(self, refuse: Option<&'static str>) -> Result<PathBuf, TreeError> {
        let shown = &self.dest;
        let checked = self.checked(refuse)?;
        let (given_parent, parent, dest) = (
            checked.given_parent.as_path(),
            checked.parent.as_path(),
            checked.dest.as_path(),
        );
        // Created and written with the staged list locked (the files are in memory, so
        // briefly): an interrupt finds it whole and listed, or not made. A failure drops it,
        // unlisted, before the lock is released.
        let staged = Listed::create(
            || self.staged_in(parent, given_parent),
            tempfile::TempDir::path,
        )?;
        let root = staged.path().to_path_buf();
        // Taken out of the list only once renamed into place; after a failure it is dropped
        // (removed) when this function returns, outside the list's lock.
        let mut staged = Some(staged);
        let mut placed = |list: &mut Vec<PathBuf>| {
            if let Some(temp) = staged.take().and_then(|s| s.take_in(list)) {
                // In place: no longer a temporary, so not removed.
                let _ = temp.keep();
            }
        };
        if !checked.replaces {
            // Under the staged list's lock: an interrupt finds the directory in place or the
            // staged one still listed.
            let placed = staged::renaming(|list| {
                fs::rename(&root, dest)?;
                placed(list);
                Ok(())
            });
            return placed.map(|()| shown.clone()).map_err(write_err(shown));
        }
        // The name aside reserved, the old directory moved there and the new one put in its
        // place under one lock: an interrupt never finds one moved and not the other. Once
        // swapped, the old one is a temporary to remove.
        let aside = staged::renaming(|list| {
            // The empty directory only reserves the name.
            let aside = tempfile::Builder::new()
                .prefix(".pcw-old-")
                .tempdir_in(parent)
                .map_err(write_err(given_parent))?;
            fs::remove_dir(aside.path()).map_err(write_err(given_parent))?;
            let aside = aside.keep();
            fs::rename(dest, &aside).map_err(write_err(shown))?;
            if let Err(source) = fs::rename(&root, dest) {
                return match fs::rename(&aside, dest) {
                    Ok(()) => Err(write_err(shown)(source)),
                    Err(_) => Err(TreeError::Stranded {
                        path: shown.clone(),
                        aside,
                        source,
                    }),
                };
            }
            placed(list);
            staged::add_in(list, &aside);
            Ok(aside)
        })?;
        let removed = fs::remove_dir_all(&aside);
        staged::forget(&aside);
        removed.map_err(|source| TreeError::Leftover {
            path: shown.clone(),
            aside,
            source,
        })?;
        Ok(shown.clone())
    }

    /// A new temporary directory in `parent` holding the files (`given_parent` names it in an
    /// error); removed if a write fails.
    fn staged_in(
        &self,
        parent: &Path,
        given_parent: &Path,
    ) -> Result<tempfile::TempDir, TreeError> {
        let staged = tempfile::Builder::new()
            .prefix(".pcw-new-")
            .tempdir_in(parent)
            .map_err(write_err(given_parent))?;
        for (relative, bytes) in &self.files {
            let path = staged.path().join(relative);
            let written = path
                .parent()
                .map_or(Ok(()), fs::create_dir_all)
                .and_then(|()| fs::write(&path, bytes));
            written.map_err(write_err(&self.dest.join(relative)))?;
        }
        Ok(staged)
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
    fn a_destination_named_through_itself_is_replaced_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("d");
        fs::create_dir(&dest).unwrap();
        fs::write(dest.join("old.txt"), "old").unwrap();
        // `d/../d`: once `d` is moved aside, this path no longer resolves.
        let through = dest.join("..").join("d");
        assert_eq!(tree(&through).commit(None).unwrap(), through);
        assert_eq!(fs::read_to_string(dest.join("src/b.rs")).unwrap(), "b");
        assert!(!dest.join("old.txt").exists());
        // Nothing staged or set aside is left beside it.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_path_that_names_no_entry_a_file_as_parent_or_a_link_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, "x").unwrap();
        let inner = dir.path().join("inner");
        fs::create_dir(&inner).unwrap();
        for unnamed in [inner.join(".."), PathBuf::from("/")] {
            let e = tree(&unnamed).commit(None).unwrap_err();
            assert!(matches!(e, TreeError::Unnamed { .. }), "{unnamed:?}: {e}");
        }
        let e = tree(&file.join("x")).commit(None).unwrap_err();
        assert!(
            e.to_string().ends_with("exists and is not a directory"),
            "{e}"
        );
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&inner, &link).unwrap();
            fs::write(inner.join("kept.txt"), "k").unwrap();
            let e = tree(&link).commit(None).unwrap_err();
            assert!(matches!(e, TreeError::Link { .. }), "{e}");
            assert_eq!(fs::read_to_string(inner.join("kept.txt")).unwrap(), "k");
        }
        let left = if cfg!(unix) { 3 } else { 2 };
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), left);
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
