// SPDX-License-Identifier: MIT OR Apache-2.0
//! Runs the generated code against the fake PCW and checks every descriptor (id, struct index,
//! offset, size) against the `inspect` document of the same configuration.
#![cfg(not(windows))]

use std::sync::MutexGuard;

use pcw_gen::model::{Inspect, InspectCounterset};
use pcw_gen_check::fake_pcw::{self, SERIAL};
use pcw_gen_check::pcw_rt::{
    PCW_COUNTER_DESCRIPTOR, PCW_VERSION_1, PCW_VERSION_2, PcwRegistrationSiloNeutral,
    STATUS_INVALID_PARAMETER_2, UNICODE_STRING,
};
use pcw_gen_check::{contoso_v11, fabrikam_bound, fabrikam_v2, inspect_json, stats};

fn serial() -> MutexGuard<'static, ()> {
    let guard = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    fake_pcw::reset();
    guard
}

fn inspect(json: &str) -> Inspect {
    serde_json::from_str(json).unwrap()
}

fn tuples(d: &[PCW_COUNTER_DESCRIPTOR]) -> Vec<(u16, u16, u16, u16)> {
    d.iter()
        .map(|d| (d.Id, d.StructIndex, d.Offset, d.Size))
        .collect()
}

/// Descriptors of a set whose structs are generated: everything must equal `inspect`.
fn assert_matches(descriptors: &[PCW_COUNTER_DESCRIPTOR], set: &InspectCounterset) {
    let expected: Vec<(u16, u16, u16, u16)> = set
        .counters
        .iter()
        .map(|c| {
            (
                c.id,
                c.struct_index,
                u16::try_from(c.offset.expect("generated struct has offsets")).unwrap(),
                u16::try_from(c.size).unwrap(),
            )
        })
        .collect();
    assert_eq!(tuples(descriptors), expected, "counterset `{}`", set.symbol);
}

fn set<'a>(doc: &'a Inspect, symbol: &str) -> &'a InspectCounterset {
    doc.countersets.iter().find(|s| s.symbol == symbol).unwrap()
}

fn utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

fn unicode(buf: &mut [u16]) -> UNICODE_STRING {
    let bytes = u16::try_from(buf.len() * 2).unwrap();
    UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: buf.as_mut_ptr(),
    }
}

#[test]
fn generated_descriptors_match_inspect() {
    let fab = inspect(inspect_json::FABRIKAM_V2);
    assert_matches(&fabrikam_v2::fab_queue::DESCRIPTORS, set(&fab, "FabQueue"));
    assert_matches(
        &fabrikam_v2::fab_driver::DESCRIPTORS,
        set(&fab, "FabDriver"),
    );
    let con = inspect(inspect_json::CONTOSO_V11);
    assert_matches(
        &contoso_v11::contoso_timers::DESCRIPTORS,
        set(&con, "CONTOSO_TIMERS"),
    );
    assert_matches(
        &contoso_v11::contoso_precision::DESCRIPTORS,
        set(&con, "CONTOSO_PRECISION"),
    );
    assert_matches(
        &contoso_v11::contoso_history::DESCRIPTORS,
        set(&con, "CONTOSO_HISTORY"),
    );
    // Struct sizes too.
    let st = &set(&fab, "FabQueue").structs[0];
    assert_eq!(
        Some(u32::try_from(size_of::<fabrikam_v2::fab_queue::FabrikamQueueData>()).unwrap()),
        st.size
    );
    let timers = set(&con, "CONTOSO_TIMERS");
    assert_eq!(timers.structs.len(), 2);
    assert_eq!(
        Some(u32::try_from(size_of::<contoso_v11::contoso_timers::ContosoCountData>()).unwrap()),
        timers.structs[1].size
    );
}

#[test]
fn bound_descriptors_use_the_user_type() {
    let doc = inspect(inspect_json::FABRIKAM_BOUND);
    let queue = set(&doc, "FabQueue");
    assert!(queue.structs[0].bound);
    let d = tuples(&fabrikam_bound::fab_queue::DESCRIPTORS);
    for (c, (id, si, offset, size)) in queue.counters.iter().zip(&d) {
        assert_eq!((c.id, c.struct_index, u32::from(*size)), (*id, *si, c.size));
        assert_eq!(c.offset, None);
        let expected = match c.field.as_str() {
            "Completed" => std::mem::offset_of!(stats::QueueStats, completed),
            "BytesTotal" => std::mem::offset_of!(stats::QueueStats, bytes_total),
            "Depth" => std::mem::offset_of!(stats::QueueStats, depth),
            "CreatedAt" => std::mem::offset_of!(stats::QueueStats, created_at),
            "Now" => std::mem::offset_of!(stats::QueueStats, now),
            "Frequency" => std::mem::offset_of!(stats::QueueStats, frequency),
            "Interrupts" => std::mem::offset_of!(stats::QueueStats, interrupts),
            "WaitTicks" => std::mem::offset_of!(stats::QueueStats, wait_ticks),
            "WaitCount" => std::mem::offset_of!(stats::QueueStats, wait_count),
            "FullSamples" => std::mem::offset_of!(stats::QueueStats, full_samples),
            "Samples" => std::mem::offset_of!(stats::QueueStats, samples),
            other => panic!("unexpected field {other}"),
        };
        assert_eq!(usize::from(*offset), expected, "field {}", c.field);
    }
}

#[test]
fn register_uses_v2_and_the_manifest_name() {
    let _g = serial();
    // SAFETY: no callback, NULL context.
    let reg = unsafe { fabrikam_v2::fab_queue::register(None, std::ptr::null_mut()) }.unwrap();
    {
        let r = fake_pcw::recorder();
        assert_eq!(r.registers.len(), 1);
        let call = &r.registers[0];
        assert_eq!(call.version, PCW_VERSION_2);
        assert_eq!(call.flags, 0);
        assert_eq!(call.name, "Fabrikam Queue");
        assert_eq!(
            call.descriptors,
            tuples(&fabrikam_v2::fab_queue::DESCRIPTORS)
        );
        assert!(!call.has_callback);
        assert_eq!(reg.handle(), call.handle);
    }
    let handle = reg.handle();
    drop(reg);
    assert_eq!(fake_pcw::recorder().unregisters, vec![handle]);
}

#[test]
fn register_falls_back_to_v1_without_flags() {
    unsafe extern "system" fn callback(
        _: i32,
        _: *const pcw_gen_check::pcw_rt::PCW_CALLBACK_INFORMATION,
        _: *const core::ffi::c_void,
    ) -> i32 {
        0
    }
    let _g = serial();
    fake_pcw::recorder().reject_v2 = true;
    // SAFETY: the callback ignores its arguments; NULL context.
    let reg = unsafe { fabrikam_bound::fab_driver::register(Some(callback), std::ptr::null_mut()) }
        .unwrap();
    let r = fake_pcw::recorder();
    let versions: Vec<(u32, i32)> = r.registers.iter().map(|c| (c.version, c.flags)).collect();
    assert_eq!(
        versions,
        vec![
            (PCW_VERSION_2, PcwRegistrationSiloNeutral),
            (PCW_VERSION_1, 0)
        ]
    );
    assert!(r.registers.iter().all(|c| c.has_callback));
    assert_eq!(r.registers[0].name, "Fabrikam Queue Driver");
    assert_eq!(reg.handle(), r.registers[1].handle);
    drop(r);
    drop(reg);
}

#[test]
fn failed_registration_is_an_error_and_null_handles_are_never_unregistered() {
    let _g = serial();
    fake_pcw::recorder().fail_with = Some(STATUS_INVALID_PARAMETER_2 + 1);
    // SAFETY: no callback.
    let err = unsafe { contoso_v11::contoso_timers::register(None, std::ptr::null_mut()) };
    assert_eq!(err.unwrap_err(), STATUS_INVALID_PARAMETER_2 + 1);

    fake_pcw::reset();
    fake_pcw::recorder().succeed_with_null = true;
    // SAFETY: no callback.
    let reg = unsafe { contoso_v11::contoso_timers::register(None, std::ptr::null_mut()) }.unwrap();
    assert_eq!(reg.handle(), 0);
    reg.unregister();
    assert!(fake_pcw::recorder().unregisters.is_empty());
}

#[test]
fn add_copies_every_struct_and_descriptors_point_at_the_values() {
    let _g = serial();
    let mut name = utf16("queue 7");
    let name = unicode(&mut name);
    let timer = contoso_v11::contoso_timers::ContosoTimerData {
        ticks: 0x1111_2222_3333_4444,
        busy100ns: 0x0102_0304_0506_0708,
        total_bytes: 99,
        ..Default::default()
    };
    let counts = contoso_v11::contoso_timers::ContosoCountData {
        pending: 5,
        hits: 6,
        lookups: 7,
        ..Default::default()
    };
    // SAFETY: the fake accepts any buffer value.
    let status = unsafe { contoso_v11::contoso_timers::add(0x77, &name, 7, &timer, &counts) };
    assert_eq!(status, 0);
    let r = fake_pcw::recorder();
    let call = &r.adds[0];
    assert_eq!(
        (call.target, call.name.as_str(), call.id, call.count),
        (0x77, "queue 7", 7, 2)
    );
    assert_eq!(call.blocks[0].len(), size_of_val(&timer));
    assert_eq!(call.blocks[1].len(), size_of_val(&counts));
    // Read each counter back through its descriptor, as PCW does.
    let doc = inspect(inspect_json::CONTOSO_V11);
    let timers = set(&doc, "CONTOSO_TIMERS");
    for (d, c) in contoso_v11::contoso_timers::DESCRIPTORS
        .iter()
        .zip(&timers.counters)
    {
        let block = &call.blocks[usize::from(d.StructIndex)];
        let bytes = &block[usize::from(d.Offset)..usize::from(d.Offset + d.Size)];
        let value = if d.Size == 8 {
            u64::from_le_bytes(bytes.try_into().unwrap())
        } else {
            u64::from(u32::from_le_bytes(bytes.try_into().unwrap()))
        };
        let expected = match c.field.as_str() {
            "Ticks" => 0x1111_2222_3333_4444,
            "Busy100ns" => 0x0102_0304_0506_0708,
            "TotalBytes" => 99,
            "Pending" => 5,
            "Hits" => 6,
            "Lookups" => 7,
            _ => 0,
        };
        assert_eq!(value, expected, "counter {} ({})", c.id, c.field);
    }
}

#[test]
fn add_with_a_bound_type_reads_the_atomics() {
    use std::sync::atomic::Ordering::Relaxed;
    let _g = serial();
    let stats = stats::QueueStats::default();
    stats.depth.store(3, Relaxed);
    stats.bytes_total.store(1 << 40, Relaxed);
    stats.samples.store(12, Relaxed);
    stats.private_state.store(0xDEAD, Relaxed);
    let mut name = utf16("q");
    let name = unicode(&mut name);
    // SAFETY: the fake accepts any buffer value.
    unsafe { fabrikam_bound::fab_queue::add(1, &name, 1, &stats) };
    let r = fake_pcw::recorder();
    let block = &r.adds[0].blocks[0];
    let doc = inspect(inspect_json::FABRIKAM_BOUND);
    for (d, c) in fabrikam_bound::fab_queue::DESCRIPTORS
        .iter()
        .zip(&set(&doc, "FabQueue").counters)
    {
        let bytes = &block[usize::from(d.Offset)..usize::from(d.Offset + d.Size)];
        let value = if d.Size == 8 {
            u64::from_le_bytes(bytes.try_into().unwrap())
        } else {
            u64::from(u32::from_le_bytes(bytes.try_into().unwrap()))
        };
        assert_eq!(Some(value), stats.value_of(&c.field), "counter {}", c.id);
    }
}

#[test]
fn enumerate_passes_no_data() {
    let _g = serial();
    let mut name = utf16("only");
    let name = unicode(&mut name);
    // SAFETY: the fake accepts any buffer value.
    unsafe { fabrikam_v2::fab_queue::enumerate(2, &name, 41) };
    let r = fake_pcw::recorder();
    let call = &r.adds[0];
    assert_eq!((call.count, call.data_null, call.id), (0, true, 41));
}

#[test]
fn create_and_close_instances() {
    let _g = serial();
    // SAFETY: no callback.
    let reg = unsafe { fabrikam_v2::fab_driver::register(None, std::ptr::null_mut()) }.unwrap();
    let values = Box::new(fabrikam_v2::fab_driver::Values {
        queues: 4,
        flags: 0x10,
    });
    let mut name = utf16("");
    let name = unicode(&mut name);
    // SAFETY: `values` outlives the instance (dropped below first).
    let instance =
        unsafe { fabrikam_v2::fab_driver::create(&reg, &name, &raw const *values) }.unwrap();
    let handle = instance.handle();
    {
        let r = fake_pcw::recorder();
        let call = &r.creates[0];
        assert_eq!((call.target, call.count), (reg.handle(), 1));
        assert_eq!(call.blocks[0], [4, 0, 0, 0, 0x10, 0, 0, 0]);
    }
    instance.close();
    assert_eq!(fake_pcw::recorder().closes, vec![handle]);
    drop(values);

    fake_pcw::recorder().fail_with = Some(-5);
    let values = fabrikam_v2::fab_driver::Values::default();
    // SAFETY: `values` outlives the (failed) creation.
    let err = unsafe { fabrikam_v2::fab_driver::create(&reg, &name, &raw const values) };
    assert_eq!(err.unwrap_err(), -5);
    assert_eq!(fake_pcw::recorder().closes.len(), 1);
    fake_pcw::recorder().fail_with = None;
    drop(reg);
}

#[test]
fn constants_come_from_the_manifest() {
    assert_eq!(fabrikam_v2::fab_queue::ids::FAB_QUEUE_DEPTH, 1);
    assert_eq!(fabrikam_v2::fab_driver::NAME, "Fabrikam Queue Driver");
    const { assert!(!fabrikam_v2::fab_driver::MULTI_INSTANCE) };
    assert_eq!(fabrikam_v2::fab_queue::COUNTER_MASK, 0x1FFE);
    let g = fabrikam_v2::fab_queue::GUID;
    assert_eq!((g.data1, g.data2, g.data3), (0x4f2e_8d1a, 0x6b3c, 0x4e5f));
    assert_eq!(g.data4, [0xa7, 0xd9, 0x0b, 0x1c, 0x2e, 0x3f, 0x4a, 0x5b]);
}

#[test]
fn the_same_code_runs_on_a_wdk_sys_style_facade() {
    use pcw_gen_check::fabrikam_wdk;
    use pcw_gen_check::wdk_style_rt::{self, bindings};

    unsafe extern "C" fn callback(
        _: bindings::_PCW_CALLBACK_TYPE::Type,
        _: bindings::PPCW_CALLBACK_INFORMATION,
        _: *mut core::ffi::c_void,
    ) -> i32 {
        0
    }
    let _g = serial();
    fake_pcw::recorder().reject_v2 = true;
    // SAFETY: the callback ignores its arguments; NULL context.
    let reg =
        unsafe { fabrikam_wdk::fab_queue::register(Some(callback), std::ptr::null_mut()) }.unwrap();
    assert!(!reg.handle().is_null());
    {
        let r = fake_pcw::recorder();
        let versions: Vec<(u32, i32)> = r.registers.iter().map(|c| (c.version, c.flags)).collect();
        assert_eq!(versions, vec![(PCW_VERSION_2, 1), (PCW_VERSION_1, 0)]);
        assert_eq!(
            r.registers[1].descriptors,
            tuples_wdk(&fabrikam_wdk::fab_queue::DESCRIPTORS)
        );
        assert_eq!(
            r.registers[1].descriptors,
            tuples(&fabrikam_v2::fab_queue::DESCRIPTORS)
        );
    }
    let mut units = utf16("q0");
    let name = bindings::UNICODE_STRING {
        Length: 4,
        MaximumLength: 4,
        Buffer: units.as_mut_ptr(),
    };
    let values = fabrikam_wdk::fab_queue::FabrikamQueueData {
        depth: 9,
        ..Default::default()
    };
    // SAFETY: the fake accepts any buffer value.
    unsafe {
        fabrikam_wdk::fab_queue::add(std::ptr::without_provenance_mut(0x40), &name, 3, &values)
    };
    assert_eq!(fake_pcw::recorder().adds[0].blocks[0][..4], [9, 0, 0, 0]);
    let g = fabrikam_wdk::fab_queue::GUID;
    assert_eq!((g.Data1, g.Data2, g.Data3), (0x4f2e_8d1a, 0x6b3c, 0x4e5f));
    assert_eq!(
        g,
        wdk_style_rt::guid_from_u128(0x4f2e_8d1a_6b3c_4e5f_a7d9_0b1c_2e3f_4a5b)
    );
    let handle = reg.handle() as isize;
    drop(reg);
    assert_eq!(fake_pcw::recorder().unregisters, vec![handle]);
}

fn tuples_wdk(
    d: &[pcw_gen_check::wdk_style_rt::PCW_COUNTER_DESCRIPTOR],
) -> Vec<(u16, u16, u16, u16)> {
    d.iter()
        .map(|d| (d.Id, d.StructIndex, d.Offset, d.Size))
        .collect()
}
