// A declaration error is a compile error at the token it is about: a base counter no counter names.

pcw_declare::counters! {
    #[provider(name = "Contoso Compile Fail", kernel_mode, application_identity = "cf.sys")]
    pub mod cf {
        #[counterset(name = "Queues", description = "Per queue", instances = multiple)]
        struct Queues {
            #[counter(id = 1, type = perf_counter_rawcount, name = "Depth", description = "Items")]
            depth: u32,
            #[counter(id = 2, type = perf_raw_base, no_display)]
            capacity: u32,
        }
    }
}

fn main() {}
