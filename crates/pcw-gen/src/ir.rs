// SPDX-License-Identifier: MIT OR Apache-2.0
//! The validated, resolved manifest: provider, countersets, counters and
//! value structs with resolved counter types, sizes, struct indexes and byte offsets. Every
//! generator works from this model only; it is built by `validate` and never holds an
//! inconsistency the validator reports as an error.

use std::fmt;

use serde::{Deserialize, Serialize};

use pcw_core::counter_type::{CounterType, DetailLevel};

use crate::diag::Pos;

/// A GUID, as written in a manifest (`{8-4-4-4-12}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Guid(pub u128);

impl Guid {
    /// Parses `{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}` (hex digits of either case).
    pub fn parse_braced(s: &str) -> Option<Self> {
        let inner = s.strip_prefix('{')?.strip_suffix('}')?;
        let groups: Vec<&str> = inner.split('-').collect();
        let lens = [8, 4, 4, 4, 12];
        if groups.len() != lens.len() {
            return None;
        }
        let mut value: u128 = 0;
        for (g, len) in groups.iter().zip(lens) {
            if g.len() != len || !g.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            value = (value << (4 * len)) | u128::from_str_radix(g, 16).ok()?;
        }
        Some(Self(value))
    }

    /// `Data1` of the Windows `GUID` structure.
    pub fn data1(self) -> u32 {
        u32::try_from(self.0 >> 96).unwrap_or(0)
    }

    /// `Data2`.
    pub fn data2(self) -> u16 {
        u16::try_from((self.0 >> 80) & 0xFFFF).unwrap_or(0)
    }

    /// `Data3`.
    pub fn data3(self) -> u16 {
        u16::try_from((self.0 >> 64) & 0xFFFF).unwrap_or(0)
    }

    /// `Data4`.
    pub fn data4(self) -> [u8; 8] {
        (u64::try_from(self.0 & u128::from(u64::MAX)).unwrap_or(0)).to_be_bytes()
    }
}

impl fmt::Display for Guid {
    /// Lowercase braced form: `{dd36a036-c923-4794-b696-70577630b5cf}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d4 = self.data4();
        write!(
            f,
            "{{{:08x}-{:04x}-{:04x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}}}",
            self.data1(),
            self.data2(),
            self.data3(),
            d4[0],
            d4[1],
            d4[2],
            d4[3],
            d4[4],
            d4[5],
            d4[6],
            d4[7]
        )
    }
}

/// `<counters schemaVersion>`. Serialised (as in the `inspect` document) as the attribute
/// value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SchemaVersion {
    /// `1.1`: names inline, `resourceBase` assigns resource ids.
    #[serde(rename = "1.1")]
    V1_1,
    /// `2.0`: `nameID`/`descriptionID` give resource ids.
    #[serde(rename = "2.0")]
    V2_0,
}

impl SchemaVersion {
    /// The attribute value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1_1 => "1.1",
            Self::V2_0 => "2.0",
        }
    }
}

/// `<provider providerType>`. Serialised as the attribute value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProviderType {
    /// A user-mode (perflib V2) provider.
    UserMode,
    /// A kernel-mode PCW provider: what pcw-gen generates code for.
    KernelMode,
}

impl ProviderType {
    /// The attribute value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UserMode => "userMode",
            Self::KernelMode => "kernelMode",
        }
    }
}

/// `<counterSet instances>`. Serialised as the attribute value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Instances {
    /// `single`.
    Single,
    /// `multiple`.
    Multiple,
    /// `globalAggregate`.
    GlobalAggregate,
    /// `multipleAggregate`.
    MultipleAggregate,
    /// `globalAggregateHistory`.
    GlobalAggregateHistory,
}

impl Instances {
    /// Every value, in schema order.
    pub const ALL: [Self; 5] = [
        Self::Single,
        Self::Multiple,
        Self::GlobalAggregate,
        Self::MultipleAggregate,
        Self::GlobalAggregateHistory,
    ];

    /// The attribute value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::Multiple => "multiple",
            Self::GlobalAggregate => "globalAggregate",
            Self::MultipleAggregate => "multipleAggregate",
            Self::GlobalAggregateHistory => "globalAggregateHistory",
        }
    }

    /// Whether the *provider* publishes more than one instance (everything but `single`):
    /// PCW and Perflib combine the instances of the aggregate kinds before a consumer sees
    /// them. For what consumers see, ask [`Instances::has_instances`].
    pub fn is_multi(self) -> bool {
        self != Self::Single
    }

    /// Whether *consumers* see named instances: V1 objects with instance definitions, counter
    /// paths that name an instance (`\Set(name)\Counter`). True for `multiple` and
    /// `multipleAggregate` (the provider's instances, plus `_Total` for the latter); false for
    /// `single` and the global aggregates, which a consumer sees as one unnamed instance. The
    /// one place that decides it: the perf DLL's tables, `pcw list`, `pcw export` and
    /// `pcw typeperf` all ask here.
    pub fn has_instances(self) -> bool {
        matches!(self, Self::Multiple | Self::MultipleAggregate)
    }

    /// Whether counters of this set are aggregated (the `aggregate` attribute applies).
    pub fn is_aggregate(self) -> bool {
        matches!(
            self,
            Self::GlobalAggregate | Self::MultipleAggregate | Self::GlobalAggregateHistory
        )
    }
}

/// `<counter aggregate>`. Serialised as the attribute value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    /// `sum`.
    Sum,
    /// `avg`.
    Avg,
    /// `max`.
    Max,
    /// `min`.
    Min,
    /// `undefined`.
    Undefined,
}

impl Aggregate {
    /// Every value, in schema order.
    pub const ALL: [Self; 5] = [Self::Sum, Self::Avg, Self::Max, Self::Min, Self::Undefined];

    /// The attribute value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sum => "sum",
            Self::Avg => "avg",
            Self::Max => "max",
            Self::Min => "min",
            Self::Undefined => "undefined",
        }
    }
}

/// `<counterAttribute name>`. Serialised as the attribute value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CounterAttribute {
    /// `reference`.
    Reference,
    /// `noDisplay`.
    NoDisplay,
    /// `noDigitGrouping`.
    NoDigitGrouping,
    /// `displayAsHex`.
    DisplayAsHex,
    /// `displayAsReal`.
    DisplayAsReal,
}

impl CounterAttribute {
    /// Every value, in schema order.
    pub const ALL: [Self; 5] = [
        Self::Reference,
        Self::NoDisplay,
        Self::NoDigitGrouping,
        Self::DisplayAsHex,
        Self::DisplayAsReal,
    ];

    /// The attribute value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reference => "reference",
            Self::NoDisplay => "noDisplay",
            Self::NoDigitGrouping => "noDigitGrouping",
            Self::DisplayAsHex => "displayAsHex",
            Self::DisplayAsReal => "displayAsReal",
        }
    }
}

macro_rules! display_as_str {
    ($($ty:ty),*) => {$(
        impl fmt::Display for $ty {
            /// The manifest spelling.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}

display_as_str!(
    SchemaVersion,
    ProviderType,
    Instances,
    Aggregate,
    CounterAttribute
);

/// A validated manifest (one `<counters>` section with one provider).
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// `schemaVersion`.
    pub schema_version: SchemaVersion,
    /// The provider.
    pub provider: Provider,
}

/// `<provider>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Provider {
    /// `providerName` (default `Counters`).
    pub name: String,
    /// `providerGuid`.
    pub guid: Guid,
    /// `providerType` (default `userMode`).
    pub provider_type: ProviderType,
    /// `applicationIdentity`.
    pub application_identity: String,
    /// `callback` is `custom` (default `default`).
    pub custom_callback: bool,
    /// `symbol`.
    pub symbol: Option<String>,
    /// `resourceBase` (schema 1.1 only).
    pub resource_base: Option<u32>,
    /// Where `<provider>` is.
    pub pos: Pos,
    /// The countersets, in document order.
    pub countersets: Vec<CounterSet>,
}

/// `<counterSet>`.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterSet {
    /// `guid`.
    pub guid: Guid,
    /// `symbol`.
    pub symbol: String,
    /// `uri`.
    pub uri: String,
    /// `name`, with `$(string.…)` resolved. This is the name passed to `PcwRegister`.
    pub name: String,
    /// `nameID` (2.0) or the id assigned from `resourceBase` (1.1).
    pub name_id: u32,
    /// `description`, resolved.
    pub description: String,
    /// `descriptionID` (2.0) or the assigned id (1.1).
    pub description_id: u32,
    /// `instances`.
    pub instances: Instances,
    /// The value structs, in `StructIndex` order (one implicit struct when `<structs>` is
    /// absent).
    pub structs: Vec<Struct>,
    /// The counters in V1 order: document order, each base counter moved right after the
    /// first counter naming it (`baseID`/`multiCounterID`).
    pub counters: Vec<Counter>,
    /// Where `<counterSet>` is.
    pub pos: Pos,
}

/// A value block: one `<struct>` or the implicit one.
#[derive(Clone, Debug, PartialEq)]
pub struct Struct {
    /// `StructIndex` in descriptors and position in `PcwAddInstance`'s data array.
    pub index: u16,
    /// `<struct name>`; the counterset symbol for the implicit struct.
    pub name: String,
    /// `<struct type>` (the C type name); `None` for the implicit struct.
    pub c_type: Option<String>,
    /// Fields in order of first appearance among the counterset's counters.
    pub fields: Vec<Field>,
    /// `size_of` the generated `#[repr(C)]` struct (natural alignment, x86/x64/ARM64).
    pub size: u32,
}

/// A field of a value struct.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// `field` as written in the manifest.
    pub name: String,
    /// 4 or 8.
    pub size: u32,
    /// Offset in the generated struct.
    pub offset: u32,
}

/// `<counter>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Counter {
    /// `id` (checked to fit `PCW_COUNTER_DESCRIPTOR.Id`, a `u16`).
    pub id: u16,
    /// `symbol`.
    pub symbol: Option<String>,
    /// `uri`.
    pub uri: String,
    /// `name`, resolved (base counters often have none).
    pub name: Option<String>,
    /// Name resource id: `nameID` (2.0) or assigned (1.1); `None` when there is no name.
    pub name_id: Option<u32>,
    /// `description`, resolved.
    pub description: Option<String>,
    /// Description resource id.
    pub description_id: Option<u32>,
    /// The resolved type.
    pub counter_type: CounterType,
    /// `type` as written.
    pub type_name: &'static str,
    /// Value size in bytes (4 or 8).
    pub size: u32,
    /// `detailLevel`.
    pub detail_level: DetailLevel,
    /// `defaultScale` (default 0).
    pub default_scale: i32,
    /// `aggregate`.
    pub aggregate: Option<Aggregate>,
    /// `baseID`.
    pub base_id: Option<u16>,
    /// `perfTimeID`.
    pub perf_time_id: Option<u16>,
    /// `perfFreqID`.
    pub perf_freq_id: Option<u16>,
    /// `multiCounterID`.
    pub multi_counter_id: Option<u16>,
    /// `<counterAttribute>`s.
    pub attributes: Vec<CounterAttribute>,
    /// Index into the counterset's `structs`.
    pub struct_index: u16,
    /// `field` as written.
    pub field: String,
    /// Offset of the field in the generated struct.
    pub offset: u32,
    /// Where `<counter>` is.
    pub pos: Pos,
}

impl CounterSet {
    /// The counter with this id.
    pub fn counter(&self, id: u16) -> Option<&Counter> {
        self.counters.iter().find(|c| c.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde's spelling (the `inspect` document) is the manifest's, for every value.
    #[test]
    fn serde_spells_enums_as_the_manifest_does() {
        fn check<T>(values: &[T])
        where
            T: Serialize + for<'de> Deserialize<'de> + fmt::Display + PartialEq + fmt::Debug,
        {
            for v in values {
                let json = serde_json::to_string(v).unwrap();
                assert_eq!(json, format!("\"{v}\""));
                assert_eq!(&serde_json::from_str::<T>(&json).unwrap(), v);
            }
        }
        check(&[SchemaVersion::V1_1, SchemaVersion::V2_0]);
        check(&[ProviderType::UserMode, ProviderType::KernelMode]);
        check(&Instances::ALL);
        check(&Aggregate::ALL);
        check(&CounterAttribute::ALL);
        assert!(serde_json::from_str::<Instances>("\"multi\"").is_err());
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

    #[test]
    fn guid_round_trip() {
        let s = "{DD36A036-c923-4794-b696-70577630b5cf}";
        let g = Guid::parse_braced(s).unwrap();
        assert_eq!(g.to_string(), s.to_lowercase());
        assert_eq!(g.data1(), 0xdd36_a036);
        assert_eq!(g.data4(), [0xb6, 0x96, 0x70, 0x57, 0x76, 0x30, 0xb5, 0xcf]);
        for bad in [
            "dd36a036-c923-4794-b696-70577630b5cf",
            "{dd36a036-c923-4794-b696-70577630b5c}",
            "{dd36a036-c923-4794-b696x70577630b5cf}",
            "{dd36a036-c923-4794-b696-70577630b5cg}",
            "{+d36a036-c923-4794-b696-70577630b5cf}",
        ] {
            assert!(Guid::parse_braced(bad).is_none(), "{bad}");
        }
    }
}
