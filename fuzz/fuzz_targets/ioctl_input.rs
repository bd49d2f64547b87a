// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fuzzes the driver's control device (`pcw_driver::control::device_control`) under the
//! simulated kernel: any IOCTL code, input and output size gets a known status, never writes
//! past the output, reports no more output than it has, and a successful snapshot always
//! parses. The driver stays loaded across inputs, so queue state accumulates as in real use.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcw_driver::control::{
    IOCTL_PCW_CLOSE_QUEUE, IOCTL_PCW_CREATE_QUEUE, IOCTL_PCW_RECORD_QUEUE, IOCTL_PCW_SNAPSHOT,
    device_control,
};
use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Kernel};

std::thread_local! {
    static KERNEL: Kernel = {
        let k = Kernel::boot(BUILD_SERVER_2022);
        pcw_driver::lifecycle::load().expect("the driver loads");
        k
    };
}

const KNOWN: [i32; 8] = [
    0,                                  // STATUS_SUCCESS
    0x8000_0005_u32 as i32,             // STATUS_BUFFER_OVERFLOW (a snapshot's header only)
    0xC000_000D_u32 as i32,             // STATUS_INVALID_PARAMETER
    0xC000_0225_u32 as i32,             // STATUS_NOT_FOUND
    0xC000_0023_u32 as i32,             // STATUS_BUFFER_TOO_SMALL
    0xC000_0010_u32 as i32,             // STATUS_INVALID_DEVICE_REQUEST
    0xC000_0035_u32 as i32,             // STATUS_OBJECT_NAME_COLLISION
    0xC000_009A_u32 as i32,             // STATUS_INSUFFICIENT_RESOURCES
];

fuzz_target!(|data: &[u8]| {
    KERNEL.with(|_| ());
    let Some((head, input)) = data.split_first_chunk::<3>() else {
        return;
    };
    let code = match head[0] % 5 {
        0 => IOCTL_PCW_SNAPSHOT,
        1 => IOCTL_PCW_CREATE_QUEUE,
        2 => IOCTL_PCW_CLOSE_QUEUE,
        3 => IOCTL_PCW_RECORD_QUEUE,
        _ => u32::from_le_bytes([head[1], head[2], head[0], 0x22]),
    };
    let out_len = usize::from(u16::from_le_bytes([head[1], head[2]])) % 4096;
    let mut out = vec![0xA5u8; out_len + 16];
    let c = device_control(code, input, &mut out[..out_len]);
    assert!(KNOWN.contains(&c.status), "unexpected status {:#x}", c.status);
    assert!(out[out_len..].iter().all(|b| *b == 0xA5), "wrote past the output buffer");
    // The I/O manager copies Information bytes back: never more than the buffer holds.
    assert!(c.information <= out_len, "reported more output than the buffer holds");
    if code == IOCTL_PCW_SNAPSHOT && c.status == 0 {
        pcw_core::snapshot::Snapshot::parse(&out[..c.information])
            .expect("a successful snapshot parses");
    }
    if pcw_driver::queues::REGISTRY.len() > 256 {
        pcw_driver::queues::close_all();
    }
});
