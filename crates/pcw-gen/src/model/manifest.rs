// SPDX-License-Identifier: MIT OR Apache-2.0
//! The validated, resolved manifest: provider, countersets, counters and value structs with
//! resolved counter types, sizes, struct indexes and byte offsets. Every generator works from
//! this model only; the analysis builds it and it never holds an inconsistency the analysis
//! reports as an error.

use std::fmt;

use pcw_core::counter_type::CounterType;

use super::values::{Aggregate, Callback, CounterAttribute, DetailLevel, Instances};
use super::values::{ProviderType, SchemaVersion};

/// A 1-based position in a manifest's text (columns count characters, not bytes): where a
/// [`crate::Diagnostic`] is, and where an element of the model was declared.
///
/// # Examples
///
/// ```
/// use pcw_gen::model::Pos;
///
/// let pos = Pos::new(3, 7);
/// assert_eq!((pos.line, pos.column), (3, 7));
/// assert!(Pos::new(2, 40) < pos);
/// ```
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

impl Pos {
    /// A position from a 1-based line and column.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(pcw_gen::model::Pos::new(1, 1).line, 1);
    /// ```
    pub const fn new(line: u32, column: u32) -> Self {
        Self { line, column }
    }
}

/// A GUID, as written in a manifest (`{8-4-4-4-12}`), held as its big-endian value.
///
/// # Examples
///
/// ```
/// use pcw_gen::model::Guid;
///
/// let guid = Guid::parse_braced("{DD36A036-C923-4794-B696-70577630B5CF}").unwrap();
/// assert_eq!(guid.0, 0xdd36a036_c923_4794_b696_70577630b5cf);
/// assert_eq!(guid.to_string(), "{dd36a036-c923-4794-b696-70577630b5cf}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Guid(pub u128);

impl Guid {
    /// Parses `{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}` (hex digits of either case).
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::model::Guid;
    ///
    /// assert!(Guid::parse_braced("{dd36a036-c923-4794-b696-70577630b5cf}").is_some());
    /// assert!(Guid::parse_braced("dd36a036-c923-4794-b696-70577630b5cf").is_none());
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// let guid = pcw_gen::model::Guid(0xdd36a036_c923_4794_b696_70577630b5cf);
    /// assert_eq!(guid.data1(), 0xdd36a036);
    /// ```
    pub fn data1(self) -> u32 {
        u32::try_from(self.0 >> 96).unwrap_or(0)
    }

    /// `Data2`.
    ///
    /// # Examples
    ///
    /// ```
    /// let guid = pcw_gen::model::Guid(0xdd36a036_c923_4794_b696_70577630b5cf);
    /// assert_eq!(guid.data2(), 0xc923);
    /// ```
    pub fn data2(self) -> u16 {
        u16::try_from((self.0 >> 80) & 0xFFFF).unwrap_or(0)
    }

    /// `Data3`.
    ///
    /// # Examples
    ///
    /// ```
    /// let guid = pcw_gen::model::Guid(0xdd36a036_c923_4794_b696_70577630b5cf);
    /// assert_eq!(guid.data3(), 0x4794);
    /// ```
    pub fn data3(self) -> u16 {
        u16::try_from((self.0 >> 64) & 0xFFFF).unwrap_or(0)
    }

    /// `Data4`.
    ///
    /// # Examples
    ///
    /// ```
    /// let guid = pcw_gen::model::Guid(0xdd36a036_c923_4794_b696_70577630b5cf);
    /// assert_eq!(guid.data4(), [0xb6, 0x96, 0x70, 0x57, 0x76, 0x30, 0xb5, 0xcf]);
    /// ```
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

/// A validated manifest: one `<counters>` section with one provider, as [`crate::analyze`]
/// resolves it.
///
/// # Examples
///
/// ```
/// use pcw_gen::model::SchemaVersion;
///
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let analysis = pcw_gen::analyze(&pcw_gen::Input::new("fabrikam_v2.man", bytes));
/// let manifest = analysis.manifest.expect("a valid manifest");
/// assert_eq!(manifest.schema_version, SchemaVersion::V2_0);
/// assert_eq!(manifest.provider.name, "Fabrikam Queue Driver");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Manifest {
    /// `schemaVersion`.
    pub schema_version: SchemaVersion,
    /// The provider.
    pub provider: Provider,
}

/// `<provider>`.
///
/// # Examples
///
/// ```
/// use pcw_gen::model::{Callback, ProviderType};
///
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let analysis = pcw_gen::analyze(&pcw_gen::Input::new("fabrikam_v2.man", bytes));
/// let provider = analysis.manifest.expect("a valid manifest").provider;
/// assert_eq!(provider.provider_type, ProviderType::KernelMode);
/// assert_eq!(provider.callback, Callback::Custom);
/// assert_eq!(provider.countersets.len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Provider {
    /// `providerName` (default `Counters`).
    pub name: String,
    /// `providerGuid`.
    pub guid: Guid,
    /// `providerType` (default `userMode`).
    pub provider_type: ProviderType,
    /// `applicationIdentity`.
    pub application_identity: String,
    /// `callback` (default `default`).
    pub callback: Callback,
    /// `symbol`.
    pub symbol: Option<String>,
    /// `resourceBase` (schema 1.1 only).
    pub resource_base: Option<u32>,
    /// Where `<provider>` is.
    pub pos: Pos,
    /// The countersets, in document order.
    pub countersets: Vec<Counterset>,
}

/// `<counterSet>`: a counterset, which PCW registers and consumers see as an object.
///
/// # Examples
///
/// ```
/// use pcw_gen::model::Instances;
///
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let analysis = pcw_gen::analyze(&pcw_gen::Input::new("fabrikam_v2.man", bytes));
/// let manifest = analysis.manifest.expect("a valid manifest");
/// let queue = &manifest.provider.countersets[0];
/// assert_eq!((queue.symbol.as_str(), queue.instances), ("FabQueue", Instances::Multiple));
/// // A name from the string table, resolved.
/// assert_eq!(manifest.provider.countersets[1].name, "Fabrikam Queue Driver");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Counterset {
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

impl Counterset {
    /// The counter with this id.
    ///
    /// # Examples
    ///
    /// ```
    /// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
    /// let analysis = pcw_gen::analyze(&pcw_gen::Input::new("fabrikam_v2.man", bytes));
    /// let manifest = analysis.manifest.expect("a valid manifest");
    /// let queue = &manifest.provider.countersets[0];
    /// assert_eq!(queue.counter(1).and_then(|c| c.name.as_deref()), Some("Queue Depth"));
    /// assert!(queue.counter(99).is_none());
    /// ```
    pub fn counter(&self, id: u16) -> Option<&Counter> {
        self.counters.iter().find(|c| c.id == id)
    }
}

/// A value block: one `<struct>` or the implicit one, laid out as the generated
/// `#[repr(C)]` struct is.
///
/// # Examples
///
/// ```
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let analysis = pcw_gen::analyze(&pcw_gen::Input::new("fabrikam_v2.man", bytes));
/// let manifest = analysis.manifest.expect("a valid manifest");
/// let block = &manifest.provider.countersets[0].structs[0];
/// assert_eq!(block.name, "QueueData");
/// assert_eq!(block.c_type.as_deref(), Some("FABRIKAM_QUEUE_DATA"));
/// assert_eq!(block.size, 72);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
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
///
/// # Examples
///
/// ```
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let analysis = pcw_gen::analyze(&pcw_gen::Input::new("fabrikam_v2.man", bytes));
/// let manifest = analysis.manifest.expect("a valid manifest");
/// let completed = &manifest.provider.countersets[0].structs[0].fields[1];
/// assert_eq!((completed.name.as_str(), completed.size, completed.offset), ("Completed", 8, 8));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Field {
    /// `field` as written in the manifest.
    pub name: String,
    /// 4 or 8.
    pub size: u32,
    /// Offset in the generated struct.
    pub offset: u32,
}

/// `<counter>`.
///
/// # Examples
///
/// ```
/// use pcw_gen::model::{CounterAttribute, DetailLevel};
///
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let analysis = pcw_gen::analyze(&pcw_gen::Input::new("fabrikam_v2.man", bytes));
/// let manifest = analysis.manifest.expect("a valid manifest");
/// let wait = manifest.provider.countersets[0].counter(6).expect("counter 6");
/// assert_eq!(wait.type_name, "perf_average_timer");
/// assert_eq!((wait.base_id, wait.detail_level), (Some(7), DetailLevel::Advanced));
/// assert_eq!(wait.attributes, [CounterAttribute::DisplayAsReal]);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
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

#[cfg(test)]
mod tests {
    use super::*;

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
