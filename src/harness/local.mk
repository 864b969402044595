# src/harness
