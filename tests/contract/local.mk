# tests/contract
