// SPDX-License-Identifier: MIT OR Apache-2.0
//! Counter paths as PDH and typeperf accept them (`docs/pcw-semantics.md`, "Counter paths"):
//! parsing, printing, and matching one part against a name with wildcards.
//!
//! `\\computer\object(parent/instance#index)\counter`, every part but object and counter
//! optional (`PdhExpandWildCardPath`'s list of forms). `*` may stand in the parent, instance,
//! index and counter, alone or inside a name (`pro*`, from Vista on); the computer and object
//! may not contain it. [`CounterPath::parse`] splits and checks a path, [`PathError`] says
//! what is wrong with a malformed one, [`wildcard_match`] matches one part against a name.
//!
//! Splitting rules: the counter is everything after the last `\` (counter names contain `/` and
//! `%` but no `\`); the instance is everything between the first `(` after the object and the
//! final `)`, so instance names may contain `\`, `(`, `)` and `#` (`\_TZ.THRM`,
//! `Intel(R) Ethernet`); the parent ends at the first `/`; `#index` is split off the end only
//! when it is digits or `*`.

use core::fmt;

/// `PDH_MAX_COUNTER_PATH`: the longest counter path PDH accepts, in characters.
pub const MAX_COUNTER_PATH: usize = 2048;
/// `PDH_MAX_INSTANCE_NAME`: the longest instance name, in characters (windows-sys's constant).
pub const MAX_INSTANCE_NAME: usize = 1024;

/// The instance part of a counter path: `parent/name#index`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstanceSpec {
    /// The parent instance (before the first `/`), if any; may contain `*`.
    pub parent: Option<String>,
    /// The instance name; may contain `*`.
    pub name: String,
    /// The `#index` suffix, if any.
    pub index: Option<InstanceIndex>,
}

/// The `#index` of an instance: which of several same-named instances (the first is `#0` or
/// no index at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InstanceIndex {
    /// `#n`.
    Number(u32),
    /// `#*`: every index.
    Any,
}

/// A parsed counter path, `\\computer\object(parent/instance#index)\counter`.
///
/// [`fmt::Display`] writes it back in the same form, so a path with every wildcard replaced by
/// a name is the full path for a typeperf header.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CounterPath {
    /// The computer, without the leading `\\`; `None` for the local computer.
    pub machine: Option<String>,
    /// The object (counterset) name.
    pub object: String,
    /// The instance, for multi-instance objects.
    pub instance: Option<InstanceSpec>,
    /// The counter name; may contain `*`.
    pub counter: String,
}

/// Why a counter path is malformed (`PDH_CSTATUS_BAD_COUNTERNAME` in PDH).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path is empty.
    #[error("empty counter path")]
    Empty,
    /// The path is longer than `PDH_MAX_COUNTER_PATH` characters.
    #[error("counter path is {0} characters long; the limit is {MAX_COUNTER_PATH}")]
    TooLong(usize),
    /// The path does not start with `\`.
    #[error("counter path must start with `\\` (`\\object\\counter`)")]
    MissingLeadingBackslash,
    /// `\\` is not followed by a computer name and `\`.
    #[error("`\\\\` must be followed by a computer name and `\\`")]
    EmptyMachine,
    /// There is no `\counter` after the object.
    #[error("missing `\\counter` after the object")]
    MissingCounter,
    /// The object name is empty.
    #[error("empty object name")]
    EmptyObject,
    /// The counter name is empty.
    #[error("empty counter name")]
    EmptyCounter,
    /// An instance was opened with `(` but the object part does not end with `)`.
    #[error("instance opened with `(` is not closed by `)` before `\\counter`")]
    UnclosedInstance,
    /// A `)` without a matching `(`.
    #[error("`)` without `(` in `{}`", pcw_gen::text::visible(.0))]
    UnexpectedCloseParen(String),
    /// `()`, or `parent/` with nothing after the slash.
    #[error("empty instance name")]
    EmptyInstance,
    /// `/name` with nothing before the slash.
    #[error("empty parent instance name")]
    EmptyParent,
    /// The instance name is longer than `PDH_MAX_INSTANCE_NAME` characters.
    #[error("instance name is {0} characters long; the limit is {MAX_INSTANCE_NAME}")]
    InstanceTooLong(usize),
    /// `#` followed by digits that do not fit in 32 bits. (`#` followed by anything but digits
    /// or `*` is part of the instance name.)
    #[error("bad instance index `#{0}`: expected a number below 2^32 or `*`")]
    BadIndex(String),
    /// A `*` in the computer or object name, where PDH allows none.
    #[error("`*` is not allowed in the {0} name")]
    WildcardNotAllowed(&'static str),
}

impl CounterPath {
    /// Parses a counter path. See the module documentation for the accepted forms.
    ///
    /// # Errors
    ///
    /// A [`PathError`] naming the first problem found.
    pub fn parse(path: &str) -> Result<Self, PathError> {
        if path.is_empty() {
            return Err(PathError::Empty);
        }
        let length = path.chars().count();
        if length > MAX_COUNTER_PATH {
            return Err(PathError::TooLong(length));
        }
        let rest = path
            .strip_prefix('\\')
            .ok_or(PathError::MissingLeadingBackslash)?;
        let (machine, rest) = match rest.strip_prefix('\\') {
            Some(after) => {
                let (machine, rest) = after.split_once('\\').ok_or(PathError::EmptyMachine)?;
                if machine.is_empty() {
                    return Err(PathError::EmptyMachine);
                }
                if machine.contains('*') {
                    return Err(PathError::WildcardNotAllowed("computer"));
                }
                (Some(machine.to_owned()), rest)
            }
            None => (None, rest),
        };
        // `rest` is `object(instance)\counter` or `object\counter`.
        let (object_part, counter) = rest.rsplit_once('\\').ok_or(PathError::MissingCounter)?;
        if counter.is_empty() {
            return Err(PathError::EmptyCounter);
        }
        let (object, instance) = match object_part.split_once('(') {
            Some((object, inside)) => {
                let inside = inside
                    .strip_suffix(')')
                    .ok_or(PathError::UnclosedInstance)?;
                (object, Some(parse_instance(inside)?))
            }
            None => (object_part, None),
        };
        if object.contains(')') {
            return Err(PathError::UnexpectedCloseParen(object.to_owned()));
        }
        if object.is_empty() {
            return Err(PathError::EmptyObject);
        }
        if object.contains('*') {
            return Err(PathError::WildcardNotAllowed("object"));
        }
        Ok(Self {
            machine,
            object: object.to_owned(),
            instance,
            counter: counter.to_owned(),
        })
    }

    /// Whether any part (parent, instance, index or counter) is or contains a wildcard.
    pub fn has_wildcards(&self) -> bool {
        self.counter.contains('*')
            || self.instance.as_ref().is_some_and(|i| {
                i.name.contains('*')
                    || i.parent.as_ref().is_some_and(|p| p.contains('*'))
                    || i.index == Some(InstanceIndex::Any)
            })
    }

    /// The same path with `machine` as its computer when it names none (typeperf's header
    /// always shows the computer).
    #[must_use]
    pub fn with_default_machine(mut self, machine: &str) -> Self {
        if self.machine.is_none() {
            self.machine = Some(machine.to_owned());
        }
        self
    }
}

impl CounterPath {
    /// The text between the parentheses, as the path shows it (empty without an instance).
    pub fn instance_text(&self) -> String {
        let shown = self.to_string();
        match (shown.find('('), shown.rfind(')')) {
            (Some(open), Some(close)) if open < close => shown[open + 1..close].to_owned(),
            _ => String::new(),
        }
    }

    /// A path as `typeperf -q`/`-qx` and `Get-Counter -ListSet` print it, without a computer:
    /// `\Object\Counter`, or `\Object(instance)\Counter`.
    pub fn listed(object: &str, instance: Option<&str>, counter: &str) -> String {
        Self {
            machine: None,
            object: object.to_owned(),
            instance: instance.map(|name| InstanceSpec {
                parent: None,
                name: name.to_owned(),
                index: None,
            }),
            counter: counter.to_owned(),
        }
        .to_string()
    }
}

impl fmt::Display for CounterPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(machine) = &self.machine {
            write!(f, "\\\\{machine}")?;
        }
        write!(f, "\\{}", self.object)?;
        if let Some(instance) = &self.instance {
            f.write_str("(")?;
            if let Some(parent) = &instance.parent {
                write!(f, "{parent}/")?;
            }
            f.write_str(&instance.name)?;
            match instance.index {
                Some(InstanceIndex::Number(n)) => write!(f, "#{n}")?,
                Some(InstanceIndex::Any) => f.write_str("#*")?,
                None => {}
            }
            f.write_str(")")?;
        }
        write!(f, "\\{}", self.counter)
    }
}

/// Parses the text between the parentheses: `parent/name#index`.
fn parse_instance(inside: &str) -> Result<InstanceSpec, PathError> {
    let (parent, rest) = match inside.split_once('/') {
        Some((parent, rest)) => {
            if parent.is_empty() {
                return Err(PathError::EmptyParent);
            }
            (Some(parent.to_owned()), rest)
        }
        None => (None, inside),
    };
    let (name, index) = match rest.rsplit_once('#') {
        Some((name, "*")) => (name, Some(InstanceIndex::Any)),
        Some((name, suffix))
            if !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit()) =>
        {
            let n = suffix
                .parse::<u32>()
                .map_err(|_| PathError::BadIndex(suffix.to_owned()))?;
            (name, Some(InstanceIndex::Number(n)))
        }
        // `#` followed by anything else, or by nothing, is part of the name (`C#`, `a#b`).
        _ => (rest, None),
    };
    if name.is_empty() {
        return Err(PathError::EmptyInstance);
    }
    let length = name.chars().count();
    if length > MAX_INSTANCE_NAME {
        return Err(PathError::InstanceTooLong(length));
    }
    Ok(InstanceSpec {
        parent,
        name: name.to_owned(),
        index,
    })
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters (PDH's only
/// wildcard), case-insensitively as PDH compares names.
///
/// Runs in O(|pattern| × |name|) at worst, without recursion.
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().flat_map(char::to_lowercase).collect();
    let n: Vec<char> = name.chars().flat_map(char::to_lowercase).collect();
    // Classic greedy match with one backtrack point: the last star seen.
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(c) if Some(c) == n.get(ni) => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((star_pi, star_ni)) => {
                    pi = star_pi + 1;
                    ni = star_ni + 1;
                    star = Some((star_pi, star_ni + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|tail| tail.iter().all(|&c| c == '*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(parent: Option<&str>, name: &str, index: Option<InstanceIndex>) -> InstanceSpec {
        InstanceSpec {
            parent: parent.map(str::to_owned),
            name: name.to_owned(),
            index,
        }
    }

    #[test]
    fn parse_valid_paths() {
        use InstanceIndex::{Any, Number};
        let p = |m: Option<&str>, o: &str, i: Option<InstanceSpec>, c: &str| CounterPath {
            machine: m.map(str::to_owned),
            object: o.to_owned(),
            instance: i,
            counter: c.to_owned(),
        };
        let cases = [
            (
                r"\System\System Up Time",
                p(None, "System", None, "System Up Time"),
            ),
            (
                r"\\HOST\Memory\Available MBytes",
                p(Some("HOST"), "Memory", None, "Available MBytes"),
            ),
            (
                r"\Geometric Waves(*)\*",
                p(None, "Geometric Waves", Some(inst(None, "*", None)), "*"),
            ),
            (
                r"\Geometric Waves(Small Wave)\Triangle",
                p(
                    None,
                    "Geometric Waves",
                    Some(inst(None, "Small Wave", None)),
                    "Triangle",
                ),
            ),
            (
                r"\\srv\Thread(svchost/12#3)\% Processor Time",
                p(
                    Some("srv"),
                    "Thread",
                    Some(inst(Some("svchost"), "12", Some(Number(3)))),
                    "% Processor Time",
                ),
            ),
            (
                r"\Process(svchost#*)\IO Data Operations/sec",
                p(
                    None,
                    "Process",
                    Some(inst(None, "svchost", Some(Any))),
                    "IO Data Operations/sec",
                ),
            ),
            (
                r"\Thread(*/*#*)\Context Switches/sec",
                p(
                    None,
                    "Thread",
                    Some(inst(Some("*"), "*", Some(Any))),
                    "Context Switches/sec",
                ),
            ),
            // Instance names may contain `\`, parentheses and a `#` that is not an index.
            (
                r"\Thermal Zone Information(\_TZ.THRM)\Temperature",
                p(
                    None,
                    "Thermal Zone Information",
                    Some(inst(None, r"\_TZ.THRM", None)),
                    "Temperature",
                ),
            ),
            (
                r"\Network Interface(Intel(R) Ethernet)\Bytes Total/sec",
                p(
                    None,
                    "Network Interface",
                    Some(inst(None, "Intel(R) Ethernet", None)),
                    "Bytes Total/sec",
                ),
            ),
            (
                r"\Lang(C#)\Users",
                p(None, "Lang", Some(inst(None, "C#", None)), "Users"),
            ),
            (
                r"\Process(pro*)\Working Set",
                p(
                    None,
                    "Process",
                    Some(inst(None, "pro*", None)),
                    "Working Set",
                ),
            ),
            (
                r"\Provider Statistics\Collections/sec",
                p(None, "Provider Statistics", None, "Collections/sec"),
            ),
        ];
        for (text, expected) in cases {
            let parsed = CounterPath::parse(text).unwrap();
            assert_eq!(parsed, expected, "{text}");
            // Display gives the path back unchanged.
            assert_eq!(parsed.to_string(), text);
        }
    }

    #[test]
    fn parse_errors() {
        let cases: [(&str, PathError); 18] = [
            ("", PathError::Empty),
            ("System\\Up", PathError::MissingLeadingBackslash),
            (r"\\\System\Up", PathError::EmptyMachine),
            (r"\\HOST", PathError::EmptyMachine),
            (r"\System", PathError::MissingCounter),
            (r"\\HOST\System", PathError::MissingCounter),
            (r"\System\", PathError::EmptyCounter),
            (r"\\HOST\\Counter", PathError::EmptyObject),
            (r"\(x)\Counter", PathError::EmptyObject),
            (r"\Obj(x\Counter", PathError::UnclosedInstance),
            (r"\Obj(x)y\Counter", PathError::UnclosedInstance),
            (
                r"\Obj)\Counter",
                PathError::UnexpectedCloseParen("Obj)".to_owned()),
            ),
            (r"\Obj()\Counter", PathError::EmptyInstance),
            (r"\Obj(p/)\Counter", PathError::EmptyInstance),
            (r"\Obj(/i)\Counter", PathError::EmptyParent),
            (r"\Obj(p/#2)\Counter", PathError::EmptyInstance),
            (
                r"\Obj(i#99999999999)\Counter",
                PathError::BadIndex("99999999999".to_owned()),
            ),
            (r"\Ob*\Counter", PathError::WildcardNotAllowed("object")),
        ];
        for (text, expected) in cases {
            assert_eq!(CounterPath::parse(text), Err(expected), "{text:?}");
        }
        assert_eq!(
            CounterPath::parse(r"\\*\Obj\C"),
            Err(PathError::WildcardNotAllowed("computer"))
        );
        let long = format!(r"\O\{}", "c".repeat(MAX_COUNTER_PATH));
        assert_eq!(
            CounterPath::parse(&long),
            Err(PathError::TooLong(MAX_COUNTER_PATH + 3))
        );
        let long_instance = format!(r"\O({})\C", "i".repeat(MAX_INSTANCE_NAME + 1));
        assert_eq!(
            CounterPath::parse(&long_instance),
            Err(PathError::InstanceTooLong(MAX_INSTANCE_NAME + 1))
        );
        assert_eq!(
            PathError::BadIndex("x".to_owned()).to_string(),
            "bad instance index `#x`: expected a number below 2^32 or `*`"
        );
        assert_eq!(
            PathError::MissingLeadingBackslash.to_string(),
            r"counter path must start with `\` (`\object\counter`)"
        );
    }

    #[test]
    fn wildcards_and_machine() {
        let parse = |s| CounterPath::parse(s).unwrap();
        assert!(parse(r"\O(*)\C").has_wildcards());
        assert!(parse(r"\O(i)\*").has_wildcards());
        assert!(parse(r"\O(*/i)\C").has_wildcards());
        assert!(parse(r"\O(i#*)\C").has_wildcards());
        assert!(parse(r"\O(pro*)\C").has_wildcards());
        assert!(!parse(r"\O(i#2)\C").has_wildcards());
        assert!(!parse(r"\O\C").has_wildcards());
        assert_eq!(
            parse(r"\O(i)\C").with_default_machine("HOST").to_string(),
            r"\\HOST\O(i)\C"
        );
        assert_eq!(
            parse(r"\\A\O\C").with_default_machine("HOST").to_string(),
            r"\\A\O\C"
        );
    }

    #[test]
    fn wildcard_matching() {
        let yes = [
            ("*", ""),
            ("*", "Small Wave"),
            ("*Wave", "Large Wave"),
            ("pro*", "Processor"),
            ("PRO*", "processor"),
            ("s*l*e", "Small Wave"),
            ("Large Wave", "LARGE WAVE"),
            ("a**b", "ab"),
            ("*a*a*a*a*a*a*a*a*b", &format!("{}b", "a".repeat(1000))),
        ];
        for (pattern, name) in yes {
            assert!(wildcard_match(pattern, name), "{pattern} ~ {name}");
        }
        let no = [
            ("", "x"),
            ("pro*", "xprocessor"),
            ("*Wave", "Waves"),
            ("a*b", "a"),
            ("?mall", "Small"),
        ];
        for (pattern, name) in no {
            assert!(!wildcard_match(pattern, name), "{pattern} !~ {name}");
        }
        // The adversarial pattern against a 1000-character name without a `b`: must answer
        // quickly (linear number of restarts per star).
        let name = "a".repeat(1000);
        assert!(!wildcard_match("*a*a*a*a*a*a*a*a*b", &name));
    }
}
