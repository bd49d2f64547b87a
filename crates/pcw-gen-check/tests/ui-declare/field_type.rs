// A declaration error is a compile error at the token it is about: a field whose type is not the size of its counter type.

pcw_declare::counters! {
    #[provider(name = "Contoso Compile Fail", kernel_mode, application_identity = "cf.sys")]
    pub mod cf {
        #[counterset(name = "Queues", description = "Per queue", instances = multiple)]
        struct Queues {
            #[counter(id = 1, type = perf_counter_bulk_count, name = "Bytes/sec", description = "Bytes moved")]
            bytes: u32,
        }
    }
}

fn main() {}
