// SPDX-License-Identifier: MIT OR Apache-2.0
//! Pool: `ExAllocatePool2`, the older `ExAllocatePoolWithTag` and `ExAllocatePool` (which the
//! WDK's inline `ExAllocatePoolZero` and mingw-w64's headers reach), `ExFreePoolWithTag`,
//! `ExFreePool`. Every block is tracked with its tag, size and pool, so a double free, a free under
//! another tag, a paged block freed at `DISPATCH_LEVEL` and a block left at unload are reported.

use std::ffi::c_void;

use super::irql::{self, APC_LEVEL};
use super::state::{
    Block, PoolBlock, Violation, enter, enter_infallible, tag_text, violation, with,
};

/// `POOL_FLAG_UNINITIALIZED`.
const POOL_FLAG_UNINITIALIZED: u64 = 0x2;
/// `POOL_FLAG_NON_PAGED`.
const POOL_FLAG_NON_PAGED: u64 = 0x40;
/// `POOL_FLAG_NON_PAGED_EXECUTE`.
const POOL_FLAG_NON_PAGED_EXECUTE: u64 = 0x80;
/// `POOL_FLAG_PAGED`.
const POOL_FLAG_PAGED: u64 = 0x100;

pub(super) unsafe extern "win64" fn ex_allocate_pool2(
    flags: u64,
    size: usize,
    tag: u32,
) -> *mut c_void {
    if enter("ExAllocatePool2") {
        return core::ptr::null_mut();
    }
    let kinds = flags & (POOL_FLAG_NON_PAGED | POOL_FLAG_NON_PAGED_EXECUTE | POOL_FLAG_PAGED);
    if kinds.count_ones() != 1 {
        violation(
            "ExAllocatePool2",
            format!("flags {flags:#x} name no single pool type"),
        );
    }
    if kinds == POOL_FLAG_NON_PAGED_EXECUTE {
        violation(
            "ExAllocatePool2",
            "executable non-paged pool (POOL_FLAG_NON_PAGED_EXECUTE)",
        );
    }
    check_tag("ExAllocatePool2", tag);
    if size == 0 {
        return core::ptr::null_mut();
    }
    let paged = kinds == POOL_FLAG_PAGED;
    if paged {
        paged_at("ExAllocatePool2");
    }
    track(size, tag, paged, flags & POOL_FLAG_UNINITIALIZED == 0)
}

/// A tag as the pool routines document it: non-zero, each byte printable ASCII (0x20–0x7E).
fn check_tag(routine: &'static str, tag: u32) {
    if tag == 0 {
        violation(routine, "pool tag 0");
    } else if tag.to_le_bytes().iter().any(|b| !(0x20..=0x7E).contains(b)) {
        violation(
            routine,
            format!("pool tag {tag:#010x} has a byte outside printable ASCII (0x20-0x7E)"),
        );
    }
}

/// Paged pool is touched only at or below `APC_LEVEL`.
fn paged_at(routine: &'static str) {
    if irql::current() > APC_LEVEL {
        violation(
            routine,
            format!("paged pool at {}", irql::name(irql::current())),
        );
    }
}

/// A new tracked block: zeroed, or filled with 0xCD so that reads of uninitialised pool show
/// up as garbage, as they would on Windows.
fn track(size: usize, tag: u32, paged: bool, zeroed: bool) -> *mut c_void {
    let block = Block::zeroed(size);
    if !zeroed {
        // SAFETY: the block holds `size` bytes.
        unsafe { core::ptr::write_bytes(block.ptr(), 0xCD, size) };
    }
    let ptr = block.ptr();
    with(|s| {
        s.pool.insert(
            ptr as usize,
            PoolBlock {
                _memory: block,
                size,
                tag,
                paged,
            },
        )
    });
    ptr.cast()
}

/// `POOL_TYPE`'s base types (the low bits), and its modifiers.
const PAGED_POOL: u32 = 1;
const MUST_SUCCEED: u32 = 2;
const CACHE_ALIGNED: u32 = 4;
const SESSION: u32 = 32;
const POOL_QUOTA_FAIL_INSTEAD_OF_RAISE: u32 = 8;
const POOL_RAISE_IF_ALLOCATION_FAILURE: u32 = 0x10;
const POOL_COLD_ALLOCATION: u32 = 0x100;
const POOL_NX_ALLOCATION: u32 = 0x200;
const POOL_ZERO_ALLOCATION: u32 = 0x400;

/// `ExAllocatePoolWithTag` and `ExAllocatePool`: the pool type checked, `POOL_ZERO_ALLOCATION`
/// honoured (the WDK's `ExAllocatePoolZero` passes it), `POOL_RAISE_IF_ALLOCATION_FAILURE`
/// never failed by fault injection (the exception it raises instead cannot be delivered).
fn allocate_with_tag(routine: &'static str, pool_type: u32, size: usize, tag: u32) -> *mut c_void {
    if pool_type & POOL_RAISE_IF_ALLOCATION_FAILURE != 0 {
        enter_infallible(routine);
    } else if enter(routine) {
        return core::ptr::null_mut();
    }
    let modifiers = POOL_QUOTA_FAIL_INSTEAD_OF_RAISE
        | POOL_RAISE_IF_ALLOCATION_FAILURE
        | POOL_COLD_ALLOCATION
        | POOL_ZERO_ALLOCATION;
    let base = pool_type & !modifiers;
    let paged = base & PAGED_POOL != 0;
    if base & !(PAGED_POOL | MUST_SUCCEED | CACHE_ALIGNED | SESSION | POOL_NX_ALLOCATION) != 0 {
        violation(
            routine,
            format!("pool type {pool_type:#x} is not a POOL_TYPE"),
        );
    } else if base & MUST_SUCCEED != 0 {
        violation(
            routine,
            format!("must-succeed pool type {pool_type:#x} (a bugcheck since Windows 8)"),
        );
    } else if base & SESSION != 0 {
        violation(
            routine,
            format!("session pool type {pool_type:#x} in a driver that is not a session driver"),
        );
    } else if !paged && base & POOL_NX_ALLOCATION == 0 {
        violation(
            routine,
            format!(
                "executable non-paged pool (pool type {pool_type:#x}; NonPagedPoolNx is 0x200)"
            ),
        );
    }
    if paged {
        paged_at(routine);
    }
    check_tag(routine, tag);
    if size == 0 {
        violation(
            routine,
            "a zero-byte allocation (Driver Verifier flags these)",
        );
    }
    track(
        size.max(1),
        tag,
        paged,
        pool_type & POOL_ZERO_ALLOCATION != 0,
    )
}

pub(super) unsafe extern "win64" fn ex_allocate_pool_with_tag(
    pool_type: u32,
    size: usize,
    tag: u32,
) -> *mut c_void {
    allocate_with_tag("ExAllocatePoolWithTag", pool_type, size, tag)
}

/// `ExAllocatePool`: `ExAllocatePoolWithTag` with the tag `None`, as Windows tags it.
pub(super) unsafe extern "win64" fn ex_allocate_pool(pool_type: u32, size: usize) -> *mut c_void {
    allocate_with_tag(
        "ExAllocatePool",
        pool_type,
        size,
        u32::from_le_bytes(*b"None"),
    )
}

pub(super) unsafe extern "win64" fn ex_free_pool_with_tag(ptr: *mut c_void, tag: u32) {
    free_pool("ExFreePoolWithTag", ptr, Some(tag));
}

/// `ExFreePool`: what wdk-alloc (the WDK build's allocator) frees with; no tag to check.
pub(super) unsafe extern "win64" fn ex_free_pool(ptr: *mut c_void) {
    free_pool("ExFreePool", ptr, None);
}

/// Frees a pool block for `routine`; with `tag`, a block allocated under another tag is a
/// violation.
fn free_pool(routine: &'static str, ptr: *mut c_void, tag: Option<u32>) {
    enter(routine);
    let removed = with(|s| {
        let found = s.pool.remove(&(ptr as usize));
        if let Some(block) = &found
            && block.paged
            && irql::current() > APC_LEVEL
        {
            s.violations.push(Violation {
                routine,
                what: format!(
                    "paged block {ptr:p} freed at {}",
                    irql::name(irql::current())
                ),
            });
        }
        if let Some(block) = &found
            && let Some(tag) = tag
            && block.tag != tag
        {
            s.violations.push(Violation {
                routine,
                what: format!(
                    "block {ptr:p} allocated with tag `{}` freed with tag `{}`",
                    tag_text(block.tag),
                    tag_text(tag)
                ),
            });
        }
        found
    });
    if removed.is_none() {
        violation(
            routine,
            format!("{ptr:p} is not an allocated pool block (double free or foreign pointer)"),
        );
    }
}
