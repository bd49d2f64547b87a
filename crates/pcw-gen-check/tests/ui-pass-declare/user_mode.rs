// A user-mode provider declared in Rust compiles against pcw-um, as the manifest path's code
// does: `start`, typed instances, reference counters.
pcw_declare::counters! {
    #[provider(name = "Contoso Declared Service", user_mode, application_identity = "declared.exe", symbol = DeclaredProvider)]
    pub mod declared_um {
        #[counterset(name = "Declared Totals", description = "All of it", instances = global_aggregate)]
        struct DeclaredTotals {
            #[counter(id = 1, type = perf_counter_rawcount, name = "Level", description = "The level", aggregate = max, reference)]
            level: u32,
            #[counter(id = 2, type = perf_counter_large_rawcount, name = "Count", description = "The count", aggregate = sum)]
            count: u64,
        }
    }
}

fn main() {
    use declared_um::declared_totals as totals;
    assert_eq!(totals::NAME, "Declared Totals");
    let _: fn() -> Result<pcw_um::Provider, pcw_um::Error> = declared_um::start;
    let _ = totals::Instance::create;
    assert_eq!(totals::INFO.counters.len(), 2);
}
