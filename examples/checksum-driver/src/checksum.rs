// SPDX-License-Identifier: MIT OR Apache-2.0
//! The two checksums the driver computes: CRC-32 (IEEE 802.3, the zlib/PNG one) and Adler-32
//! (RFC 1950). Plain, allocation-free Rust that the host tests run as they are.

/// The CRC-32 lookup table for the reflected polynomial `0xEDB88320`, built at compile time.
static CRC32_TABLE: [u32; 256] = crc32_table();

#[expect(
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "evaluated at compile time only; `i` < 256 bounds the index and fits a `u32`"
)]
const fn crc32_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            bit += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

/// CRC-32 of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = u32::MAX;
    for &byte in data {
        // The index is the low byte, 0..=255: the table's length.
        let entry = CRC32_TABLE
            .get(((crc ^ u32::from(byte)) & 0xFF) as usize)
            .copied()
            .unwrap_or(0);
        crc = entry ^ (crc >> 8);
    }
    !crc
}

/// The largest prime below 2^16.
const ADLER_MODULUS: u32 = 65_521;
/// The most bytes whose sums cannot overflow a `u32` before the modulus is taken (zlib's NMAX).
const ADLER_BLOCK: usize = 5552;

/// Adler-32 of `data`.
pub fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for block in data.chunks(ADLER_BLOCK) {
        for &byte in block {
            a += u32::from(byte);
            b += a;
        }
        a %= ADLER_MODULUS;
        b %= ADLER_MODULUS;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_values() {
        // The catalogue's check value for "123456789", and two more.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
    }

    #[test]
    fn adler32_check_values() {
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
        // Long inputs take the modulus once per block and must still agree with the
        // definition (the sums taken modulo 65521 after every byte).
        let data: Vec<u8> = (0..20_000u32)
            .map(|i| (i * 7 + 3).to_le_bytes()[0])
            .collect();
        let (mut a, mut b) = (1u32, 0u32);
        for &byte in &data {
            a = (a + u32::from(byte)) % ADLER_MODULUS;
            b = (b + a) % ADLER_MODULUS;
        }
        assert_eq!(adler32(&data), (b << 16) | a);
        assert_eq!(adler32(&[0xFF; 6000]), {
            let (mut a, mut b) = (1u32, 0u32);
            for _ in 0..6000 {
                a = (a + 255) % ADLER_MODULUS;
                b = (b + a) % ADLER_MODULUS;
            }
            (b << 16) | a
        });
    }
}
