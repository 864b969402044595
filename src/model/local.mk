# src/model
