//! Team league logic. Pure: no IO, no async, no system clock.
