// A declaration error is a compile error at the token it is about: a provider that is neither kernel_mode nor user_mode.

pcw_declare::counters! {
    #[provider(name = "Contoso Compile Fail", application_identity = "cf.sys")]
    pub mod cf {
        #[counterset(name = "Queues", description = "Per queue", instances = multiple)]
        struct Queues {
            #[counter(id = 1, type = perf_counter_rawcount, name = "Depth", description = "Items")]
            depth: u32,
        }
    }
}

fn main() {}
