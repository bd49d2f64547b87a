// A declaration error is a compile error at the token it is about: two countersets with one GUID.

pcw_declare::counters! {
    #[provider(name = "Contoso Compile Fail", kernel_mode, application_identity = "cf.sys")]
    pub mod cf {
        #[counterset(name = "Queues", description = "Per queue", guid = "{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}")]
        struct Queues {
            #[counter(id = 1, type = perf_counter_rawcount, name = "Depth", description = "Items")]
            depth: u32,
        }
        #[counterset(name = "Links", description = "Per link", guid = "{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}")]
        struct Links {
            #[counter(id = 1, type = perf_counter_rawcount, name = "Up", description = "Links up")]
            up: u32,
        }
    }
}

fn main() {}
