//! Shared by the examples and the end-to-end tests.
