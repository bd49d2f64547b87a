// SPDX-License-Identifier: MIT OR Apache-2.0
//! Names made unique the way every generator makes them: a name already given out gets a
//! suffix (`_`, `Values`, …) appended until it is new.

use std::collections::{HashMap, HashSet};

/// The names given out so far in one scope, and the suffix that tells clashing ones apart.
///
/// [`UniqueNames::claim`] gives what `while !used.insert(name.clone()) { name.push_str(suffix) }`
/// gives, but it remembers how many suffixes each base name needed, so `k` names with the same
/// base cost time in proportion to the names produced (about `k²/2` suffixes in all), not `k`
/// tries each.
pub(crate) struct UniqueNames {
    suffix: &'static str,
    used: HashSet<String>,
    /// Per base name, how many suffixes its next candidate has: every candidate with fewer is
    /// given out already (names are never taken back).
    next: HashMap<String, usize>,
}

impl UniqueNames {
    /// An empty scope whose clashing names get `suffix` appended.
    pub(crate) fn new(suffix: &'static str) -> Self {
        Self::with_reserved(suffix, [])
    }

    /// A scope in which the `reserved` names are already taken.
    pub(crate) fn with_reserved<'a>(
        suffix: &'static str,
        reserved: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        Self {
            suffix,
            used: reserved.into_iter().map(str::to_owned).collect(),
            next: HashMap::new(),
        }
    }

    /// `base`, or `base` followed by the fewest copies of the suffix that make a name not
    /// given out before; the name is given out.
    pub(crate) fn claim(&mut self, base: String) -> String {
        let skip = self.next.get(&base).copied().unwrap_or(0);
        let mut name = base.clone();
        for _ in 0..skip {
            name.push_str(self.suffix);
        }
        let mut count = skip;
        while !self.used.insert(name.clone()) {
            name.push_str(self.suffix);
            count += 1;
        }
        self.next.insert(base, count + 1);
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loop the generators had, which [`UniqueNames::claim`] must agree with.
    fn naive(used: &mut HashSet<String>, mut name: String, suffix: &str) -> String {
        while !used.insert(name.clone()) {
            name.push_str(suffix);
        }
        name
    }

    #[test]
    fn agrees_with_appending_until_new() {
        // Bases that clash with each other's suffixed forms, and reserved names among them.
        let reserved = ["a_", "b", "a___"];
        let bases = [
            "a", "a", "a_", "b", "a", "a__", "b_", "b", "a", "a_", "c", "a", "b",
        ];
        let mut fast = UniqueNames::with_reserved("_", reserved);
        let mut used: HashSet<String> = reserved.iter().map(|s| (*s).to_owned()).collect();
        for base in bases {
            assert_eq!(
                fast.claim(base.to_owned()),
                naive(&mut used, base.to_owned(), "_"),
                "{base}"
            );
        }
    }

    #[test]
    fn many_clashes_get_ever_longer_suffixes() {
        let mut names = UniqueNames::new("Values");
        assert_eq!(names.claim("Values".into()), "Values");
        assert_eq!(names.claim("Values".into()), "ValuesValues");
        assert_eq!(names.claim("Values".into()), "ValuesValuesValues");
        assert_eq!(
            names.claim("ValuesValues".into()),
            "ValuesValuesValuesValues"
        );
    }
}
