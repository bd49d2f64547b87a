// SPDX-License-Identifier: MIT OR Apache-2.0
//! The temporary files and directories outputs are staged in, known to the whole process, so
//! that a command stopped by a signal while they exist removes them before it exits
//! ([`discard`]) rather than leaving `.NAME.XXXX.tmp` files and `.pcw-new-XXXX` directories
//! beside the user's files.
//!
//! A temporary is listed while the list is locked, from before it is created until it is
//! renamed into place or removed; the renames of one commit happen under one lock. So
//! [`discard`], which takes the lock, sees every temporary that exists, and either finds a
//! commit's renames all done or starts none of them: an interrupted command leaves each
//! destination as it was or, when its renames had begun, as the commit made it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Every temporary that exists now.
static STAGED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The list, locked (a panic while it was held leaves it as usable as before).
fn list() -> MutexGuard<'static, Vec<PathBuf>> {
    STAGED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A temporary (a [`tempfile::NamedTempFile`] or [`tempfile::TempDir`]) listed from its
/// creation until it is taken to be renamed ([`Listed::take_in`]) or dropped, which removes it
/// and takes it off the list in one locked step.
#[derive(Debug)]
pub(crate) struct Listed<T> {
    item: Option<T>,
    path: PathBuf,
}

impl<T> Listed<T> {
    /// Creates a temporary with `create` and lists it (at the path `path` gives), both while
    /// the list is locked.
    pub(crate) fn create<E>(
        create: impl FnOnce() -> Result<T, E>,
        path: impl FnOnce(&T) -> &Path,
    ) -> Result<Self, E> {
        let mut staged = list();
        let item = create()?;
        let path = path(&item).to_path_buf();
        staged.push(path.clone());
        Ok(Self {
            item: Some(item),
            path,
        })
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary (`None` only once taken, which consumes `self`).
    pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
        self.item.as_mut()
    }

    /// Takes it off `staged` (the list, locked by [`renaming`]) to be renamed into place.
    pub(crate) fn take_in(mut self, staged: &mut Vec<PathBuf>) -> Option<T> {
        forget_in(staged, &self.path);
        self.item.take()
    }
}

impl<T> Drop for Listed<T> {
    fn drop(&mut self) {
        if let Some(item) = self.item.take() {
            let mut staged = list();
            drop(item);
            forget_in(&mut staged, &self.path);
        }
    }
}

/// Lists `path` (a directory moved aside, to be removed), with the list locked by
/// [`renaming`].
pub(crate) fn add_in(staged: &mut Vec<PathBuf>, path: &Path) {
    staged.push(path.to_path_buf());
}

/// Takes `path` off the list (it was removed).
pub(crate) fn forget(path: &Path) {
    forget_in(&mut list(), path);
}

/// Takes `path` off a locked list.
fn forget_in(staged: &mut Vec<PathBuf>, path: &Path) {
    if let Some(i) = staged.iter().rposition(|p| p == path) {
        staged.swap_remove(i);
    }
}

/// Runs `renames` with the list locked: no [`discard`] runs during them. Nothing in `renames`
/// may drop a [`Listed`] that still holds its temporary (that takes the lock again).
pub(crate) fn renaming<T>(renames: impl FnOnce(&mut Vec<PathBuf>) -> T) -> T {
    renames(&mut list())
}

/// The list, held locked by [`discard`]: while it lives, no temporary is created or renamed.
#[must_use = "the process should exit while it holds the list"]
#[derive(Debug)]
pub struct Held(
    #[expect(dead_code, reason = "held for its lock")] MutexGuard<'static, Vec<PathBuf>>,
);

/// Removes every temporary that exists (waiting for a commit's renames to finish first) and
/// returns with the list locked, so that nothing is staged or renamed afterwards. Only for a
/// process about to end on a signal: call it from a thread other than the one writing, and end
/// the process while holding [`Held`] — any output staged or committed after this call, in
/// any thread, waits for the lock for as long as the process lives.
pub fn discard() -> Held {
    let mut staged = list();
    remove_all(&mut staged);
    Held(staged)
}

/// Removes every temporary of `staged` and empties it.
fn remove_all(staged: &mut Vec<PathBuf>) {
    for path in staged.drain(..) {
        if fs::remove_file(&path).is_err() {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The process-wide list is shared with every other test of this crate running at the same
    // time, so these work on lists of their own; `discard` itself is exercised by pcw-cli's
    // interrupt tests, in processes of their own.
    #[test]
    fn removal_takes_listed_files_and_directories_and_forgotten_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".f.tmp");
        let tree = dir.path().join(".pcw-new-x");
        let kept = dir.path().join("kept");
        fs::write(&file, "x").unwrap();
        fs::write(&kept, "x").unwrap();
        fs::create_dir(&tree).unwrap();
        fs::write(tree.join("inner"), "x").unwrap();
        let mut staged = vec![file.clone(), kept.clone(), tree.clone()];
        forget_in(&mut staged, &kept);
        remove_all(&mut staged);
        assert!(!file.exists() && !tree.exists());
        assert!(kept.exists());
        assert!(staged.is_empty());
    }
}
