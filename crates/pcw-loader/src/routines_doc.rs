// SPDX-License-Identifier: MIT OR Apache-2.0
//! `docs/loader-routines.md`, generated from the loader's own tables: every kernel routine it
//! binds ([`ntos::ROUTINES`]), the privileged instructions it emulates ([`ntos::FORMS`]) and the
//! routines it deliberately refuses ([`ntos::REFUSED`]). `tests/routines_doc.rs` fails when the
//! committed file differs from [`markdown`]; `PCW_BLESS=1` rewrites it.

use std::fmt::Write as _;

use crate::ntos::{self, HIGH_LEVEL};

/// Where the generated file lives, from the workspace root.
pub const PATH: &str = "docs/loader-routines.md";

fn irql(level: u8) -> &'static str {
    match level {
        0 => "`PASSIVE_LEVEL`",
        1 => "`APC_LEVEL`",
        2 => "`DISPATCH_LEVEL`",
        HIGH_LEVEL => "any",
        _ => "?",
    }
}

/// A table cell: pipes escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The whole file.
pub fn markdown() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Kernel routines and instructions the loader provides\n\n\
         <!-- Generated from crates/pcw-loader/src/ntos (table.rs, cpu.rs, format.rs, refused.rs) by \
         `PCW_BLESS=1 cargo test -p pcw-loader --test routines_doc`; do not edit. -->\n\n\
         What a driver image run by `crates/pcw-loader` may import and execute. An import the \
         loader does not bind refuses the image with every such import named at once \
         (`N unsupported imports: …`), with the reason for the routines it deliberately lacks. \
         Each routine checks its contract and reports misuse as a violation, which fails the \
         scenario; a call above the routine's highest IRQL is one. The IRQL is kept per thread \
         and is the same value the image's own CR8 reads and writes see. \"Fault injection\" \
         marks the routines `ntos::fail_at` can make fail, as a scenario does at each fallible \
         call of `DriverEntry` in turn.\n\n\
         {} routines bound, {} instruction forms emulated.\n",
        ntos::ROUTINES.len(),
        ntos::FORMS.len() - 1
    );
    let mut concepts: Vec<&str> = Vec::new();
    for r in ntos::ROUTINES {
        if !concepts.contains(&r.concept) {
            concepts.push(r.concept);
        }
    }
    for concept in concepts {
        let _ = writeln!(out, "## {}\n", capitalised(concept));
        out.push_str("| routine | from | highest IRQL | fault injection | contract |\n");
        out.push_str("|---|---|---|---|---|\n");
        for r in ntos::ROUTINES.iter().filter(|r| r.concept == concept) {
            let modules: Vec<String> = r.modules.iter().map(|m| format!("`{m}`")).collect();
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                r.name,
                modules.join(", "),
                irql(r.max_irql),
                if r.fallible { "yes" } else { "" },
                cell(r.contract)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "## printf conventions\n\n`DbgPrint`, `DbgPrintEx`, `vDbgPrintEx…` and the \
         `_vsn(w)printf` family share one formatter: {}\n",
        ntos::PRINTF_CONVENTIONS
    );
    let _ = writeln!(
        out,
        "## Privileged instructions the headers inline\n\n{}\n",
        ntos::WHY
    );
    out.push_str("| instruction | what inlines it | emulation |\n|---|---|---|\n");
    for f in ntos::FORMS {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            cell(f.instruction),
            cell(f.source),
            cell(f.emulation)
        );
    }
    out.push_str(
        "\n## Refused on purpose\n\nRoutines drivers commonly import that the loader does not \
         provide; an image importing one is refused with the reason.\n\n| routine | why |\n\
         |---|---|\n",
    );
    for (name, why) in ntos::REFUSED {
        let _ = writeln!(out, "| `{name}` | {} |", cell(why));
    }
    out
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}
