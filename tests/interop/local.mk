# tests/interop
