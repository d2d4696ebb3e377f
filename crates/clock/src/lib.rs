//! Competition clocks. Pure: time is always passed in by the caller.
