// SPDX-License-Identifier: MIT OR Apache-2.0
//! The manifest's enumerated values (`instances`, `detailLevel`, `aggregate`, …), each declared
//! once as a table: a row per value gives the variant and the manifest's spelling, and
//! everything else — the variant docs, `ALL`, `as_str`, `FromStr`, `Display` and serde's
//! (de)serialisation by that spelling — is generated from the rows, in the style of pcw-core's
//! `counter_types!`.

use std::fmt;
use std::str::FromStr;

use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::{Serialize, Serializer};

/// Declares a manifest enumeration from its table. A table is the enum's docs and attributes,
/// `pub enum NAME in "ATTRIBUTE"` (the manifest attribute, or element, whose values these are),
/// and one row per value: its docs, then `Variant = "spelling",` in the schema's order. The
/// variant docs start with the spelling; `ALL` lists the rows in order.
macro_rules! manifest_values {
    (
        $(#[$attr:meta])*
        pub enum $name:ident in $attribute:literal {
            $(#[doc = $first_doc:literal])*
            $first:ident = $first_spelling:literal,
            $(
                $(#[doc = $doc:literal])*
                $variant:ident = $spelling:literal,
            )*
        }
    ) => {
        $(#[$attr])*
        ///
        #[doc = concat!(
            "The value of the manifest's `", $attribute, "`: [`as_str`](Self::as_str) and ",
            "[`FromStr`] spell it as the manifest does (case-sensitive), and so do `Display` and ",
            "serde, which is how the `inspect` document writes it."
        )]
        ///
        /// # Examples
        ///
        #[doc = "```"]
        #[doc = concat!("use pcw_gen::model::", stringify!($name), ";")]
        #[doc = ""]
        #[doc = concat!("let value: ", stringify!($name), " = \"", $first_spelling, "\".parse()?;")]
        #[doc = concat!("assert_eq!(value, ", stringify!($name), "::", stringify!($first), ");")]
        #[doc = concat!("assert_eq!(value.to_string(), \"", $first_spelling, "\");")]
        #[doc = concat!("assert_eq!(serde_json::to_string(&value)?, r#\"\"", $first_spelling, "\"\"#);")]
        #[doc = concat!("assert!(\"?\".parse::<", stringify!($name), ">().is_err());")]
        #[doc = "# Ok::<(), Box<dyn std::error::Error>>(())"]
        #[doc = "```"]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            #[doc = concat!("`", $first_spelling, "`:")]
            $(#[doc = $first_doc])*
            $first,
            $(
                #[doc = concat!("`", $spelling, "`:")]
                $(#[doc = $doc])*
                $variant,
            )*
        }

        impl $name {
            /// Every value, in the schema's order.
            ///
            /// # Examples
            ///
            #[doc = "```"]
            #[doc = concat!("use pcw_gen::model::", stringify!($name), ";")]
            #[doc = ""]
            #[doc = concat!("assert_eq!(", stringify!($name), "::ALL[0], ", stringify!($name), "::", stringify!($first), ");")]
            #[doc = "```"]
            pub const ALL: [Self; [$first_spelling $(, $spelling)*].len()] =
                [Self::$first $(, Self::$variant)*];

            /// The manifest attribute (or element) these are the values of.
            ///
            /// # Examples
            ///
            #[doc = "```"]
            #[doc = concat!("use pcw_gen::model::", stringify!($name), ";")]
            #[doc = ""]
            #[doc = concat!("assert_eq!(", stringify!($name), "::ATTRIBUTE, \"", $attribute, "\");")]
            #[doc = "```"]
            pub const ATTRIBUTE: &'static str = $attribute;

            /// Every spelling, in the order of [`ALL`](Self::ALL).
            const SPELLINGS: &'static [&'static str] = &[$first_spelling $(, $spelling)*];

            /// The value as the manifest writes it.
            ///
            /// # Examples
            ///
            #[doc = "```"]
            #[doc = concat!("use pcw_gen::model::", stringify!($name), ";")]
            #[doc = ""]
            #[doc = concat!("assert_eq!(", stringify!($name), "::", stringify!($first), ".as_str(), \"", $first_spelling, "\");")]
            #[doc = "```"]
            pub const fn as_str(self) -> &'static str {
                match self {
                    Self::$first => $first_spelling,
                    $(Self::$variant => $spelling,)*
                }
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;

            /// The value the manifest spells `text` (exactly: the schema is case-sensitive).
            fn from_str(text: &str) -> Result<Self, UnknownValue> {
                Self::ALL
                    .into_iter()
                    .find(|v| v.as_str() == text)
                    .ok_or_else(|| UnknownValue {
                        attribute: $attribute,
                        value: text.to_owned(),
                        expected: Self::SPELLINGS,
                    })
            }
        }

        impl fmt::Display for $name {
            /// The manifest spelling.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
                text.parse()
                    .map_err(|_| D::Error::unknown_variant(&text, Self::SPELLINGS))
            }
        }
    };
}

/// A value that is not one of an enumeration's: what parsing any of this module's enums
/// refuses. Its `Display` is the diagnostic `pcw lint` gives, [`UnknownValue::hint`] the hint.
///
/// # Examples
///
/// ```
/// use pcw_gen::model::Instances;
///
/// let err = "Multiple".parse::<Instances>().unwrap_err();
/// assert_eq!(err.to_string(), "invalid `instances` value `Multiple`");
/// assert_eq!(err.hint(), "values are case-sensitive: write `multiple`");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownValue {
    attribute: &'static str,
    value: String,
    expected: &'static [&'static str],
}

impl UnknownValue {
    /// What to write instead: the value differing only in case, or the list of values.
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::model::Aggregate;
    ///
    /// let err = "median".parse::<Aggregate>().unwrap_err();
    /// assert_eq!(
    ///     err.hint(),
    ///     "expected one of `sum`, `avg`, `max`, `min`, `undefined`"
    /// );
    /// ```
    pub fn hint(&self) -> String {
        if let Some(e) = self
            .expected
            .iter()
            .find(|e| e.eq_ignore_ascii_case(&self.value))
        {
            format!("values are case-sensitive: write `{e}`")
        } else {
            let list: Vec<String> = self.expected.iter().map(|e| format!("`{e}`")).collect();
            format!("expected one of {}", list.join(", "))
        }
    }
}

impl fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid `{}` value `{}`", self.attribute, self.value)
    }
}

impl std::error::Error for UnknownValue {}

manifest_values! {
    /// `<counters schemaVersion>`: which version of the Performance Counters Schema the
    /// manifest follows. Non-exhaustive: a later schema is a new value.
    #[non_exhaustive]
    pub enum SchemaVersion in "schemaVersion" {
        /// names inline, `resourceBase` numbers the string resources.
        V1_1 = "1.1",
        /// `nameID`/`descriptionID` give the string resource ids.
        V2_0 = "2.0",
    }
}

manifest_values! {
    /// `<provider providerType>`: the kind of provider, and so which generator writes its
    /// code.
    pub enum ProviderType in "providerType" {
        /// a user-mode (Perflib V2) provider: a service over pcw-um (the schema's default).
        UserMode = "userMode",
        /// a kernel-mode PCW provider: a driver over pcw-rt.
        KernelMode = "kernelMode",
    }
}

manifest_values! {
    /// `<provider callback>`: whether a user-mode provider is told when consumers come and go.
    pub enum Callback in "callback" {
        /// the provider gets Perflib's notifications (`start_with` in the generated code).
        Custom = "custom",
        /// Perflib handles the requests itself (the schema's default).
        Default = "default",
    }
}

manifest_values! {
    /// `<counterSet instances>`: how many instances a counterset publishes, and whether PCW
    /// or Perflib aggregates them.
    pub enum Instances in "instances" {
        /// one unnamed instance (the schema's default).
        Single = "single",
        /// named instances.
        Multiple = "multiple",
        /// instances combined into one, which is what consumers see.
        GlobalAggregate = "globalAggregate",
        /// named instances plus `_Total`, their combination.
        MultipleAggregate = "multipleAggregate",
        /// as `globalAggregate`, keeping the combined value of instances that went away.
        GlobalAggregateHistory = "globalAggregateHistory",
    }
}

impl Instances {
    /// Whether the *provider* publishes more than one instance (everything but `single`):
    /// PCW and Perflib combine the instances of the aggregate kinds before a consumer sees
    /// them. For what consumers see, ask [`Instances::has_instances`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::model::Instances;
    ///
    /// assert!(Instances::GlobalAggregate.is_multi());
    /// assert!(!Instances::Single.is_multi());
    /// ```
    pub fn is_multi(self) -> bool {
        self != Self::Single
    }

    /// Whether *consumers* see named instances: V1 objects with instance definitions, counter
    /// paths that name an instance (`\Set(name)\Counter`). True for `multiple` and
    /// `multipleAggregate` (the provider's instances, plus `_Total` for the latter); false for
    /// `single` and the global aggregates, which a consumer sees as one unnamed instance. The
    /// one place that decides it: the perf DLL's tables, `pcw list`, `pcw export` and
    /// `pcw typeperf` all ask here.
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::model::Instances;
    ///
    /// assert!(Instances::MultipleAggregate.has_instances());
    /// assert!(!Instances::GlobalAggregate.has_instances());
    /// ```
    pub fn has_instances(self) -> bool {
        matches!(self, Self::Multiple | Self::MultipleAggregate)
    }

    /// Whether counters of this set are aggregated (the `aggregate` attribute applies).
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::model::Instances;
    ///
    /// assert!(Instances::GlobalAggregateHistory.is_aggregate());
    /// assert!(!Instances::Multiple.is_aggregate());
    /// ```
    pub fn is_aggregate(self) -> bool {
        matches!(
            self,
            Self::GlobalAggregate | Self::MultipleAggregate | Self::GlobalAggregateHistory
        )
    }
}

manifest_values! {
    /// `<counter detailLevel>`: who the counter is meant for. The schema names two of the
    /// `PERF_DETAIL_*` levels ([`DetailLevel::level`]).
    pub enum DetailLevel in "detailLevel" {
        /// every user (`PERF_DETAIL_NOVICE`, 100).
        Standard = "standard",
        /// advanced users (`PERF_DETAIL_ADVANCED`, 200).
        Advanced = "advanced",
    }
}

impl DetailLevel {
    /// The `PERF_DETAIL_*` level a V1 definition and a Perflib template carry.
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::model::DetailLevel;
    ///
    /// assert_eq!(DetailLevel::Standard.level().raw(), 100);
    /// assert_eq!(DetailLevel::Advanced.level().raw(), 200);
    /// ```
    pub const fn level(self) -> pcw_core::counter_type::DetailLevel {
        match self {
            Self::Standard => pcw_core::counter_type::DetailLevel::Novice,
            Self::Advanced => pcw_core::counter_type::DetailLevel::Advanced,
        }
    }
}

manifest_values! {
    /// `<counter aggregate>`: how the instances of an aggregating counterset combine into
    /// one.
    pub enum Aggregate in "aggregate" {
        /// the sum.
        Sum = "sum",
        /// the mean.
        Avg = "avg",
        /// the largest.
        Max = "max",
        /// the smallest.
        Min = "min",
        /// not combined.
        Undefined = "undefined",
    }
}

manifest_values! {
    /// `<counterAttribute name>`: how Perflib and consumers treat a counter.
    pub enum CounterAttribute in "counterAttribute" {
        /// Perflib reads the value through a pointer the provider gives (user mode).
        Reference = "reference",
        /// consumers do not list the counter.
        NoDisplay = "noDisplay",
        /// shown without thousands separators.
        NoDigitGrouping = "noDigitGrouping",
        /// shown in hexadecimal.
        DisplayAsHex = "displayAsHex",
        /// shown as a real number.
        DisplayAsReal = "displayAsReal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde's spelling (the `inspect` document) is the manifest's, for every value, and
    /// parsing gives every value back.
    #[test]
    fn every_value_round_trips_through_its_spelling() {
        fn check<T>(values: &[T])
        where
            T: Serialize
                + for<'de> Deserialize<'de>
                + fmt::Display
                + FromStr<Err = UnknownValue>
                + PartialEq
                + fmt::Debug,
        {
            for v in values {
                let json = serde_json::to_string(v).unwrap();
                assert_eq!(json, format!("\"{v}\""));
                assert_eq!(&serde_json::from_str::<T>(&json).unwrap(), v);
                assert_eq!(&v.to_string().parse::<T>().unwrap(), v);
            }
        }
        check(&SchemaVersion::ALL);
        check(&ProviderType::ALL);
        check(&Callback::ALL);
        check(&Instances::ALL);
        check(&DetailLevel::ALL);
        check(&Aggregate::ALL);
        check(&CounterAttribute::ALL);
        let err = serde_json::from_str::<Instances>("\"multi\"").unwrap_err();
        assert!(err.to_string().contains("`multi`"), "{err}");
        assert_eq!(
            "MULTIPLE".parse::<Instances>().unwrap_err().hint(),
            "values are case-sensitive: write `multiple`"
        );
    }

    #[test]
    fn only_multiple_kinds_show_consumers_instances() {
        let shown: Vec<_> = Instances::ALL
            .into_iter()
            .filter(|i| i.has_instances())
            .collect();
        assert_eq!(shown, [Instances::Multiple, Instances::MultipleAggregate]);
        assert!(
            Instances::GlobalAggregate.is_multi() && !Instances::GlobalAggregate.has_instances()
        );
    }
}
