// A declaration error is a compile error at the token it is about: an aggregate in a single-instance counterset.

pcw_declare::counters! {
    #[provider(name = "Contoso Compile Fail", user_mode, symbol = Cf, application_identity = "cf.sys")]
    pub mod cf {
        #[counterset(name = "Totals", description = "One instance", instances = single)]
        struct Totals {
            #[counter(id = 1, type = perf_counter_rawcount, name = "Depth", description = "Items", aggregate = sum)]
            depth: u32,
        }
    }
}

fn main() {}
