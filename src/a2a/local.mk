# src/a2a
