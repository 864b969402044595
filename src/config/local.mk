# src/config
