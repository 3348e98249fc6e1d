#!/usr/bin/env -S node --max-semi-space-size=32
// A young generation of 2 x 32 MB instead of V8's 2 x 16 MB: a check's or request's objects die
// young instead of being promoted, so garbage collection took 6% of a 10,000-monitor engine's main
// thread instead of 15%, and the old generation stopped growing (bench/README.md, bench:checks).
// The benches read these flags from this line and give them to the servers they measure.
import '../dist/main.js';
