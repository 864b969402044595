# src/bind
