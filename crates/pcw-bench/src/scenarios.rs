// SPDX-License-Identifier: MIT OR Apache-2.0
//! Every benchmark scenario (BENCHMARKS.md) as a list of labelled cases, shared by the criterion
//! benches and the callgrind driver so both measure exactly the same calls. A case's label is
//! `<scenario>/<variant>/<N>/<side>`; its `units` is what per-unit figures divide by (instances for
//! a collection, 1 for a single match or a single-id query).

use std::rc::Rc;

use pcw_core::snapshot::{Snapshot, SnapshotError};

use crate::c::UmCRefs;
use crate::device::{self, CBuffers, SnapshotBuf};
use crate::snap::{self, NameLength, SnapshotData};
use crate::um::{self, CProvider};
use crate::v1::{self, V1Object, bytes_mut, out_buffer};
use crate::waves::{self, ADVERSARIAL, Call, Names, Population, Query};
use crate::{c, noop_block, utf16};

/// Steps the naive C matcher may take per name before it gives up.
pub const C_MATCH_CAP: u64 = 100_000;

/// Largest N for the long-name (1000-unit) scenarios: the naive C matcher runs to its cap on
/// every name, which is slow under callgrind.
pub const LONG_SIZES: [usize; 2] = [1, 100];

/// One measured call.
pub struct Case {
    /// `<scenario>/<variant>/<N>/<side>`.
    pub label: String,
    /// What per-unit figures divide by.
    pub units: usize,
    /// The call; returns a value the caller black-boxes.
    pub run: Box<dyn FnMut() -> u64>,
    /// Whether one call is very expensive (the naive matcher running to its cap on every
    /// name): the callgrind driver then repeats it only a few times.
    pub heavy: bool,
}

impl Case {
    fn new(label: String, units: usize, run: impl FnMut() -> u64 + 'static) -> Self {
        Self {
            label,
            units,
            run: Box::new(run),
            heavy: false,
        }
    }

    fn heavy(mut self, heavy: bool) -> Self {
        self.heavy = heavy;
        self
    }
}

fn status(s: i32) -> u64 {
    u64::from(s.cast_unsigned())
}

/// The driver's own callback over its own registry (the 3 waves `DriverEntry` installs), loaded
/// against the no-op PCW: the host build's side of the shipped-image comparison (the image's
/// side is `pcw-loader`'s `pcw-image-cg`, same request, same 3 instances); the same entry point
/// over the 64 waves the driver's benchmark build installs (`bench-waves`: the waves of
/// `WAVES`, then `bench_wave`'s, in a registry of the bench's own, frozen), the image's other
/// side, so that both builds' cost per instance is measured apart from their cost per call; and
/// the KCS-style C callback over 3 instances, full request, as a third column.
pub fn driver_cases() -> Vec<Case> {
    pcw_driver::lifecycle::unload();
    if pcw_driver::lifecycle::load().is_err() {
        return Vec::new();
    }
    let population = Population::new(3, Names::Short);
    let c_call = Call::new(&Query::Full, 1);
    let c_case = Case::new("callback/driver/3/c".to_owned(), 3, move || {
        population.install_c();
        status(waves::collect_c(&c_call))
    });
    // SAFETY: visited only while the driver is loaded (its waves frozen; this function loads
    // it, above, and nothing here unloads it).
    let shipped = unsafe { pcw_driver::waves::publisher() };
    // The waves `DriverEntry` installed, counted rather than assumed: a build of the driver
    // with its `bench-waves` feature (which cargo's feature unification could bring in) has 64.
    let installed = pcw_driver::waves::REGISTRY.read(|v| v.iter().count());
    vec![
        c_case,
        driver_host_case(installed, shipped),
        driver_host_case(pcw_driver::waves::BENCH_WAVES, bench_waves_publisher()),
    ]
}

/// A publisher over the waves the driver's `bench-waves` build installs, in the order it
/// installs them, frozen for good (leaked: the cases live as long as the process).
fn bench_waves_publisher() -> &'static pcw_driver::waves::Waves<'static> {
    use pcw_driver::waves::{BENCH_WAVES, WAVES, Waves, bench_wave};
    let registry = Box::leak(Box::new(pcw_core::registry::Registry::new(BENCH_WAVES)));
    for (name, wave) in WAVES {
        registry.insert(&utf16(name), wave).expect("a shipped wave");
    }
    for i in 0..BENCH_WAVES - WAVES.len() {
        let (name, wave) = bench_wave(i);
        registry.insert(&name, wave).expect("a benchmark wave");
    }
    registry.freeze();
    // SAFETY: the registry is frozen and never thawed.
    Box::leak(Box::new(unsafe { Waves::new(registry) }))
}

/// `callback/driver/N/host`: the entry point the driver registers for its waves, over
/// `publisher` (`n` waves, frozen while the case lives), full request.
fn driver_host_case(n: usize, publisher: &'static pcw_driver::waves::Waves<'static>) -> Case {
    let call = Call::new(&Query::Full, 1);
    Case::new(format!("callback/driver/{n}/host"), n, move || {
        // The entry point the driver registers, called as PCW calls it and as the image's is
        // called: through a pointer, so that it is measured as compiled, its test of a NULL
        // context included, not inlined into this closure with the context known.
        let callback: unsafe extern "system" fn(
            pcw_driver::ffi::PCW_CALLBACK_TYPE,
            *const pcw_driver::ffi::PCW_CALLBACK_INFORMATION,
            *const core::ffi::c_void,
        ) -> pcw_driver::ffi::NTSTATUS = core::hint::black_box(
            pcw_driver::ffi::callback::<
                pcw_driver::countersets::pcw_driver::geometric_waves::Set,
                pcw_driver::waves::Waves<'static>,
            >,
        );
        // SAFETY: a valid CollectData block, as PCW passes it (the no-op PCW ignores the
        // buffer), and a publisher over a frozen registry, as the driver registers its own.
        status(unsafe {
            callback(
                pcw_driver::ffi::PcwCallbackCollectData,
                call.info(),
                core::ptr::from_ref(publisher).cast(),
            )
        })
    })
}

/// The callback cases over `sizes`, for a binary whose PCW ignores the buffer handle.
pub fn callback_cases(sizes: &[usize]) -> Vec<Case> {
    // SAFETY: a plain store of a configuration value in the C baseline.
    unsafe { c::kcs_set_match_cap(C_MATCH_CAP) };
    let mut cases = Vec::new();
    for &n in sizes {
        let population = Rc::new(Population::new(n, Names::Short));
        let middle = population.ids[n / 2];
        let queries = [
            ("full", Query::Full, n),
            ("id", Query::Id(middle), 1),
            ("mask-Large*", Query::Mask("Large*".into()), n),
            ("mask-*", Query::Mask("*".into()), n),
            ("mask-?mall*", Query::Mask("?mall*".into()), n),
            ("countermask-one", Query::OneCounter, n),
        ];
        for (variant, query, units) in queries {
            push_pair(&mut cases, &population, variant, &query, n, units);
        }
    }
    for names in [Names::LongA, Names::LongScan] {
        for &n in LONG_SIZES.iter().filter(|n| sizes.contains(n)) {
            let population = Rc::new(Population::new(n, names));
            for (mask, tag) in [(ADVERSARIAL, "adversarial"), ("*", "*")] {
                let variant = format!("mask-{tag}-{}", names.label());
                push_pair(
                    &mut cases,
                    &population,
                    &variant,
                    &Query::Mask(mask.into()),
                    n,
                    n,
                );
            }
        }
    }
    cases
}

fn push_pair(
    cases: &mut Vec<Case>,
    population: &Rc<Population>,
    variant: &str,
    query: &Query,
    n: usize,
    units: usize,
) {
    let call = Rc::new(Call::new(query, 1));
    let (p, q) = (Rc::clone(population), Rc::clone(&call));
    cases.push(Case::new(
        format!("callback/{variant}/{n}/ours"),
        units,
        move || status(waves::collect_ours(&p, &q)),
    ));
    let p = Rc::clone(population);
    let heavy = variant.starts_with("mask-adversarial-long-a");
    cases.push(
        Case::new(format!("callback/{variant}/{n}/c"), units, move || {
            p.install_c();
            status(waves::collect_c(&call))
        })
        .heavy(heavy),
    );
}

/// The matcher-level cases: one 1000-unit name against the adversarial mask and against `*`.
pub fn match_cases() -> Vec<Case> {
    // SAFETY: a plain store of a configuration value in the C baseline.
    unsafe { c::kcs_set_match_cap(C_MATCH_CAP) };
    let mut cases = Vec::new();
    for names in [Names::LongA, Names::LongScan] {
        for (mask, tag) in [(ADVERSARIAL, "adversarial"), ("*", "*")] {
            let name = Rc::new(names.name(7));
            let mask = Rc::new(utf16(mask));
            let (m, n) = (Rc::clone(&mask), Rc::clone(&name));
            cases.push(Case::new(
                format!("match/{tag}-{}/1/ours", names.label()),
                1,
                move || u64::from(waves::match_ours(&m, &n)),
            ));
            let heavy = tag == "adversarial" && names == Names::LongA;
            cases.push(
                Case::new(format!("match/{tag}-{}/1/c", names.label()), 1, move || {
                    u64::from(waves::match_c(&mask, &name))
                })
                .heavy(heavy),
            );
        }
    }
    cases
}

/// The V1 collect cases: pcw-core's `collect` over the DLL's source (a parsed snapshot read in
/// place: `ours`) and over fixed data (`ours-desc`), the PerfGen-style C, and `memcpy` of the
/// output.
///
/// # Panics
/// If pcw-core's and the C baseline's outputs differ in length (a bench bug).
pub fn v1_cases(sizes: &[usize]) -> Vec<Case> {
    let mut cases = Vec::new();
    for &n in sizes {
        let object: &'static V1Object = Box::leak(Box::new(V1Object::new(n)));
        let instances: &'static [_] = Box::leak(object.instances().into_boxed_slice());
        let desc = object.desc(instances);
        let snapshot = leak_snapshot(object);
        let set_object = object.set_object(&snapshot);
        let pg = object.pg();
        let mut probe = out_buffer(1024 + n * 128);
        let outcome = v1::collect_ours(&set_object, bytes_mut(&mut probe));
        let len = outcome.bytes();
        assert!(len > 0, "pcw-core collect: {outcome:?}");
        assert_eq!(len, v1::collect_desc(&desc, bytes_mut(&mut probe)).bytes());
        assert_eq!(len, v1::collect_c(&pg, bytes_mut(&mut probe)));
        let src = bytes_mut(&mut probe)[..len].to_vec();
        let mut out = out_buffer(len);
        cases.push(Case::new(format!("v1/collect/{n}/ours"), n, move || {
            v1::collect_ours(&set_object, bytes_mut(&mut out)).bytes() as u64
        }));
        let mut out = out_buffer(len);
        cases.push(Case::new(
            format!("v1/collect/{n}/ours-desc"),
            n,
            move || v1::collect_desc(&desc, bytes_mut(&mut out)).bytes() as u64,
        ));
        let mut out = out_buffer(len);
        cases.push(Case::new(format!("v1/collect/{n}/c"), n, move || {
            v1::collect_c(&pg, bytes_mut(&mut out)) as u64
        }));
        let mut out = out_buffer(len);
        cases.push(Case::new(format!("v1/collect/{n}/memcpy"), n, move || {
            v1::copy(bytes_mut(&mut out), &src);
            len as u64
        }));
    }
    cases
}

/// `object`'s snapshot, parsed, in a buffer that lives as long as the process.
fn leak_snapshot(object: &V1Object) -> Snapshot<'static> {
    let mut words = out_buffer(64);
    let len = match object.encode_snapshot(bytes_mut(&mut words)) {
        Ok(len) => len,
        Err(SnapshotError::NoSpace { needed }) => {
            words = out_buffer(needed);
            object
                .encode_snapshot(bytes_mut(&mut words))
                .expect("encodes")
        }
        Err(e) => panic!("snapshot: {e}"),
    };
    let words: &'static [u64] = Box::leak(words.into_boxed_slice());
    Snapshot::parse(v1::bytes_of(words, len)).expect("parses")
}

/// The device-path cases (driver snapshot + DLL parse + V1 write, [`crate::device`]): ours, the
/// C baseline, and `memcpy` of the V1 output, for each [`NameLength`] (variant `path`,
/// `path-short`, `path-long`).
///
/// # Panics
/// If the two sides' outputs differ in length (a bench bug).
pub fn device_cases(sizes: &[usize]) -> Vec<Case> {
    let mut cases = Vec::new();
    for names in NameLength::ALL {
        let variant = format!("path{}", names.suffix());
        for &n in sizes {
            let object = Rc::new(V1Object::with_names(n, names));
            let mut snap = SnapshotBuf::default();
            let mut probe = out_buffer(1024 + n * 256);
            let len = device::path_ours(&object, &mut snap, bytes_mut(&mut probe));
            assert!(len > 0, "device path");
            let src = bytes_mut(&mut probe)[..len].to_vec();
            let mut buffers = CBuffers::new(&object);
            assert_eq!(
                len,
                device::path_c(&object, &mut buffers, bytes_mut(&mut probe))
            );
            let (o, mut out) = (Rc::clone(&object), out_buffer(len));
            cases.push(Case::new(
                format!("device/{variant}/{n}/ours"),
                n,
                move || device::path_ours(&o, &mut snap, bytes_mut(&mut out)) as u64,
            ));
            let (o, mut out) = (Rc::clone(&object), out_buffer(len));
            cases.push(Case::new(format!("device/{variant}/{n}/c"), n, move || {
                device::path_c(&o, &mut buffers, bytes_mut(&mut out)) as u64
            }));
            if matches!(names, NameLength::Queue) {
                let o = Rc::clone(&object);
                let mut buf = out_buffer(1024 + n * 256);
                assert!(device::in_place_floor(&o, &mut buf) > 0, "in-place floor");
                cases.push(Case::new(
                    format!("device/in-place/{n}/ours"),
                    n,
                    move || device::in_place_floor(&o, &mut buf) as u64,
                ));
            }
            let mut out = out_buffer(len);
            cases.push(Case::new(
                format!("device/{variant}/{n}/memcpy"),
                n,
                move || {
                    v1::copy(bytes_mut(&mut out), &src);
                    len as u64
                },
            ));
        }
    }
    cases
}

/// The snapshot cases: encode and decode, each with `memcpy` of the snapshot's bytes, for each
/// [`NameLength`] (variants `encode`, `encode-short`, `encode-long`, and so on).
///
/// # Panics
/// If the snapshot cannot be encoded (a bench bug).
pub fn snapshot_cases(sizes: &[usize]) -> Vec<Case> {
    let mut cases = Vec::new();
    for names in NameLength::ALL {
        let suffix = names.suffix();
        for &n in sizes {
            let data = Rc::new(SnapshotData::with_names(n, names));
            let len = data.len();
            let mut encoded = out_buffer(len);
            data.encode(bytes_mut(&mut encoded)).expect("encodes");
            let encoded: Rc<[u8]> = Rc::from(&bytes_mut(&mut encoded)[..len]);
            let mut out = out_buffer(len);
            let d = Rc::clone(&data);
            cases.push(Case::new(
                format!("snapshot/encode{suffix}/{n}/ours"),
                n,
                move || d.encode(bytes_mut(&mut out)).unwrap_or(0) as u64,
            ));
            let e = Rc::clone(&encoded);
            cases.push(Case::new(
                format!("snapshot/decode{suffix}/{n}/ours"),
                n,
                move || snap::decode(&e).unwrap_or(0),
            ));
            let mut out = out_buffer(len);
            cases.push(Case::new(
                format!("snapshot/memcpy{suffix}/{n}/memcpy"),
                n,
                move || {
                    v1::copy(bytes_mut(&mut out), &encoded);
                    len as u64
                },
            ));
        }
    }
    cases
}

/// The user-mode provider cases, against the stand-in Perflib of [`crate::noop_perflib!`]: three
/// counter updates (Depth set, Bytes set, Packets + 1) by pcw-um's checked setters and by the C
/// baseline's Perflib calls (`units` 3: per update); the same three
/// as the C baseline's direct stores into the block; the reference counter's store (pcw-um's
/// atomic, fetched once or looked up by id each time, and the C structure's field); one
/// instance made and deleted by each side.
///
/// # Panics
/// If the stand-in Perflib refuses (it does not).
pub fn um_cases() -> Vec<Case> {
    let provider: &'static pcw_um::Provider = Box::leak(Box::new(um::start()));
    let instance: &'static pcw_um::Instance<'static> =
        Box::leak(Box::new(um::instances(provider, 1).remove(0)));
    let c: &'static CProvider = Box::leak(Box::new(CProvider::start(1)));
    let c_instance = c.instances[0].0;
    let level = instance.reference_u32(um::ids::LEVEL).expect("Level");
    let mut refs = Box::<UmCRefs>::default();
    let mut value = 0u32;
    let mut next = move || {
        value = value.wrapping_add(1);
        value
    };
    let name = um::name(7);
    let wide: Vec<u16> = utf16(&name).into_iter().chain([0]).collect();
    let mut direct = next;
    let mut c_next = next;
    let mut store = next;
    let mut lookup = next;
    let mut c_store = next;
    vec![
        Case::new("um/update/1/ours".to_owned(), 3, move || {
            let v = next();
            u64::from(um::update_ours(instance, v, u64::from(v) << 3))
        }),
        Case::new("um/update/1/c".to_owned(), 3, move || {
            let v = c_next();
            // SAFETY: the C provider's live handle and one of its instances.
            u64::from(unsafe { um::update_c(c.handle(), c_instance, v, u64::from(v) << 3) })
        }),
        Case::new("um/update/1/c-direct".to_owned(), 3, move || {
            let v = direct();
            // SAFETY: the stand-in Perflib's block, which has room for the counter data.
            unsafe { um::update_c_direct(noop_block(), v, u64::from(v) << 3) };
            u64::from(v)
        }),
        Case::new("um/store/1/ours".to_owned(), 1, move || {
            let v = store();
            um::store_ours(level, v);
            u64::from(v)
        }),
        Case::new("um/store/1/lookup".to_owned(), 1, move || {
            let v = lookup();
            u64::from(um::store_looked_up(instance, v))
        }),
        Case::new("um/store/1/c".to_owned(), 1, move || {
            let v = c_store();
            um::store_c(&mut refs, v);
            u64::from(v)
        }),
        Case::new("um/create-delete/1/ours".to_owned(), 1, move || {
            u64::from(um::create_delete_ours(provider, &name, 7))
        }),
        Case::new("um/create-delete/1/c".to_owned(), 1, move || {
            let mut refs = UmCRefs::default();
            u64::from(c.create_delete(&wide, 7, &mut refs))
        }),
    ]
}
