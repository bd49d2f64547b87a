// SPDX-License-Identifier: MIT OR Apache-2.0
//! The control device's security descriptor, [`crate::control::DEVICE_SDDL`]
//! (`D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GR;;;MU)`), as the self-relative binary `SECURITY_DESCRIPTOR`
//! the kernel takes, built at compile time so the kernel needs no SDDL parser (wdmsec's
//! `IoCreateDeviceSecure` is a WDK static library the cross-built driver cannot link).
//! `src/glue.rs` applies it to the device right after `IoCreateDevice`.
//!
//! Generic rights are written as the file/device rights they map to: `GA` → `FILE_ALL_ACCESS`,
//! `GR` → `FILE_GENERIC_READ`. The control IOCTLs need `FILE_WRITE_ACCESS` and so are denied to
//! Performance Monitor Users, who can open the device for reading and take snapshots.

/// `FILE_ALL_ACCESS`.
pub const FILE_ALL_ACCESS: u32 = 0x001F_01FF;
/// `FILE_GENERIC_READ`.
pub const FILE_GENERIC_READ: u32 = 0x0012_0089;

/// The three well-known SIDs of the DACL: (sub-authorities, access mask).
pub const ACES: [(&[u32], u32); 3] = [
    (&[18], FILE_ALL_ACCESS),        // S-1-5-18, LocalSystem (SDDL `SY`)
    (&[32, 544], FILE_ALL_ACCESS),   // S-1-5-32-544, BUILTIN\Administrators (`BA`)
    (&[32, 558], FILE_GENERIC_READ), // S-1-5-32-558, Performance Monitor Users (`MU`)
];

const fn sid_len(subs: usize) -> usize {
    8 + 4 * subs
}

const fn ace_len(subs: usize) -> usize {
    8 + sid_len(subs)
}

/// Size of the whole descriptor.
pub const LEN: usize = 20 + 8 + ace_len(1) + ace_len(2) + ace_len(2);

/// `SE_SELF_RELATIVE | SE_DACL_PROTECTED | SE_DACL_PRESENT` (`D:P`).
const CONTROL: u16 = 0x8000 | 0x1000 | 0x0004;

/// Writes `bytes` at `at` (compile time; bounds are the callers' constant layout).
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated at compile time only, over the constant layout above"
)]
const fn put(mut buf: [u8; LEN], at: usize, bytes: &[u8]) -> [u8; LEN] {
    let mut i = 0;
    while i < bytes.len() {
        buf[at + i] = bytes[i];
        i += 1;
    }
    buf
}

const fn u16le(v: u16) -> [u8; 2] {
    v.to_le_bytes()
}

const fn u32le(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

#[expect(
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "evaluated at compile time only, over the constant layout above"
)]
const fn build() -> [u8; LEN] {
    let mut sd = [0u8; LEN];
    // SECURITY_DESCRIPTOR_RELATIVE: Revision 1, Sbz1, Control, Owner, Group, Sacl, Dacl = 20.
    sd[0] = 1;
    sd = put(sd, 2, &u16le(CONTROL));
    sd = put(sd, 16, &u32le(20));
    // ACL: AclRevision 2 (ACL_REVISION), Sbz1, AclSize, AceCount, Sbz2.
    sd[20] = 2;
    sd = put(sd, 22, &u16le((LEN - 20) as u16));
    sd = put(sd, 24, &u16le(ACES.len() as u16));
    let mut at = 28;
    let mut i = 0;
    while i < ACES.len() {
        let (subs, mask) = ACES[i];
        // ACCESS_ALLOWED_ACE: AceType 0, AceFlags 0, AceSize, Mask, then the SID.
        sd = put(sd, at + 2, &u16le(ace_len(subs.len()) as u16));
        sd = put(sd, at + 4, &u32le(mask));
        let sid = at + 8;
        sd[sid] = 1; // SID revision
        sd[sid + 1] = subs.len() as u8;
        sd[sid + 7] = 5; // SECURITY_NT_AUTHORITY {0,0,0,0,0,5}
        let mut j = 0;
        while j < subs.len() {
            sd = put(sd, sid + 8 + 4 * j, &u32le(subs[j]));
            j += 1;
        }
        at += ace_len(subs.len());
        i += 1;
    }
    sd
}

/// The self-relative descriptor (4-byte alignment is what the kernel requires of it).
#[repr(C, align(8))]
pub struct Descriptor(pub [u8; LEN]);

/// The device's security descriptor.
pub static DEVICE_SECURITY_DESCRIPTOR: Descriptor = Descriptor(build());

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    fn u16_at(b: &[u8], at: usize) -> u16 {
        u16::from_le_bytes([b[at], b[at + 1]])
    }
    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    /// Decodes the binary descriptor back into SDDL and compares it with `DEVICE_SDDL`, so the
    /// two cannot drift apart.
    #[test]
    fn the_binary_descriptor_is_device_sddl() {
        let sd = &DEVICE_SECURITY_DESCRIPTOR.0;
        assert_eq!(sd.len(), 96);
        assert_eq!(sd[0], 1, "revision");
        assert_eq!(
            u16_at(sd, 2),
            0x9004,
            "self-relative, DACL present and protected"
        );
        assert_eq!(
            (u32_at(sd, 4), u32_at(sd, 8), u32_at(sd, 12)),
            (0, 0, 0),
            "no owner, group, SACL"
        );
        let dacl = u32_at(sd, 16) as usize;
        assert_eq!(sd[dacl], 2, "ACL_REVISION");
        assert_eq!(
            usize::from(u16_at(sd, dacl + 2)),
            sd.len() - dacl,
            "AclSize"
        );
        let mut sddl = String::from("D:P");
        let mut at = dacl + 8;
        for _ in 0..u16_at(sd, dacl + 4) {
            assert_eq!((sd[at], sd[at + 1]), (0, 0), "ACCESS_ALLOWED_ACE, no flags");
            let size = usize::from(u16_at(sd, at + 2));
            let rights = match u32_at(sd, at + 4) {
                FILE_ALL_ACCESS => "GA",
                FILE_GENERIC_READ => "GR",
                other => panic!("unexpected mask {other:#x}"),
            };
            let sid = &sd[at + 8..at + size];
            assert_eq!(sid[0], 1);
            assert_eq!(&sid[2..8], &[0, 0, 0, 0, 0, 5]);
            let subs: Vec<u32> = (0..usize::from(sid[1]))
                .map(|j| u32_at(sid, 8 + 4 * j))
                .collect();
            let trustee = match subs.as_slice() {
                [18] => "SY",
                [32, 544] => "BA",
                [32, 558] => "MU",
                other => panic!("unexpected SID S-1-5-{other:?}"),
            };
            write!(sddl, "(A;;{rights};;;{trustee})").unwrap();
            at += size;
        }
        assert_eq!(at, sd.len(), "the ACEs fill the ACL exactly");
        assert_eq!(sddl, crate::control::DEVICE_SDDL);
    }
}
