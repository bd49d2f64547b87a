// SPDX-License-Identifier: MIT OR Apache-2.0
//! GUIDs derived from names, by the algorithm `EventSource` and `TraceLogging` use for provider
//! ids (the "ETW name hash"), so that a declaration needs no GUID it did not choose.

use crate::model::Guid;

/// The namespace the name is hashed under: `{482c2db2-c390-47c8-87f8-1a15bfc130fb}`, as bytes.
const NAMESPACE: [u8; 16] = [
    0x48, 0x2C, 0x2D, 0xB2, 0xC3, 0x90, 0x47, 0xC8, 0x87, 0xF8, 0x1A, 0x15, 0xBF, 0xC1, 0x30, 0xFB,
];

/// The GUID of `name` by the ETW name hash:
///
/// 1. the name in upper case (each character's Unicode upper case when that is one character,
///    as .NET's `ToUpperInvariant` does; others are kept), as UTF-16 code units, big-endian;
/// 2. SHA-1 of the 16 namespace bytes followed by those bytes;
/// 3. the first 16 bytes of the hash, with the high nibble of byte 7 set to 5 (a name-based
///    GUID), read as a Windows `GUID` in memory: `Data1`, `Data2` and `Data3` little-endian,
///    `Data4` as is.
///
/// `MyCompany.MyComponent`, the provider of the `TraceLogging` documentation, gives
/// `{ce5fa4ea-ab00-5402-8b76-9f76ac858fb5}`; names differing only in case give the same GUID.
///
/// # Examples
///
/// ```
/// use pcw_gen::declare::name_guid;
///
/// let guid = name_guid("MyCompany.MyComponent");
/// assert_eq!(guid.to_string(), "{ce5fa4ea-ab00-5402-8b76-9f76ac858fb5}");
/// assert_eq!(name_guid("MYCOMPANY.MYCOMPONENT"), guid);
/// ```
pub fn name_guid(name: &str) -> Guid {
    let mut hasher = sha1_smol::Sha1::new();
    hasher.update(&NAMESPACE);
    for c in name.chars() {
        let mut upper = c.to_uppercase();
        let one = match (upper.next(), upper.next()) {
            (Some(u), None) => u,
            _ => c,
        };
        let mut units = [0u16; 2];
        for unit in one.encode_utf16(&mut units) {
            hasher.update(&unit.to_be_bytes());
        }
    }
    let hash = hasher.digest().bytes();
    let mut b = [0u8; 16];
    b.copy_from_slice(&hash[..16]);
    b[7] = (b[7] & 0x0F) | 0x50;
    let data1 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let data2 = u16::from_le_bytes([b[4], b[5]]);
    let data3 = u16::from_le_bytes([b[6], b[7]]);
    let mut value =
        (u128::from(data1) << 96) | (u128::from(data2) << 80) | (u128::from(data3) << 64);
    for (i, byte) in b[8..].iter().enumerate() {
        value |= u128::from(*byte) << (8 * (7 - i));
    }
    Guid(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The provider GUID Microsoft's `TraceLogging` documentation derives from its example name.
    #[test]
    fn matches_the_documented_etw_name_hash() {
        assert_eq!(
            name_guid("MyCompany.MyComponent").to_string(),
            "{ce5fa4ea-ab00-5402-8b76-9f76ac858fb5}"
        );
        assert_eq!(
            name_guid("mycompany.mycomponent"),
            name_guid("MyCompany.MyComponent")
        );
        assert_ne!(
            name_guid("MyCompany.MyComponent2"),
            name_guid("MyCompany.MyComponent")
        );
        // Version 5 in the top nibble of Data3.
        assert_eq!(name_guid("").data3() >> 12, 5);
    }
}
