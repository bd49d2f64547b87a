// SPDX-License-Identifier: MIT OR Apache-2.0
//! The driver↔DLL control protocol: the control device's names and its IOCTL codes.
//!
//! The driver (`src/control.rs` handles the requests, `src/glue.rs` creates the device and
//! its link) and the perf DLL (`pcw-perfdll`, which opens the link and sends
//! [`IOCTL_PCW_SNAPSHOT`]) both take these values from here; the reply to a snapshot request
//! is the format of [`crate::snapshot`]. Every code is
//! `CTL_CODE(FILE_DEVICE_UNKNOWN, function, METHOD_BUFFERED, access)` (Microsoft's "Defining
//! I/O Control Codes"); the access bits are what the I/O manager checks against the device's
//! security descriptor.

/// `FILE_DEVICE_UNKNOWN`.
const FILE_DEVICE_UNKNOWN: u32 = 0x22;
/// `METHOD_BUFFERED`.
const METHOD_BUFFERED: u32 = 0;
/// `FILE_READ_ACCESS`.
const FILE_READ_ACCESS: u32 = 1;
/// `FILE_WRITE_ACCESS`.
const FILE_WRITE_ACCESS: u32 = 2;

/// `CTL_CODE(FILE_DEVICE_UNKNOWN, function, METHOD_BUFFERED, access)`.
const fn ctl_code(function: u32, access: u32) -> u32 {
    (FILE_DEVICE_UNKNOWN << 16) | (access << 14) | (function << 2) | METHOD_BUFFERED
}

/// Reads a snapshot of every counterset (read access, no input).
pub const IOCTL_PCW_SNAPSHOT: u32 = ctl_code(0x800, FILE_READ_ACCESS);
/// Creates a dynamic queue instance (write access).
pub const IOCTL_PCW_CREATE_QUEUE: u32 = ctl_code(0x801, FILE_WRITE_ACCESS);
/// Closes a dynamic queue instance (write access).
pub const IOCTL_PCW_CLOSE_QUEUE: u32 = ctl_code(0x802, FILE_WRITE_ACCESS);
/// Records traffic on a dynamic queue (write access).
pub const IOCTL_PCW_RECORD_QUEUE: u32 = ctl_code(0x803, FILE_WRITE_ACCESS);

/// The one name the three spellings below share, so they cannot drift apart.
macro_rules! device {
    ($prefix:literal) => {
        concat!($prefix, "PcwRs")
    };
}

/// The device's name in the kernel object namespace.
pub const DEVICE_NAME: &str = device!(r"\Device\");
/// The symbolic link the driver creates for user mode.
pub const SYMBOLIC_LINK: &str = device!(r"\DosDevices\");
/// The path user mode opens: [`SYMBOLIC_LINK`] as a Win32 device path.
pub const DEVICE_PATH: &str = device!(r"\\.\");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_ctl_codes() {
        // CTL_CODE values as a Windows SDK build prints them: device type 0x22, functions
        // 0x800.., METHOD_BUFFERED, read access for the snapshot and write for the queues.
        assert_eq!(IOCTL_PCW_SNAPSHOT, 0x0022_6000);
        assert_eq!(IOCTL_PCW_CREATE_QUEUE, 0x0022_A004);
        assert_eq!(IOCTL_PCW_CLOSE_QUEUE, 0x0022_A008);
        assert_eq!(IOCTL_PCW_RECORD_QUEUE, 0x0022_A00C);
        // The fields agree with windows-sys's constants.
        use windows_sys::Win32::System::Ioctl as io;
        let fields = [
            (FILE_DEVICE_UNKNOWN, io::FILE_DEVICE_UNKNOWN),
            (METHOD_BUFFERED, io::METHOD_BUFFERED),
            (FILE_READ_ACCESS, io::FILE_READ_ACCESS),
            (FILE_WRITE_ACCESS, io::FILE_WRITE_ACCESS),
        ];
        for (i, (ours, theirs)) in fields.into_iter().enumerate() {
            assert_eq!(ours, theirs, "field #{i}");
        }
    }

    #[test]
    fn names_spell_one_device() {
        assert_eq!(DEVICE_NAME, r"\Device\PcwRs");
        assert_eq!(SYMBOLIC_LINK, r"\DosDevices\PcwRs");
        assert_eq!(DEVICE_PATH, r"\\.\PcwRs");
    }
}
