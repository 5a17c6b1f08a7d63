"""The fault campaign (benchmarks/faults.md): power cuts at every byte of the log, footage
cut short, a full or read-only disk, SIGTERM, the wall clock jumping and broken files."""
