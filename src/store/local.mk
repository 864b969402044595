# src/store
