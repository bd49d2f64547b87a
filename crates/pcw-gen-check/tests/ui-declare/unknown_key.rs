// A declaration error is a compile error at the token it is about: a key the declaration does not have.

pcw_declare::counters! {
    #[provider(name = "Contoso Compile Fail", kernel_mode, application_identity = "cf.sys")]
    pub mod cf {
        #[counterset(name = "Queues", description = "Per queue", instances = multiple)]
        struct Queues {
            #[counter(id = 1, type = perf_counter_rawcount, name = "Depth", desc = "Items")]
            depth: u32,
        }
    }
}

fn main() {}
