//! Procedural macros for saga. Users depend on `saga-runtime`, which re-exports these.
