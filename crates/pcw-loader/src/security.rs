// SPDX-License-Identifier: MIT OR Apache-2.0
//! What `ObSetSecurityObjectByPointer` was given, decoded, and what the driver declares in SDDL,
//! parsed, into one comparable form: the DACL's protection and its ACEs (type, access mask after
//! the file object's generic mapping, SID as `S-1-…`).
//!
//! The binary side follows the self-relative security descriptor, ACL and ACE header layouts
//! of the Windows security reference; the SDDL side understands the subset a device DACL uses
//! (`D:` with the `P` flag, `A`/`D` ACEs, the generic and file rights, the well-known SID
//! aliases and `S-1-…` SIDs). Neither shares code with the driver's compile-time encoder.

/// `SE_DACL_PRESENT`.
const SE_DACL_PRESENT: u16 = 0x0004;
/// `SE_DACL_PROTECTED`.
const SE_DACL_PROTECTED: u16 = 0x1000;
/// `SE_SELF_RELATIVE`.
const SE_SELF_RELATIVE: u16 = 0x8000;

/// `FILE_ALL_ACCESS`.
const FILE_ALL_ACCESS: u32 = 0x001F_01FF;
/// `FILE_GENERIC_READ`.
const FILE_GENERIC_READ: u32 = 0x0012_0089;
/// `FILE_GENERIC_WRITE`.
const FILE_GENERIC_WRITE: u32 = 0x0012_0116;
/// `FILE_GENERIC_EXECUTE`.
const FILE_GENERIC_EXECUTE: u32 = 0x0012_00A0;

/// An access-control entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ace {
    /// `ACCESS_ALLOWED_ACE_TYPE` (0) or `ACCESS_DENIED_ACE_TYPE` (1).
    pub kind: u8,
    /// The access mask, generic rights mapped to the file object's specific rights.
    pub mask: u32,
    /// `S-1-…`.
    pub sid: String,
}

/// A DACL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dacl {
    /// Inheritance from the parent is blocked (`SE_DACL_PROTECTED`, SDDL `P`).
    pub protected: bool,
    /// The entries, in order.
    pub aces: Vec<Ace>,
}

/// Maps generic rights the way the I/O manager maps them for file objects.
fn map_generic(mask: u32) -> u32 {
    let mut out = mask & 0x0FFF_FFFF;
    if mask & 0x1000_0000 != 0 {
        out |= FILE_ALL_ACCESS;
    }
    if mask & 0x2000_0000 != 0 {
        out |= FILE_GENERIC_EXECUTE;
    }
    if mask & 0x4000_0000 != 0 {
        out |= FILE_GENERIC_WRITE;
    }
    if mask & 0x8000_0000 != 0 {
        out |= FILE_GENERIC_READ;
    }
    out
}

fn sid_text(bytes: &[u8]) -> Result<(String, usize), String> {
    let [revision, count, authority @ ..] = bytes else {
        return Err("SID shorter than its header".into());
    };
    if *revision != 1 {
        return Err(format!("SID revision {revision}"));
    }
    let count = usize::from(*count);
    let len = 8 + 4 * count;
    if bytes.len() < len || authority.len() < 6 {
        return Err("SID longer than its ACE".into());
    }
    let authority = authority
        .iter()
        .take(6)
        .fold(0u64, |a, b| (a << 8) | u64::from(*b));
    let mut text = format!("S-1-{authority}");
    for i in 0..count {
        let at = 8 + 4 * i;
        let sub = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        text = format!("{text}-{sub}");
    }
    Ok((text, len))
}

/// Decodes a self-relative security descriptor's DACL from memory.
///
/// # Safety
/// `sd` is NULL or readable for the descriptor's extent (at most 64 KiB are read, bounded by
/// the lengths found in it).
///
/// # Errors
/// What is malformed, as text.
pub unsafe fn decode_self_relative(sd: *const u8) -> Result<Dacl, String> {
    if sd.is_null() {
        return Err("NULL descriptor".into());
    }
    // SAFETY: the 20-byte header of a readable descriptor (contract).
    let header = unsafe { core::slice::from_raw_parts(sd, 20) };
    let control = u16::from_le_bytes([header[2], header[3]]);
    let dacl_at = u32::from_le_bytes([header[16], header[17], header[18], header[19]]) as usize;
    if header[0] != 1 {
        return Err(format!("revision {}", header[0]));
    }
    if control & SE_SELF_RELATIVE == 0 {
        return Err("not self-relative".into());
    }
    if control & SE_DACL_PRESENT == 0 || dacl_at == 0 {
        return Err("no DACL".into());
    }
    // SAFETY: the ACL header at the offset the descriptor gives (contract).
    let acl_header = unsafe { core::slice::from_raw_parts(sd.wrapping_add(dacl_at), 8) };
    let acl_size = usize::from(u16::from_le_bytes([acl_header[2], acl_header[3]]));
    let count = usize::from(u16::from_le_bytes([acl_header[4], acl_header[5]]));
    if !(8..=0xFFFF).contains(&acl_size) {
        return Err(format!("ACL size {acl_size}"));
    }
    // SAFETY: the whole ACL, whose size the header gives (contract).
    let acl = unsafe { core::slice::from_raw_parts(sd.wrapping_add(dacl_at), acl_size) };
    let mut aces = Vec::new();
    let mut at = 8;
    for i in 0..count {
        let Some(ace) = acl.get(at..at + 4) else {
            return Err(format!("ACE {i} starts past the ACL"));
        };
        let (kind, size) = (ace[0], usize::from(u16::from_le_bytes([ace[2], ace[3]])));
        let Some(ace) = acl.get(at..at + size).filter(|a| a.len() >= 8) else {
            return Err(format!("ACE {i} ({size} bytes) overruns the ACL"));
        };
        let mask = u32::from_le_bytes([ace[4], ace[5], ace[6], ace[7]]);
        let (sid, sid_len) = sid_text(&ace[8..])?;
        if 8 + sid_len != size {
            return Err(format!("ACE {i} is {size} bytes for a {sid_len}-byte SID"));
        }
        aces.push(Ace {
            kind,
            mask: map_generic(mask),
            sid,
        });
        at += size;
    }
    Ok(Dacl {
        protected: control & SE_DACL_PROTECTED != 0,
        aces,
    })
}

fn alias(sid: &str) -> Result<String, String> {
    let full = match sid {
        "SY" => "S-1-5-18",
        "BA" => "S-1-5-32-544",
        "BU" => "S-1-5-32-545",
        "MU" => "S-1-5-32-558",
        "LU" => "S-1-5-32-559",
        "WD" => "S-1-1-0",
        "AU" => "S-1-5-11",
        "LS" => "S-1-5-19",
        "NS" => "S-1-5-20",
        s if s.starts_with("S-1-") => s,
        other => return Err(format!("unknown SID `{other}`")),
    };
    Ok(full.to_owned())
}

fn rights(text: &str) -> Result<u32, String> {
    if let Some(hex) = text.strip_prefix("0x") {
        return u32::from_str_radix(hex, 16).map_err(|_| format!("bad access mask `{text}`"));
    }
    let mut mask = 0;
    for pair in text.as_bytes().chunks(2) {
        mask |= match pair {
            b"GA" => 0x1000_0000,
            b"GX" => 0x2000_0000,
            b"GW" => 0x4000_0000,
            b"GR" => 0x8000_0000,
            b"FA" => FILE_ALL_ACCESS,
            b"FR" => FILE_GENERIC_READ,
            b"FW" => FILE_GENERIC_WRITE,
            b"FX" => FILE_GENERIC_EXECUTE,
            _ => return Err(format!("unknown right in `{text}`")),
        };
    }
    Ok(map_generic(mask))
}

/// Parses the DACL of an SDDL string (`D:P(A;;GA;;;SY)…`).
///
/// # Errors
/// What is not understood, as text.
pub fn parse_sddl(sddl: &str) -> Result<Dacl, String> {
    let rest = sddl
        .strip_prefix("D:")
        .ok_or_else(|| format!("`{sddl}` has no `D:` part"))?;
    let flags_end = rest.find('(').unwrap_or(rest.len());
    let flags = &rest[..flags_end];
    if flags.chars().any(|c| c != 'P') {
        return Err(format!("unsupported DACL flags `{flags}`"));
    }
    let mut aces = Vec::new();
    for body in rest[flags_end..].split_terminator(')') {
        let body = body
            .strip_prefix('(')
            .ok_or_else(|| format!("malformed ACE near `{body}`"))?;
        let fields: Vec<&str> = body.split(';').collect();
        let [kind, ace_flags, mask, "", "", sid] = fields.as_slice() else {
            return Err(format!(
                "ACE `({body})` is not of the form (A;;rights;;;SID)"
            ));
        };
        if !ace_flags.is_empty() {
            return Err(format!("ACE flags `{ace_flags}` are not supported"));
        }
        let kind = match *kind {
            "A" => 0,
            "D" => 1,
            other => return Err(format!("ACE type `{other}` is not supported")),
        };
        aces.push(Ace {
            kind,
            mask: rights(mask)?,
            sid: alias(sid)?,
        });
    }
    Ok(Dacl {
        protected: flags.contains('P'),
        aces,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sddl_subset() {
        let d = parse_sddl("D:P(A;;GA;;;SY)(A;;GR;;;MU)").unwrap();
        assert!(d.protected);
        assert_eq!(
            d.aces,
            [
                Ace {
                    kind: 0,
                    mask: FILE_ALL_ACCESS,
                    sid: "S-1-5-18".into()
                },
                Ace {
                    kind: 0,
                    mask: FILE_GENERIC_READ,
                    sid: "S-1-5-32-558".into()
                },
            ]
        );
        assert!(parse_sddl("O:SYD:(A;;GA;;;SY)").is_err());
        assert!(parse_sddl("D:(A;;QQ;;;SY)").is_err());
        assert!(parse_sddl("D:(A;;GA;;;XX)").is_err());
    }

    #[test]
    fn binary_descriptor() {
        // D:(A;;GR;;;WD) by hand: header, ACL, one ACE with S-1-1-0.
        let mut sd = vec![1, 0, 0x04, 0x80];
        sd.extend_from_slice(&[0; 12]);
        sd.extend_from_slice(&20u32.to_le_bytes());
        sd.extend_from_slice(&[2, 0, 28, 0, 1, 0, 0, 0]);
        sd.extend_from_slice(&[0, 0, 20, 0]);
        sd.extend_from_slice(&0x8000_0000u32.to_le_bytes());
        sd.extend_from_slice(&[1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
        // SAFETY: a whole descriptor in a live vector.
        let d = unsafe { decode_self_relative(sd.as_ptr()) }.unwrap();
        assert_eq!(d, parse_sddl("D:(A;;GR;;;WD)").unwrap());
        // An ACE whose size overruns the ACL is refused.
        sd[28 + 2] = 40;
        // SAFETY: as above.
        let e = unsafe { decode_self_relative(sd.as_ptr()) }.unwrap_err();
        assert!(e.contains("overruns"), "{e}");
    }
}
