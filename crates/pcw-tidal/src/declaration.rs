// SPDX-License-Identifier: MIT OR Apache-2.0
//! The service's counters, declared in Rust: `counters!` expands to the module pcw-gen generates
//! for the equivalent manifest, and `build.rs` derives that manifest (`tidal_service.man` in
//! `OUT_DIR`), its string table and the lodctr files from this same file. The shape is that of
//! Microsoft's user-mode counter samples: schema 1.1, `reference` counters, a `perf_raw_base`
//! declared before the `perf_raw_fraction` naming it with `base_id`. No GUID and no `uri` is
//! written: both are derived from the names.

pcw_declare::counters! {
    #[provider(
        name = "TidalService",
        user_mode,
        application_identity = "tidal-service.exe",
        callback = custom,
        symbol = TidalProvider,
    )]
    pub mod tidal_service {
        #[counterset(
            name = "Tidal Harbors",
            description = "Water levels per harbor",
            instances = multiple_aggregate,
        )]
        struct TidalHarbors {
            #[counter(
                id = 1,
                type = perf_counter_rawcount,
                name = "Water Level",
                description = "Current water level in centimetres",
                aggregate = sum,
            )]
            level: u32,
            #[counter(
                id = 2,
                type = perf_counter_large_rawcount,
                name = "Ships Moored",
                description = "Ships currently moored",
                aggregate = max,
            )]
            ships: u64,
        }

        #[counterset(
            name = "Tidal Moon",
            description = "The moon's pull, one instance",
            instances = single,
        )]
        struct TidalMoon {
            #[counter(
                id = 1,
                type = perf_counter_rawcount,
                name = "Pull",
                description = "Gravitational pull, arbitrary units",
                reference,
            )]
            pull: u32,
            #[counter(
                id = 2,
                type = perf_counter_rawcount,
                name = "Phase",
                description = "Phase of the moon, tenths",
                default_scale = 1,
                reference,
            )]
            phase: u32,
            #[counter(
                id = 3,
                type = perf_raw_base,
                name = "Full Pull",
                description = "The pull at full moon, the base of Pull Fraction",
                no_display,
            )]
            full_pull: u32,
            #[counter(
                id = 4,
                type = perf_raw_fraction,
                name = "Pull Fraction",
                description = "Pull as a share of the full-moon pull; counter 3 is its base",
                base_id = 3,
                reference,
            )]
            pull_fraction: u32,
        }
    }
}
