# src/http
