//! pcw-sim: the Windows side of performance counters, played on any host.
