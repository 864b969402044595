# src/service
