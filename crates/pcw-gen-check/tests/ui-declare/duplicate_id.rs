// A declaration error is a compile error at the token it is about: two counters with one id.

pcw_declare::counters! {
    #[provider(name = "Contoso Compile Fail", kernel_mode, application_identity = "cf.sys")]
    pub mod cf {
        #[counterset(name = "Queues", description = "Per queue", instances = multiple)]
        struct Queues {
            #[counter(id = 1, type = perf_counter_rawcount, name = "Depth", description = "Items")]
            depth: u32,
            #[counter(id = 1, type = perf_counter_rawcount, name = "Drops", description = "Dropped")]
            drops: u32,
        }
    }
}

fn main() {}
